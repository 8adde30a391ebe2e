"""The memory traffic of a launch beyond the compute units: how many of its global reads the L2
serves, and what reaches the Infinity Cache and DRAM, from the lines its workgroups read.

Workgroups start in dispatch order (x fastest), as many at once as the device holds, and on a
device of several dies (XCDs) the dispatcher deals them out in turn, each die with its own L2.
The emulator runs the beginning of each of the first round's workgroups (a prefix: the lines of
a few iterations of their loops, which is where what they share shows); the L2 of each die
serves every line its workgroups read more than once, so the hit rate is one less the share of
distinct lines. The L2 is taken to hold what the running workgroups share while they use it (they
move through their data in step); the time it takes lines to be evicted is not modelled.

Beyond the L2, every miss goes to the Infinity Cache (where the device has one), and from it to
DRAM: the launch's footprint once (its distinct lines: the buffers it reads, no more than the
first round's distinct lines extrapolated to the grid), and the misses beyond that in the
proportion the footprint exceeds the cache. Writes all go out.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Traffic:
    hit: float                    # fraction of line reads the L2 serves
    dram_bytes: float             # the launch's DRAM traffic
    beyond_bytes: float           # what passes the L2 (reads it misses, and every write)
    footprint_bytes: float        # the distinct bytes the launch reads
    seconds: float                # the least time that traffic takes

    def miss_cycles(self, dev, units):
        """Cycles of one unit's share of the memory beyond the L2 per line that passes it."""
        lines = self.beyond_bytes / dev.line_bytes
        return self.seconds * dev.clock_hz * units / lines if lines else 0.0


def first_round(grid, concurrent):
    """The workgroups of the first round, (x, y, z) in dispatch order."""
    gx, gy, _ = grid
    return [(i % gx, (i // gx) % gy, i // (gx * gy)) for i in range(concurrent)]


def _union(arrays):
    arrays = [a for a in arrays if len(a)]
    return np.unique(np.concatenate(arrays)) if arrays else np.zeros(0, dtype=np.uint64)


def estimate(full, sample, grid, dev, efficiency):
    """The Traffic of a launch of `grid` on `dev`: `full` profiles whole workgroups (their lines
    per workgroup), `sample` the prefixes of the first round's (first_round(), in order)."""
    total = int(np.prod(grid))
    line = dev.line_bytes
    reads = float(np.mean([len(r) for r, _ in full.lines]))      # distinct lines a workgroup reads
    writes = float(np.mean([len(w) for _, w in full.lines]))
    started = [r for r, _ in sample.lines]
    requested = float(sum(len(r) for r in started))
    dies = max(1, int(dev.xcds))
    distinct = sum(len(_union(started[d::dies])) for d in range(dies))
    hit = 1.0 - distinct / requested if requested else 1.0
    misses = reads * total * (1.0 - hit)

    # The footprint: no more than the buffers read, nor the first round's lines extrapolated.
    seen = _union(started)
    per_workgroup = requested / len(started) if started else 0.0
    extrapolated = len(seen) * max(1.0, reads / per_workgroup if per_workgroup else 1.0) * total / max(1, len(started))
    read_buffers = 0.0
    for addr, nbytes in sample.buffers:
        lo, hi = addr // line, (addr + max(1, nbytes) - 1) // line + 1
        if np.any((seen >= lo) & (seen < hi)):
            read_buffers += hi - lo
    footprint = min(extrapolated, read_buffers or extrapolated, misses) if misses else 0.0

    stores = writes * total
    cache = dev.infinity_cache_bytes / line
    if not cache or footprint <= cache:
        from_dram = footprint if cache else misses
    else:
        from_dram = footprint + (misses - footprint) * (1.0 - cache / footprint)
    dram = (from_dram + stores) * line
    beyond = (misses + stores) * line
    seconds = dram / (dev.dram_bytes_per_s * efficiency)
    if cache and dev.infinity_cache_bytes_per_s:
        seconds = max(seconds, beyond / dev.infinity_cache_bytes_per_s)
    return Traffic(hit=hit, dram_bytes=dram, beyond_bytes=beyond, footprint_bytes=footprint * line,
                   seconds=seconds)
