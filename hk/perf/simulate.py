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
the launch's time and its bound.
"""

import dataclasses
import heapq

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


class _Wave:
    __slots__ = ("cls", "a", "b", "cost", "waits", "pc", "simd", "group", "ready", "queues", "done")

    def __init__(self, stream, simd, group):
        self.cls, self.a, self.b, self.cost, self.waits = stream
        self.pc, self.simd, self.group, self.ready, self.done = 0, simd, group, 0.0, False
        self.queues = ([], [], [])   # completion times: VM, VS, LGKM


def compile_stream(stream, table):
    """A profiled wave's (n, 3) stream as the simulator's arrays: class, bytes, cycles or lines,
    matrix or nop cycles, wait counts."""
    idx = stream[:, 0]
    return (table.cls[idx].tolist(), stream[:, 1].tolist(), stream[:, 2].tolist(), table.cycles[idx].tolist(),
            table.waits[idx].tolist())


def run(unit, workgroups, resident, hit_fraction, distinct=(1.0, 1.0)):
    """Simulates `workgroups` (each a list of compiled wave streams, run in order, at most
    `resident` at once) on one unit whose global loads hit the L2 with `hit_fraction`.
    `distinct` is the share of the lines that reads (writes) request that are not the same
    workgroup's again: the unit's cache keeps what its instructions touch in pieces."""
    heap, seq = [], 0
    simds = unit.simds
    ports = [[0.0] * 16 for _ in range(simds)]    # per SIMD, per class: next free issue slot
    valu_free = [0.0] * simds
    matrix_free = [0.0] * simds
    valu_busy, matrix_busy = [0.0] * simds, [0.0] * simds
    lds_free = mem_free = dram_free = l2_free = 0.0
    lds_busy = mem_busy = 0.0
    missed_lines = 0.0
    count = 0
    miss = 1.0 - hit_fraction
    latency = hit_fraction * unit.l2_latency + miss * unit.dram_latency
    interval = unit.issue_interval
    live = {}                                      # group -> [waves left, arrived at barrier, slot]
    barrier_waiters = {}
    next_group = 0
    finish = 0.0
    free_slots = list(range(resident))

    def start(t):
        nonlocal next_group, seq
        if next_group >= len(workgroups) or not free_slots:
            return
        slot = free_slots.pop(0)
        g = next_group
        next_group += 1
        waves = workgroups[g]
        live[g] = [len(waves), 0, slot]
        barrier_waiters[g] = []
        for k, stream in enumerate(waves):
            w = _Wave(stream, (slot * len(waves) + k) % simds, g)
            w.ready = t + unit.workgroup_cycles
            heapq.heappush(heap, (w.ready, seq, w))
            seq += 1

    for _ in range(resident):
        start(0.0)

    while heap:
        t, _, w = heapq.heappop(heap)
        if w.done:
            continue
        i = w.pc
        c = w.cls[i]
        s = w.simd
        port = ports[s]
        # The issue slot of this class on this SIMD (and, RDNA, the SIMD's one issue per cycle).
        issue = max(t, port[c])
        if c == I.VALU or c == I.TRANS or (c == I.MATRIX and unit.matrix_on_valu):
            issue = max(issue, valu_free[s])
        if c == I.MATRIX:
            issue = max(issue, matrix_free[s])
        if issue > t:
            heapq.heappush(heap, (issue, seq, w))
            seq += 1
            continue
        port[c] = t + interval
        w.pc += 1
        count += 1
        ready = t + interval
        if c == I.VALU or c == I.TRANS:
            cost = unit.valu_cycles if c == I.VALU else unit.trans_cycles
            valu_free[s] = t + cost
            valu_busy[s] += cost
        elif c == I.MATRIX:
            cost = w.cost[i]
            matrix_free[s] = t + cost
            matrix_busy[s] += cost
            if unit.matrix_on_valu:
                valu_free[s] = t + cost
        elif c == I.LDS:
            cycles = max(1.0, w.b[i] * unit.lds_scale)
            begin = max(t, lds_free)
            lds_free = begin + cycles
            lds_busy += cycles
            w.queues[I.LGKM].append(begin + cycles + unit.lds_latency)
        elif c == I.LOAD or c == I.STORE or c == I.COPY:
            lines = max(1, w.b[i])
            begin = max(t, mem_free)
            mem_free = begin + lines / unit.lines_per_cycle
            mem_busy += lines / unit.lines_per_cycle
            fresh = lines * distinct[1 if c == I.STORE else 0]
            l2_free = max(l2_free, begin) + fresh * unit.line_bytes / unit.l2_bytes_per_cycle
            missed = fresh * (1.0 if c == I.STORE else miss)
            dram_free = max(dram_free, begin) + missed * unit.miss_cycles
            missed_lines += missed
            done = max(begin + (latency if c != I.STORE else unit.l2_latency), l2_free,
                       dram_free if c != I.STORE else 0.0)
            q = I.VS if c == I.STORE and not unit.stores_on_vm else I.VM
            w.queues[q].append(done)
            if c == I.COPY:
                # A global->LDS copy writes its bytes into the LDS when they arrive.
                cycles = w.a[i] / unit.lds_write_bytes
                lds_free = max(lds_free, done - cycles) + cycles
                lds_busy += cycles
        elif c == I.SMEM:
            w.queues[I.LGKM].append(t + unit.smem_latency)
        elif c == I.WAIT:
            until = t
            for q, n in enumerate(w.waits[i]):
                if n < 0:
                    continue
                pending = w.queues[q]
                if len(pending) > n:
                    pending.sort()
                    k = len(pending) - n
                    until = max(until, pending[k - 1])
                    del pending[:k]
            ready = max(ready, until)
        elif c == I.NOP:
            ready = t + w.cost[i]
        elif c == I.BARRIER:
            group = live[w.group]
            group[1] += 1
            barrier_waiters[w.group].append(w)
            if group[1] < group[0]:
                continue                           # released by the last wave to arrive
            release = t + unit.barrier_cycles
            for x in barrier_waiters[w.group]:
                x.ready = release
                heapq.heappush(heap, (release, seq, x))
                seq += 1
            barrier_waiters[w.group] = []
            group[1] = 0
            continue
        elif c == I.END:
            w.done = True
            group = live[w.group]
            group[0] -= 1
            finish = max(finish, t)
            if group[0] == 0:
                free_slots.append(group[2])
                del live[w.group]
                start(t)
            elif group[1] and group[1] >= group[0]:
                # The waves still alive all wait at a barrier the finished one will never reach.
                release = t + unit.barrier_cycles
                for x in barrier_waiters[w.group]:
                    heapq.heappush(heap, (release, seq, x))
                    seq += 1
                barrier_waiters[w.group] = []
                group[1] = 0
            continue
        if w.pc >= len(w.cls):
            w.done = True
            continue
        w.ready = ready
        heapq.heappush(heap, (ready, seq, w))
        seq += 1

    busy = {"valu": max(valu_busy), "matrix": max(matrix_busy), "lds": lds_busy, "memory pipe": mem_busy,
            "memory beyond the L2": missed_lines * unit.miss_cycles}
    return Result(finish, busy, count, missed_lines, next_group)

