"""One compute unit running its share of a launch, cycle by cycle of issue.

The unit runs workgroups one after another, as many at once as the kernel's occupancy allows,
each replaying a profiled workgroup's instruction streams (the emulator's exact dynamic streams,
hk.emu.profile). Every wave issues in order; an instruction issues when the wave is ready and the
unit it needs is free:

- a SIMD issues one instruction of a type per issue slot (RDNA every cycle; CDNA every four,
  up to one of each type from different waves), and a wave issues once per slot;
- VALU instructions keep the SIMD's vector ALU busy (RDNA: a WMMA too, which runs on it),
  matrix instructions the matrix unit, for their cycles;
- an LDS instruction takes the unit's LDS for the cycles its lanes' banks need (the profile
  counts the conflicts) and completes after the LDS latency;
- a vector memory instruction takes the vector memory pipe for its cache lines, the lines its
  workgroup has not touched before go to the L2, those that miss it take the unit's share of
  the memory beyond it (the Infinity Cache and DRAM, as the
  launch's reuse decides), and it completes after the L2 or DRAM latency (whichever its lines
  see) or when that share has moved them;
- a wait holds the wave until the operations it waits for have completed (in order, as the
  hardware counts them); a barrier until every wave of the workgroup has reached it.

The result is the unit's cycles and how busy each resource was; hk.perf.model turns them into
the launch's time and its bound. Events are taken in order of (time, the order they were made
in), so a run is deterministic; the loop is C++ (native/simulate.cc): a search predicts hundreds
of launches, each millions of instructions.
"""

import dataclasses

from hk.perf import _simulate
from hk.perf import instructions as I


@dataclasses.dataclass(frozen=True)
class Unit:
    """What the simulator needs of one compute unit (hk.perf.device derives it from the facts)."""

    simds: int
    wave_size: int
    issue_interval: int           # cycles between two issues of a SIMD
    valu_cycles: float            # a VALU instruction of this wave size
    trans_cycles: float
    matrix_on_valu: bool          # RDNA: WMMA runs on the vector ALU
    lds_scale: float              # LDS cycles per profiled bank-group cycle
    lds_latency: float
    lds_write_bytes: float        # LDS bytes a global->LDS copy writes per cycle
    lines_per_cycle: float        # vector memory pipe: cache lines per cycle
    line_bytes: int
    l2_latency: float
    dram_latency: float
    miss_cycles: float            # cycles of this unit's share of the memory beyond the L2 per missed line
    l2_bytes_per_cycle: float     # this unit's share of the L2 bandwidth
    smem_latency: float
    barrier_cycles: float
    workgroup_cycles: float       # starting a workgroup
    stores_on_vm: bool            # gfx9: stores and copies count on vmcnt


@dataclasses.dataclass
class Result:
    cycles: float
    busy: dict                    # resource -> busy cycles (per SIMD resources: the busiest SIMD)
    instructions: int
    missed_lines: float           # lines that went beyond the L2 (stores all do)
    workgroups: int


if _simulate.CLASSES != I.NAMES:
    raise ImportError("hk.perf._simulate was built for other instruction classes (%s) than hk.perf.instructions' "
                      "(%s): rebuild it" % (_simulate.CLASSES, I.NAMES))


def run(unit, table, programs, count, resident, hit_fraction, distinct=(1.0, 1.0)):
    """Simulates `count` workgroups on one unit, workgroup k replaying programs[k % len(programs)]
    (each a list of its waves' profiled streams, (n, 3) arrays over `table`'s instructions), at
    most `resident` at once, whose global loads hit the L2 with `hit_fraction`.
    `distinct` is the share of the lines that reads (writes) request that are not the same
    workgroup's again: the unit's cache keeps what its instructions touch in pieces."""
    cycles, busy, instructions, missed, started = _simulate.run(
        dataclasses.asdict(unit), table.cls, table.cycles, table.waits, [list(p) for p in programs], int(count),
        int(resident), float(hit_fraction), tuple(float(d) for d in distinct))
    return Result(cycles, busy, instructions, missed, started)
