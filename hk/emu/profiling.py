"""What a run of a kernel does, instruction by instruction (hk.emu.profile).

A profile runs the workgroups it is given (by default the first) and records each wave's
dynamic instruction stream, with what every memory instruction moved: for an LDS instruction its
bytes and the cycles the LDS takes to serve it, bank conflicts counted exactly from the lanes'
addresses (the lanes are served in groups that move `banks * bank_bytes` bytes together; a group
takes as many cycles as the most distinct words one bank holds among them); for a global one its
bytes and the distinct cache lines it touched, and per workgroup every line read and written.
`Profile.lds()` reports the conflicts per LDS instruction; hk.perf times launches from the streams.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class LdsInstruction:
    """One LDS instruction over the profiled waves: how often it ran, the bytes it moved, the
    cycles the LDS took and the cycles it would take without a bank conflict."""

    pc: int
    text: str
    executions: int
    bytes: int
    cycles: int
    ideal: int

    @property
    def conflict_cycles(self):
        return self.cycles - self.ideal


class Profile:
    """The streams of the profiled workgroups; see the module docstring.

    streams[g][w] is wave w of workgroup g as an (n, 3) int32 array of (instruction index, bytes,
    cycles or lines); listing[i] is instruction i's (pc, text, operation); buffers the (address,
    bytes) of each buffer the launch was given."""

    def __init__(self, arch, kernel, workgroups, listing, streams, lines, lds_banks, lds_bank_bytes, line_bytes,
                 executed, buffers=()):
        self.arch, self.kernel, self.workgroups = arch, kernel, [tuple(g) for g in workgroups]
        self.listing, self.streams, self.lines = listing, streams, lines
        self.lds_banks, self.lds_bank_bytes, self.line_bytes = lds_banks, lds_bank_bytes, line_bytes
        self.executed, self.buffers = executed, list(buffers)
        self._is_lds = np.array([op.startswith("ds_") and not op.startswith(("ds_bpermute", "ds_permute",
                                                                              "ds_swizzle", "ds_nop"))
                                 for _, _, op in listing], dtype=bool)

    def lds(self):
        """[LdsInstruction] of every LDS instruction that ran, most conflict cycles first."""
        per_group = self.lds_banks * self.lds_bank_bytes
        totals = {}
        for waves in self.streams:
            for s in waves:
                rows = s[self._is_lds[s[:, 0]]] if len(s) else s
                for index, moved, cycles in rows:
                    t = totals.setdefault(int(index), [0, 0, 0, 0])
                    t[0] += 1
                    t[1] += int(moved)
                    t[2] += int(cycles)
                    t[3] += max(1, -(-int(moved) // per_group)) if moved else 0
        out = [LdsInstruction(self.listing[i][0], self.listing[i][1], *t) for i, t in totals.items()]
        return sorted(out, key=lambda x: (-x.conflict_cycles, x.pc))


def profile(code_object, kernel_name, grid, block, args, workgroups=None, arch=None, shared_mem=0,
            lds_banks=None, lds_bank_bytes=None, line_bytes=128, max_instructions=2_000_000_000, prefix=0,
            hazards=True):
    """Runs `workgroups` (a list of (x, y, z); default the first) of a launch and returns their
    Profile. `lds_banks` defaults to the target's (hk/target/targets.json); the other arguments
    are hk.emu.launch's. The buffers are read, not written back. A nonzero `prefix` leaves each
    workgroup after about that many wave-instructions (its waves take turns): the lines of the
    beginning of many workgroups, for what they share, at a fraction of the cost."""
    from hk.emu import runner
    from hk.target import facts

    co = runner.load(code_object)[0]
    workgroups = list(workgroups or [(0, 0, 0)])
    target = facts.target(co.arch)
    banks, lds_bank_bytes = lds_banks or target.lds_banks, lds_bank_bytes or target.lds_bank_bytes
    executed, streams, lines, buffers = runner.profile(code_object, kernel_name, grid, block, args, workgroups=workgroups,
                                              arch=arch, shared_mem=shared_mem, lds_banks=banks,
                                              lds_bank_bytes=lds_bank_bytes, line_bytes=line_bytes,
                                              max_instructions=max_instructions, prefix=prefix, hazards=hazards)
    return Profile(co.arch, kernel_name, workgroups, runner.listing(code_object), streams, lines, banks,
                   lds_bank_bytes, line_bytes, executed, buffers)


__all__ = ["LdsInstruction", "Profile", "profile"]
