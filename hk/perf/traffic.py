"""The memory traffic of a launch beyond the compute units: how many of its global reads the L2
serves, and what reaches the Infinity Cache and DRAM, from the lines its profiled workgroups read.

A workgroup's lines split into a part its x-neighbour reads too (it depends on the workgroup's
y only: a GEMM's rows of A), a part its y-neighbour reads too (its x only: the columns of B) and
a private rest. Workgroups run in dispatch order, x fastest, as many at once as the device holds:
those running together read each shared part once, so the L2 serves the rest. Beyond the L2,
the Infinity Cache keeps what later rounds of workgroups read again when the launch's whole
footprint fits it; otherwise every L2 miss goes to DRAM. Writes all go out. The L2 is taken to
hold what the running workgroups share while they use it (they move through their data in step).
"""

import dataclasses
import math

import numpy as np


@dataclasses.dataclass(frozen=True)
class Traffic:
    hit: float                    # fraction of line reads the L2 serves
    dram_bytes: float             # the launch's DRAM traffic
    beyond_bytes: float           # what passes the L2 (reads it misses, and every write)
    seconds: float                # the least time that traffic takes

    def miss_cycles(self, dev, units):
        """Cycles of one unit's share of the memory beyond the L2 per line that passes it."""
        lines = self.beyond_bytes / dev.line_bytes
        return self.seconds * dev.clock_hz * units / lines if lines else 0.0


def _shared(first, other):
    if other is None or len(first) == 0:
        return 0.0
    return len(np.intersect1d(first, other, assume_unique=True)) / len(first)


def estimate(profile, grid, concurrent, dev, efficiency):
    """The Traffic of a launch of `grid` with `concurrent` workgroups running at once on `dev`."""
    gx, gy, gz = grid
    read = {tuple(wg): lines[0] for wg, lines in zip(profile.workgroups, profile.lines)}
    written = {tuple(wg): lines[1] for wg, lines in zip(profile.workgroups, profile.lines)}
    first = read[(0, 0, 0)]
    size = float(len(first))
    sx = _shared(first, read.get((1, 0, 0)) if gx > 1 else None)
    sy = _shared(first, read.get((0, 1, 0)) if gy > 1 else None)
    private = max(0.0, 1.0 - sx - sy)

    def unique(cols, rows):
        """Distinct lines a cols x rows block of workgroups reads."""
        return size * (rows * sx + cols * sy + cols * rows * private)

    total = gx * gy * gz
    cols = min(gx, concurrent)
    rows = max(1, min(gy, math.ceil(concurrent / gx)))
    per_round = unique(cols, rows)
    hit = 1.0 - per_round / (cols * rows * size) if size else 1.0
    misses = per_round * total / (cols * rows)
    footprint = unique(gx, gy) * gz
    stores = float(len(written[(0, 0, 0)])) * total
    line = dev.line_bytes
    cached = dev.infinity_cache_bytes and footprint * line <= dev.infinity_cache_bytes
    dram = ((footprint if cached else misses) + stores) * line
    beyond = (misses + stores) * line
    seconds = dram / (dev.dram_bytes_per_s * efficiency)
    if cached and dev.infinity_cache_bytes_per_s:
        seconds = max(seconds, beyond / dev.infinity_cache_bytes_per_s)
    return Traffic(hit=hit, dram_bytes=dram, beyond_bytes=beyond, seconds=seconds)
