"""Prints how long a schedule search takes from a cold cache and from a warm one.

    ./bazelw run //tests/bench:search_bench -- [--arch=gfx942] [--jobs=2]

The search is hk.ops.gemm.LINEAR's whole space on one target (50 candidates on gfx942, 68 on
gfx950, 44 on gfx1100/gfx1201) at six linear shapes (Qwen3-8B's four and OLMoE-1B-7B's two at
4096 tokens), ranked by hk.perf's prediction. Cold: an empty compile cache and result cache
(a temporary HK_CACHE_DIR), so every candidate is traced, compiled, gated and predicted at every
shape. Warm: the same search again, every result read from the result cache.
"""

import os
import sys
import tempfile
import time

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("arch", "gfx942", "the target whose space is searched")
flags.DEFINE_integer("jobs", None, "worker processes (default: the machine's cores)")
flags.DEFINE_integer("tokens", 4096, "M of every shape")

SHAPES = [(6144, 4096), (4096, 4096), (24576, 4096), (4096, 12288),  # Qwen3-8B: QKV, O, gate-up, down
          (6144, 2048), (2048, 2048)]                                # OLMoE-1B-7B: QKV, O


def _search(shapes):
    import hk.ops
    from hk.autotune import searching

    from tqdm import tqdm

    bar = tqdm(total=1, unit="candidate", file=sys.stderr, disable=None)

    def progress(done, total):
        bar.total = total
        bar.n = done
        bar.refresh()

    start = time.perf_counter()
    result = searching.search(hk.ops.TUNABLES["linear"], shapes, FLAGS.arch, strategy="exhaustive",
                              evaluator="model", jobs=FLAGS.jobs, progress=progress)
    bar.close()
    return time.perf_counter() - start, result


def main(argv):
    del argv
    shapes = [(FLAGS.tokens, n, k) for n, k in SHAPES]
    with tempfile.TemporaryDirectory(prefix="hk-search-bench-") as cache:
        os.environ["HK_CACHE_DIR"] = cache  # read at each use: the searches below see only this cache
        cold, result = _search(shapes)
        warm, again = _search(shapes)
    refused = result.refused_by_stage()
    print("search of linear on %s: %d candidates admitted x %d shapes, %d workers" % (
        FLAGS.arch, result.admitted, len(shapes), FLAGS.jobs or os.cpu_count()))
    print("  cold cache: %7.1f s  (%d candidates, %d results evaluated; refused: %s)" % (
        cold, result.candidates, result.fresh, ", ".join("%s %d" % kv for kv in sorted(refused.items())) or "none"))
    print("  warm cache: %7.1f s  (%d results read back, %d evaluated)" % (warm, again.cached, again.fresh))
    same = {b: c.knobs for b, c in result.choices.items()} == {b: c.knobs for b, c in again.choices.items()}
    print("  choices of the two searches %s" % ("agree" if same else "DIFFER"))
    for bucket, choice in sorted(result.choices.items()):
        print("  %-34s %s  predicted gain %.3fx" % (bucket, choice.knobs, choice.gain or 1.0))
    return 0 if same else 1


if __name__ == "__main__":
    app.run(main)
