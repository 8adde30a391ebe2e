"""Models hk's kernels do not cover still run, on vLLM's own path for what hk does not take, with
one warning per patch and reason and counters that say so: the dense Llama in float32 (hk's
linear and attention take bf16 and fp16, its attention bf16 only) and a Llama with heads of 40
(hk's attention takes multiples of 16, its rotary rotated widths of multiples of 32). Their
tokens still match transformers'."""

import gc
import warnings

import pytest

import e2e
from hk_engine.plugin import UncoveredWarning

CASES = [
    # model, dtype, {patch: reason} of what hk does not cover
    ("llama", "float32", {"vllm.linear": "dtype", "vllm.kv_cache_write": "dtype", "vllm.attention": "dtype"}),
    ("llama_head40", "bfloat16", {"vllm.rotary": "shape", "vllm.kv_cache_write": "shape", "vllm.attention": "shape"}),
]


@pytest.mark.parametrize("kind, dtype, uncovered", CASES, ids=[c[0] + "-" + c[1] for c in CASES])
def test_what_hk_does_not_cover_runs_on_vllms_path_with_one_warning(kind, dtype, uncovered):
    from hk_engine import counters
    from vllm.distributed.parallel_state import cleanup_dist_env_and_memory

    prompts, _ = e2e.expected(kind)
    llm = e2e.engine(kind, dtype=dtype)
    counters.reset()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outputs = e2e.generate(llm, prompts[:2], 8)
    e2e.agree(kind, outputs, [0, 1], "%s in %s (vLLM's kernels where hk's do not cover)" % (kind, dtype), 8)
    notes = [str(w.message) for w in caught if issubclass(w.category, UncoveredWarning)]
    assert sorted(notes) == sorted("%s: hk's kernel does not cover these calls (%s); the engine's own kernel serves "
                                   "them (counted as engine:uncovered)" % item for item in uncovered.items()), notes
    counts = counters.snapshot()
    e2e.report("%s in %s: %s" % (kind, dtype, counts))
    for name, routes in counts.items():
        assert routes == ({"engine:uncovered": routes.get("engine:uncovered", 0)} if name in uncovered
                          else {"hk": routes.get("hk", 0)}), counts
        assert sum(routes.values()) > 0
    assert set(counts) == set(e2e.CALLS["llama"])
    del llm
    gc.collect()
    cleanup_dist_env_and_memory()
