"""Static figures of a kernel's code: its main loop, counted from the disassembly.

The main loop is the innermost loop (a backward branch and the instructions it jumps back over)
that holds the most matrix instructions (v_wmma, v_mfma, v_swmmac, v_smfmac). Its figure is the number of
instructions in it per matrix instruction: a kernel at the hardware's instruction budget issues
little besides the matrix instructions and the loads that feed them. Every instruction between
the loop's head and its back edge counts, whichever path an iteration takes, so a branch inside
the main loop costs what both of its sides hold.

    python -m hk.runtime.isa_stats [--objdump=PATH] FILE.co [FILE ...]
"""

import collections
import dataclasses
import sys

from absl import flags

from hk.errors import HKError
from hk.runtime import cocheck, metadata, waitcheck

MATRIX_PREFIXES = ("v_wmma_", "v_mfma_", "v_swmmac_", "v_smfmac_")


def is_matrix(mnemonic):
    return mnemonic.startswith(MATRIX_PREFIXES)


def kind(mnemonic):
    """A coarse class of an instruction, for the loop's breakdown."""
    if is_matrix(mnemonic):
        return "matrix"
    if mnemonic.startswith(("ds_",)):
        return "lds"
    if mnemonic.startswith(("global_", "buffer_", "flat_", "scratch_")):
        return "vmem"
    if mnemonic.startswith(("s_waitcnt", "s_wait_")):
        return "wait"
    if mnemonic.startswith("s_"):
        return "salu"
    return "valu"


@dataclasses.dataclass(frozen=True)
class Loop:
    """The instructions from `head` to the back edge at `tail` (addresses, both included)."""

    head: int
    tail: int
    instructions: tuple

    @property
    def matrix(self):
        return sum(1 for i in self.instructions if is_matrix(i.mnemonic))

    @property
    def per_matrix(self):
        return len(self.instructions) / self.matrix if self.matrix else float("inf")

    def breakdown(self):
        return collections.Counter(kind(i.mnemonic) for i in self.instructions)


@dataclasses.dataclass(frozen=True)
class KernelStats:
    """What one kernel costs: its resources and its main loop (None if it has no matrix loop)."""

    name: str
    arch: str
    vgprs: int
    agprs: int
    sgprs: int
    spills: int
    lds_bytes: int
    scratch_bytes: int
    instructions: int
    matrix: int
    loop: Loop

    @property
    def per_matrix(self):
        return self.loop.per_matrix if self.loop else None

    def figures(self):
        """The figures a budget bounds, by name."""
        return {"per_matrix": self.per_matrix, "vgprs": self.vgprs + self.agprs, "sgprs": self.sgprs,
                "spills": self.spills, "lds_bytes": self.lds_bytes, "scratch_bytes": self.scratch_bytes}


def loops(instructions):
    """Every loop of one function: a branch back to an earlier (or its own) address."""
    out = []
    for pos, ins in enumerate(instructions):
        if ins.target is None or ins.target > ins.addr:
            continue
        body = tuple(i for i in instructions[:pos + 1] if i.addr >= ins.target)
        out.append(Loop(ins.target, ins.addr, body))
    return out


def main_loop(instructions):
    """The innermost loop with the most matrix instructions, or None.

    Innermost: no other loop with matrix instructions lies inside it (a loop of copies inside
    the K loop does not make the K loop an outer one). Of an unrolled loop and the loop that
    runs the iterations left over, both innermost, the unrolled one holds more."""
    every = [l for l in loops(instructions) if l.matrix]

    def inner(l):
        return not any(o is not l and l.head <= o.head and o.tail <= l.tail for o in every)

    candidates = [l for l in every if inner(l)]
    if not candidates:
        return None
    return max(candidates, key=lambda l: (l.matrix, -(l.tail - l.head)))


def stats(path, objdump=None):
    """{kernel name: KernelStats} of a code object file."""
    objdump = cocheck.find_objdump(objdump)
    metas = {m.name: m for m in metadata.read(path)}
    arch = next(iter(metas.values())).arch if metas else None
    out = {}
    for name, instructions in waitcheck.disassemble(objdump, path, arch).items():
        meta = metas.get(name)
        if meta is None:
            continue  # a device function, not a kernel
        out[name] = KernelStats(
            name=name, arch=meta.arch, vgprs=meta.vgprs, agprs=meta.agprs, sgprs=meta.sgprs,
            spills=meta.spills, lds_bytes=meta.lds_bytes, scratch_bytes=meta.scratch_bytes,
            instructions=len(instructions),
            matrix=sum(1 for i in instructions if is_matrix(i.mnemonic)),
            loop=main_loop(instructions))
    if not out:
        raise HKError("%s has no kernel the disassembly and the metadata agree on" % path)
    return out


def describe(s):
    """One line of figures for a kernel."""
    line = ("%s (%s): %d VGPRs, %d AGPRs, %d SGPRs, %d spills, %d bytes LDS"
            % (s.name, s.arch, s.vgprs, s.agprs, s.sgprs, s.spills, s.lds_bytes))
    if s.loop is None:
        return line + "; no loop with matrix instructions"
    parts = ", ".join("%d %s" % (n, k) for k, n in sorted(s.loop.breakdown().items()))
    return line + "; main loop: %d instructions, %d matrix, %.2f per matrix instruction (%s)" % (
        len(s.loop.instructions), s.loop.matrix, s.loop.per_matrix, parts)


FLAGS = flags.FLAGS


def define_flags():
    flags.DEFINE_string("objdump", None, "llvm-objdump to disassemble with (default: the toolchain's)")


def main(argv):
    from hk.compiler.cli import UsageError

    if len(argv) < 2:
        raise UsageError("name the code objects to measure (see --help)")
    for path in argv[1:]:
        for s in stats(path, FLAGS.objdump).values():
            print("%s: %s" % (path, describe(s)))
    return 0


if __name__ == "__main__":
    from hk.compiler import cli

    cli.run_tool("isa_stats", __doc__, define_flags, main)
