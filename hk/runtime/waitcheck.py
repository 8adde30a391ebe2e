"""The wait gate: a walk of a code object's disassembly for reads of registers still loading,
and for LDS bytes touched while a global->LDS copy still writes them across a barrier.

Memory operations are tracked on the counters that count them, as each target completes them:
vector memory in order on vmcnt (gfx9: loads, stores and global->LDS copies on the one counter;
gfx10/11: stores on vscnt; gfx12: loadcnt and storecnt); LDS reads and writes in order on
lgkmcnt or dscnt;
scalar memory out of order (complete only when the counter reaches 0). Any instruction that
names a register a pending load will write is a finding.

An asynchronous global->LDS copy (CDNA) counts on vmcnt, and a barrier does not wait for it.
Keeping one in flight across a barrier is how a pipelined loop double-buffers (the next tile's
copy lands in one buffer while the waves read the other); reading its bytes after that barrier
is the CDNA4 trap. So a copy that crosses a barrier in flight is a finding only when an LDS
access after the barrier may touch the bytes it writes: before a wait retires it (any wave),
and after that until the next barrier (another wave, which has no wait of its own for it).
Where the copy lands (M0 and its offset) and where each ds_* instruction reads or writes (its
address VGPR and offsets) come from hk.runtime.ldsaddr, which follows the registers' values:
an access that provably touches the copy's bytes is an error, one that provably does not is
nothing, and one the walk cannot place (an address not known, or known only up to values that
do not cancel) is a warning that leaves the decision to the emulator (hk.emu checks the bytes
on a run). A copy's findings are one, naming the barriers it crosses and the accesses.

The walk follows the control-flow graph to a fixed point, merging what is pending along
every path, so a load issued at the bottom of a loop iteration and used at the top of the next
is seen (every loop is walked at least twice).
"""

import dataclasses
import re
import subprocess

from hk.runtime import ldsaddr
from hk.runtime import objdump as objdump_flags

_LINE = re.compile(r"^\s+(?P<asm>[a-z_][^/]*?)\s*//\s*(?P<addr>[0-9A-Fa-f]+):(?P<rest>.*)$")
_SYMBOL = re.compile(r"^(?P<addr>[0-9a-fA-F]+) <(?P<name>[^>]+)>:$")
_TARGET = re.compile(r"<(?P<sym>[^+>]+)(?:\+0x(?P<off>[0-9a-fA-F]+))?>")
_REG = re.compile(r"\b(?P<kind>[vsa])(?:(?P<one>\d+)\b|\[(?P<lo>\d+):(?P<hi>\d+)\])")
_COUNT = re.compile(r"(vmcnt|lgkmcnt|expcnt|vscnt)\((\d+)\)")
# Families by their counters: gfx9 counts stores on vmcnt, gfx10/11 on vscnt, gfx12 on storecnt.
_STORES_ON_VMCNT = ("gfx9",)


@dataclasses.dataclass(frozen=True)
class Instruction:
    addr: int
    text: str
    mnemonic: str
    operands: str
    target: int = None


@dataclasses.dataclass(frozen=True)
class Finding:
    """A register read while a load still writes it (kind "read": at `addr`, of `register`, the
    load at `issued_at`), or a global->LDS copy whose bytes an LDS access after a barrier it
    crosses in flight may touch (kind "barrier": the copy at `addr`, the barriers it crosses,
    the accesses at (address, text) and, for a warning, why the walk cannot tell)."""

    kernel: str
    addr: int
    text: str
    register: str = ""
    issued_at: int = 0
    issued: str = ""
    kind: str = "read"
    severity: str = "error"
    barriers: tuple = ()
    accesses: tuple = ()
    why: str = ""

    def __str__(self):
        if self.kind == "barrier":
            return self._barrier()
        return ("kernel %s at 0x%x: %s: uses %s while the load issued at 0x%x (%s) is still writing it"
                % (self.kernel, self.addr, self.text, self.register, self.issued_at, self.issued))

    def _barrier(self):
        shown = ", ".join("0x%x" % b for b in self.barriers[:_SHOWN])
        if len(self.barriers) > _SHOWN:
            shown += " and %d more" % (len(self.barriers) - _SHOWN)
        crosses = "%d barrier%s (s_barrier at %s)" % (len(self.barriers), "" if len(self.barriers) == 1 else "s", shown)
        first_at, first = self.accesses[0]
        access = "the LDS access at 0x%x (%s)" % (first_at, first)
        if len(self.accesses) > 1:
            access += " and %d more" % (len(self.accesses) - 1)
        head = "kernel %s at 0x%x: %s: the global->LDS copy is still in flight on vmcnt across %s" % (
            self.kernel, self.addr, self.text, crosses)
        if self.severity == "error":
            return ("%s, and %s after them touches the LDS bytes it writes; the copy's own wave "
                    "must wait for it (vmcnt), and meet the other waves at a barrier after that wait, "
                    "before the access" % (head, access))
        return ("warning: %s, and cocheck cannot tell whether %s after them touches the LDS bytes "
                "it writes (%s); the emulator decides exactly on a run (HK_DEVICE=emu, or "
                "hk.emu.launch: it reports an access to LDS a copy still writes)" % (head, access, self.why))


_SHOWN = 4  # barriers named in a finding before "and N more"


def disassemble(objdump, path, arch=None):
    """{kernel name: [Instruction]} from llvm-objdump (gfx11/gfx12 in true16 form)."""
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn"] + objdump_flags.features(arch) + [path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if out.returncode != 0:
        raise RuntimeError("llvm-objdump failed on %s: %s" % (path, out.stderr.strip()))
    functions, symbols, current = {}, {}, None
    for line in out.stdout.splitlines():
        m = _SYMBOL.match(line)
        if m:
            current = m.group("name")
            symbols[current] = int(m.group("addr"), 16)
            functions[current] = []
            continue
        m = _LINE.match(line)
        if not m or current is None:
            continue
        asm = m.group("asm").strip()
        mnemonic, _, operands = asm.partition(" ")
        target = None
        t = _TARGET.search(m.group("rest"))
        if t and (mnemonic.startswith("s_cbranch") or mnemonic == "s_branch"):
            target = symbols.get(t.group("sym"), 0) + int(t.group("off") or "0", 16)
        functions[current].append(Instruction(int(m.group("addr"), 16), asm, mnemonic,
                                              operands.strip(), target))
    return {k: v for k, v in functions.items() if v}


def registers(operands):
    """The register names (v3, a7, s2, ...) an operand list mentions."""
    regs = []
    for m in _REG.finditer(operands):
        if m.group("one") is not None:
            regs.append("%s%s" % (m.group("kind"), m.group("one")))
        else:
            regs.extend("%s%d" % (m.group("kind"), i) for i in range(int(m.group("lo")), int(m.group("hi")) + 1))
    return regs


def _first_operand(operands):
    return operands.split(",")[0] if operands else ""


def classify(inst, arch=None):
    """(counter, kind) of a memory operation the instruction issues, or None. Counters: vm, vs
    (vscnt/storecnt), lds, smem; kinds: load (writes its first operand), lds_dma, store."""
    m = inst.mnemonic
    if m.startswith(("global_load", "buffer_load", "flat_load", "scratch_load")):
        if "lds" in m or re.search(r"\blds\b", inst.operands):
            return "vm", "lds_dma"
        return "vm", "load"
    vector_store = m.startswith(("global_store", "buffer_store", "flat_store", "scratch_store"))
    if m.startswith(("global_atomic", "buffer_atomic", "flat_atomic")):
        if re.search(r"\b(glc|sc0|th:TH_ATOMIC_RETURN)\b", inst.operands):
            return "vm", "load"
        vector_store = True
    if vector_store:
        return ("vm" if arch and arch.startswith(_STORES_ON_VMCNT) else "vs"), "store"
    if m.startswith(("ds_read", "ds_load", "ds_bpermute", "ds_permute", "ds_swizzle")) or \
            (m.startswith("ds_") and "_rtn" in m):
        return "lds", "load"
    if m.startswith("ds_"):
        # Writes and atomics without a return count on the same in-order counter: a wait for
        # fewer than them in flight covers the older loads.
        return "lds", "store"
    if m.startswith(("s_load", "s_buffer_load")):
        return "smem", "load"
    return None


class _Op:
    """A memory operation in flight: the registers it will write, how many operations younger
    than it its counter has in flight (the fewest on any path that reaches here: a wait for N
    retires it only when at least N are younger on every path); for a global->LDS copy, where
    it may land (a set of ldsaddr.Dest, one per path) and the barriers it crossed in flight."""

    __slots__ = ("inst", "regs", "kind", "younger", "dests", "barriers")

    def __init__(self, inst, regs, kind, younger=0, dests=frozenset(), barriers=frozenset()):
        self.inst, self.regs, self.kind, self.younger = inst, regs, kind, younger
        self.dests, self.barriers = dests, barriers

    def but(self, **changes):
        fields = {k: getattr(self, k) for k in self.__slots__}
        fields.update(changes)
        return _Op(**fields)

    def joined(self, other):
        return self.but(younger=min(self.younger, other.younger),
                        dests=_dests_union(self.dests, other.dests), barriers=self.barriers | other.barriers)

    def key(self):
        return (self.inst.addr, self.younger, self.dests, self.barriers)


_MAX_DESTS = 8


def _dests_union(a, b):
    out = a | b
    return out if len(out) <= _MAX_DESTS else frozenset([ldsaddr.UNKNOWN_DEST])


class _State:
    def __init__(self, regs=None):
        # counter -> [_Op], oldest first.
        self.pending = {"vm": [], "vs": [], "lds": [], "smem": []}
        # Copies a wait retired after they crossed a barrier in flight, until the next barrier:
        # the issuing wave has them, another wave may not yet (copy address -> _Op).
        self.landing = {}
        self.regs = regs  # ldsaddr.Regs; None when the kernel issues no global->LDS copy

    def copy(self):
        s = _State(self.regs.copy() if self.regs is not None else None)
        s.pending = {k: list(v) for k, v in self.pending.items()}
        s.landing = dict(self.landing)
        return s

    def issue(self, counter, op):
        q = [o.but(younger=o.younger + 1) for o in self.pending[counter]] + [op]
        self.pending[counter] = q[-_MAX_QUEUE:]

    def retire(self, counter, keep):
        if counter == "smem":
            if keep == 0:
                self.pending["smem"] = []
            return
        kept = []
        for op in self.pending[counter]:
            if op.younger < keep:
                kept.append(op)
            elif op.kind == "lds_dma" and op.barriers:
                old = self.landing.get(op.inst.addr)
                self.landing[op.inst.addr] = old.joined(op) if old else op
        self.pending[counter] = kept

    def barrier(self, inst):
        self.landing = {}
        self.pending["vm"] = [op.but(barriers=op.barriers | {inst.addr}) if op.kind == "lds_dma" else op
                              for op in self.pending["vm"]]

    def forget(self, symbol):
        """A symbol's defining instruction ran again: what was built on it is no longer known."""
        self.regs.forget(symbol)

        def clean(op):
            if not any(any(a == symbol for a, _ in d.atoms) for d in op.dests):
                return op
            return op.but(dests=frozenset(ldsaddr.UNKNOWN_DEST if any(a == symbol for a, _ in d.atoms) else d
                                          for d in op.dests))
        self.pending["vm"] = [clean(op) for op in self.pending["vm"]]
        self.landing = {k: clean(op) for k, op in self.landing.items()}


_GFX12_WAITS = {"s_wait_loadcnt": "vm", "s_wait_storecnt": "vs", "s_wait_dscnt": "lds", "s_wait_kmcnt": "smem"}
# gfx10/11 SOPK forms: `s_waitcnt_vscnt null, 0x0`.
_SOPK_WAITS = {"s_waitcnt_vmcnt": ("vm",), "s_waitcnt_vscnt": ("vs",), "s_waitcnt_lgkmcnt": ("lds", "smem")}


def _apply_wait(state, inst):
    m, ops = inst.mnemonic, inst.operands
    if m == "s_waitcnt":
        counts = dict((k, int(v)) for k, v in _COUNT.findall(ops))
        if not counts and ops.strip() == "0":
            counts = {"vmcnt": 0, "lgkmcnt": 0}
        if "vmcnt" in counts:
            state.retire("vm", counts["vmcnt"])
        if "lgkmcnt" in counts:
            state.retire("lds", counts["lgkmcnt"])
            state.retire("smem", counts["lgkmcnt"])
        return True
    if m in _GFX12_WAITS or m in _SOPK_WAITS:
        value = int(ops.split(",")[-1].strip(), 0) if ops else 0
        for counter in _SOPK_WAITS.get(m, (_GFX12_WAITS.get(m),)):
            state.retire(counter, value)
        return True
    if m in ("s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt"):
        value = int(ops.strip(), 0)
        state.retire("vm" if m == "s_wait_loadcnt_dscnt" else "vs", (value >> 8) & 0x3F)
        state.retire("lds", value & 0x3F)
        return True
    return m.startswith(("s_waitcnt", "s_wait_"))


_ENDS = ("s_endpgm", "s_code_end", "s_setpc_b64", "s_trap")
_BARRIERS = ("s_barrier", "s_barrier_signal", "s_barrier_wait")
_MAX_QUEUE = 64  # a counter's hardware limit is 63; beyond it the walk stops growing the queue


def _blocks(instructions):
    """Basic blocks as (start, end) index ranges, and each block's successor blocks."""
    index = {inst.addr: i for i, inst in enumerate(instructions)}
    leaders = {0}
    for i, inst in enumerate(instructions):
        if inst.target is not None and inst.target in index:
            leaders.add(index[inst.target])
            leaders.add(i + 1)
        elif inst.mnemonic in _ENDS:
            leaders.add(i + 1)
    starts = sorted(x for x in leaders if x < len(instructions))
    blocks = [(a, (starts[k + 1] if k + 1 < len(starts) else len(instructions)) - 1)
              for k, a in enumerate(starts)]
    by_start = {a: k for k, (a, _) in enumerate(blocks)}
    succs = []
    for a, b in blocks:
        last = instructions[b]
        out = []
        if last.target is not None and last.target in index:
            out.append(by_start[index[last.target]])
        falls = last.mnemonic not in _ENDS and last.mnemonic != "s_branch"
        if falls and b + 1 in by_start:
            out.append(by_start[b + 1])
        succs.append(out)
    return blocks, succs


def _merge(a, b):
    """Pending on either path, each operation as young as on the path where it is youngest; a
    copy's destinations and barriers those of every path that has it in flight; register values
    both paths agree on."""
    out = _State(a.regs.merge(b.regs) if a.regs is not None else None)
    for counter in out.pending:
        merged = {}
        for op in a.pending[counter] + b.pending[counter]:
            merged[op.inst.addr] = merged[op.inst.addr].joined(op) if op.inst.addr in merged else op
        ordered = sorted(merged.values(), key=lambda op: (-op.younger, op.inst.addr))
        out.pending[counter] = ordered[-_MAX_QUEUE:]
    out.landing = dict(a.landing)
    for k, op in b.landing.items():
        out.landing[k] = out.landing[k].joined(op) if k in out.landing else op
    return out


def _key(state):
    return (tuple((c, tuple(op.key() for op in q)) for c, q in sorted(state.pending.items())),
            tuple(sorted(op.key() for op in state.landing.values())),
            state.regs.signature() if state.regs is not None else None)


_ORDER = {ldsaddr.DISJOINT: 0, ldsaddr.MAYBE: 1, ldsaddr.OVERLAP: 2}


def check_kernel(name, instructions, arch=None, workgroup=None):
    """The findings of one kernel on `arch` (its counter rules; None: stores are not counted on
    vmcnt): a dataflow walk of its control-flow graph to a fixed point. `workgroup`
    (ldsaddr.Workgroup) is the threads whose addresses are followed, the kernel's largest
    workgroup; default 1024 work-items in waves of 64."""
    findings, seen = [], set()
    wg = workgroup or ldsaddr.Workgroup()
    copies = any(classify(inst, arch) == ("vm", "lds_dma") for inst in instructions)
    groups = {}     # copy address -> {"inst", "error": {...}, "warning": {...}}
    verdicts = {}   # (Dest, access key, landed) -> (verdict, why)

    def report(inst, issued, register, kind):
        key = (inst.addr, issued.addr)
        if key not in seen:
            seen.add(key)
            findings.append(Finding(name, inst.addr, inst.text, register, issued.addr, issued.text, kind))

    def touches(op, access, access_key, landed):
        worst = (ldsaddr.DISJOINT, "")
        for dest in op.dests:
            k = (dest, access_key, landed)
            if k not in verdicts:
                verdicts[k] = ldsaddr.overlap(dest, access, wg, other_waves_only=landed)
            if _ORDER[verdicts[k][0]] > _ORDER[worst[0]]:
                worst = verdicts[k]
        return worst

    def check_access(state, inst):
        hot = [(op, False) for op in state.pending["vm"] if op.kind == "lds_dma" and op.barriers]
        hot += [(op, True) for op in state.landing.values()]
        if not hot:
            return
        access = ldsaddr.lds_access(inst, state.regs, wg)
        if access is None:
            return
        access_key = (access.atoms, None if access.addr is None else access.addr.tobytes(),
                      access.parts, access.exact)
        for op, landed in hot:
            verdict, why = touches(op, access, access_key, landed)
            if verdict == ldsaddr.DISJOINT:
                continue
            group = groups.setdefault(op.inst.addr, {"inst": op.inst, "error": {}, "warning": {}})
            entry = group["error" if verdict == ldsaddr.OVERLAP else "warning"]
            barriers, whys, _ = entry.get(inst.addr, (set(), set(), None))
            entry[inst.addr] = (barriers | op.barriers, whys | ({why} if why else set()), inst.text)

    def step(state, inst):
        if _apply_wait(state, inst):
            return
        if inst.mnemonic in _BARRIERS:
            state.barrier(inst)
        if state.regs is not None and inst.mnemonic.startswith("ds_"):
            check_access(state, inst)
        issued = classify(inst, arch)
        halves = inst.operands.split("::")
        if issued and issued[1] == "load":
            # A load's destination may overlap loads still in flight (d16 halves, dead values):
            # only its address and data operands are reads.
            used = set(registers(",".join(inst.operands.split(",")[1:])))
        else:
            used = set()
            for half in halves:
                used.update(registers(half))
        for queue in state.pending.values():
            for op in queue:
                hit = used & op.regs
                if hit:
                    report(inst, op.inst, sorted(hit, key=lambda r: (r[0], int(r[1:])))[0], "read")
        if issued:
            counter, kind = issued
            dest = set(registers(_first_operand(inst.operands))) if kind == "load" else set()
            dests = frozenset()
            if kind == "lds_dma" and state.regs is not None:
                dests = frozenset([ldsaddr.copy_destination(inst, state.regs, wg)])
            state.issue(counter, _Op(inst, dest, kind, dests=dests))
        if state.regs is not None:
            defined, commit = ldsaddr.evaluate(inst, state.regs, wg, issued)
            for symbol in defined:
                state.forget(symbol)
            commit()

    blocks, succs = _blocks(instructions)
    states_in = {0: _State(ldsaddr.Regs.at_entry(wg) if copies else None)}
    work = [0]
    visits = {}
    while work:
        k = work.pop()
        visits[k] = visits.get(k, 0) + 1
        if visits[k] > 8:
            continue  # loops settle within a few passes; this bounds pathological graphs
        state = states_in[k].copy()
        a, b = blocks[k]
        for inst in instructions[a:b + 1]:
            step(state, inst)
        for nxt in succs[k]:
            merged = _merge(states_in[nxt], state) if nxt in states_in else state.copy()
            if nxt not in states_in or _key(merged) != _key(states_in[nxt]):
                states_in[nxt] = merged
                work.append(nxt)
    for addr in sorted(groups):
        group = groups[addr]
        severity = "error" if group["error"] else "warning"
        accesses = group[severity]
        barriers = sorted(set().union(*(b for b, _, _ in accesses.values())))
        whys = sorted(set().union(*(w for _, w, _ in accesses.values())))
        findings.append(Finding(name, addr, group["inst"].text, kind="barrier", severity=severity,
                                barriers=tuple(barriers),
                                accesses=tuple((a, accesses[a][2]) for a in sorted(accesses)),
                                why="; ".join(whys)))
    return findings
