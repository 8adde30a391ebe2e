"""The wait gate: a walk of a code object's disassembly for reads of registers still loading.

Memory operations are tracked on the counters that count them, as each target completes them:
vector memory in order on vmcnt (gfx9: loads, stores and global->LDS copies on the one counter;
gfx10/11: stores on vscnt; gfx12: loadcnt and storecnt); LDS reads and writes in order on
lgkmcnt or dscnt;
scalar memory out of order (complete only when the counter reaches 0). Any instruction that
names a register a pending load will write is a finding. A barrier reached with an asynchronous
global->LDS copy (CDNA) in flight is a finding when no wait on vmcnt came after the copy: a
pipelined loop that waits for the older stages and keeps the newest copy in flight across the
barrier on purpose is correct; a copy that nothing waits for before the barrier is the CDNA4
trap. The walk follows the control-flow graph to a fixed point, merging what is pending along
every path, so a load issued at the bottom of a loop iteration and used at the top of the next
is seen (every loop is walked at least twice).
"""

import dataclasses
import re
import subprocess

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
    kernel: str
    addr: int
    text: str
    register: str
    issued_at: int
    issued: str
    kind: str

    def __str__(self):
        if self.kind == "barrier":
            return ("kernel %s at 0x%x: %s: the global->LDS copy issued at 0x%x (%s) is still in "
                    "flight on vmcnt and no wait on vmcnt follows it; wait for it before the barrier"
                    % (self.kernel, self.addr, self.text, self.issued_at, self.issued))
        return ("kernel %s at 0x%x: %s: uses %s while the load issued at 0x%x (%s) is still writing it"
                % (self.kernel, self.addr, self.text, self.register, self.issued_at, self.issued))


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


class _State:
    def __init__(self):
        # [(inst, set of registers, kind, waited past)]: the last is True once a wait on the
        # counter has executed after the operation (it is then in flight knowingly).
        self.pending = {"vm": [], "vs": [], "lds": [], "smem": []}

    def copy(self):
        s = _State()
        s.pending = {k: list(v) for k, v in self.pending.items()}
        return s

    def retire(self, counter, keep):
        if counter == "smem":
            if keep == 0:
                self.pending["smem"] = []
            return
        q = self.pending[counter]
        if len(q) > keep:
            q = q[len(q) - keep:] if keep else []
        self.pending[counter] = [(inst, regs, kind, True) for inst, regs, kind, _ in q]


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
    """Pending on either path; each counter's entries in issue order, waited past only if on
    every path that has it pending."""
    out = _State()
    for counter in out.pending:
        merged = {}
        for inst, regs, kind, waited in a.pending[counter] + b.pending[counter]:
            if inst.addr in merged:
                waited = waited and merged[inst.addr][3]
            merged[inst.addr] = (inst, regs, kind, waited)
        out.pending[counter] = [merged[k] for k in sorted(merged)][-_MAX_QUEUE:]
    return out


def _key(state):
    return tuple((c, tuple((e[0].addr, e[3]) for e in q)) for c, q in sorted(state.pending.items()))


def check_kernel(name, instructions, arch=None):
    """The findings of one kernel on `arch` (its counter rules; None: stores are not counted on
    vmcnt): a dataflow walk of its control-flow graph to a fixed point."""
    findings, seen = [], set()

    def report(inst, issued, register, kind):
        key = (inst.addr, issued.addr)
        if key not in seen:
            seen.add(key)
            findings.append(Finding(name, inst.addr, inst.text, register, issued.addr, issued.text, kind))

    def step(state, inst):
        if _apply_wait(state, inst):
            return
        if inst.mnemonic in _BARRIERS:
            for issued, _, kind, waited in state.pending["vm"]:
                if kind == "lds_dma" and not waited:
                    report(inst, issued, "", "barrier")
                    break
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
            for entry, regs, _, _ in queue:
                hit = used & regs
                if hit:
                    report(inst, entry, sorted(hit, key=lambda r: (r[0], int(r[1:])))[0], "read")
        if issued:
            counter, kind = issued
            dest = set(registers(_first_operand(inst.operands))) if kind == "load" else set()
            state.pending[counter] = (state.pending[counter] + [(inst, dest, kind, False)])[-_MAX_QUEUE:]

    blocks, succs = _blocks(instructions)
    states_in = {0: _State()}
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
    return findings
