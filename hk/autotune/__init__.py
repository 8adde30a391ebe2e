"""hk.autotune: search a kernel's knobs for the fastest candidate at each shape bucket.

    @hk.kernel(grid=..., tune=hk.space(BLOCK=[64, 128, 256], where=lambda c: c.BLOCK <= 128))
    def k(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, BLOCK=64): ...

    r = hk.autotune.search(k, [(x, o)], "gfx1100")          # a kernel, each shape its arguments
    r = hk.autotune.search(hk.ops.gemm.LINEAR, [(4096, 4096, 4096)], "gfx1100")   # an op
    print(r.report())

Candidates are built as a launch builds them (refusals counted with their stage and reason),
in parallel worker processes, and ranked by hk.perf's prediction, or timed on a GPU of the
target when one is present. Results are cached per candidate and shape. `hk-tune` runs searches
for the library's ops and writes hk/tuned/<arch>.json, which hk.ops reads at launch (hk.tuned).
"""

from hk.autotune.searching import Choice, Refusal, SearchResult, search
from hk.autotune.space import Config, Space, space
from hk.autotune.tunable import Launch, Tunable

__all__ = ["Choice", "Config", "Launch", "Refusal", "SearchResult", "Space", "Tunable", "search", "space"]
