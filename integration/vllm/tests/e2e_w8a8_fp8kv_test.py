"""vLLM serving the Llama as a CompressedTensors W8A8 int8 checkpoint (int8 weights per channel,
int8 activations per token; hk_engine.testing.models' llama_w8a8) with an fp8 KV cache
(kv_cache_dtype="fp8": e4m3 bytes, per-tensor scales), end to end on hk's kernels on the
interpreter: every projection on hk.ops.int8_scaled_mm through hk's W8A8 kernel class, the cache
written and read as e4m3 by hk's attention. Token for token against transformers in float32 on
the same computation (the int8 weights dequantized, activations quantized per token, keys and
values rounded to e4m3), within hk_engine.testing.reference's thresholds for 8-bit activations
and caches."""

import pytest
import torch

import e2e
from hk_engine.testing import reference

KIND = "llama_w8a8"
PROMPTS = [0, 2, 5]  # a short prompt, the longest (prefilled past a block), another
TOKENS = 8
FP8_CACHE = (torch.uint8, torch.float8_e4m3fn)  # the e4m3 bytes' storage


@pytest.fixture
def cache_calls(monkeypatch):
    """The dtypes of the caches hk's cache write stored into, and the k_scale each of hk's
    attention calls read with (None: a bf16 cache)."""
    import hk.ops

    calls = {"written": [], "read": []}
    write = hk.ops.reshape_and_cache_flash

    def spy_write(key, value, key_cache, value_cache, *args, **kwargs):
        calls["written"].append(key_cache.dtype)
        return write(key, value, key_cache, value_cache, *args, **kwargs)

    monkeypatch.setattr(hk.ops, "reshape_and_cache_flash", spy_write)
    # k_scale's position in hk_vllm.attention's calls
    for name, at in (("paged_attention_decode_out", 7), ("paged_attention_prefill_out", 9)):
        def spy_read(*args, _op=getattr(hk.ops, name), _at=at, **kwargs):
            calls["read"].append(args[_at] if len(args) > _at else kwargs.get("k_scale"))
            return _op(*args, **kwargs)

        monkeypatch.setattr(hk.ops, name, spy_read)
    return calls


def test_w8a8_checkpoint_with_fp8_kv_cache_matches_transformers_and_every_call_is_hks(cache_calls):
    from hk_engine import counters

    llm = e2e.engine(KIND, kv_cache_dtype=reference.FP8_KV)
    assert llm.llm_engine.vllm_config.quant_config.get_name() == "compressed-tensors"
    prompts, _ = e2e.expected(KIND)
    counters.reset()
    cache_calls["written"].clear()
    cache_calls["read"].clear()
    outputs = e2e.generate(llm, [prompts[i] for i in PROMPTS], TOKENS)
    e2e.agree(KIND, outputs, PROMPTS, "%s, fp8 KV cache, on interp against transformers (float32)" % KIND, TOKENS,
              kv_cache_dtype=reference.FP8_KV, margin=reference.QUANTIZED_MARGIN,
              logprob_error=reference.QUANTIZED_LOGPROB_ERROR)
    # Every projection on hk's int8 GEMM, every cache write and attention call on hk's kernels...
    passes = e2e.per_pass(KIND, counters.snapshot())
    # ... which wrote e4m3 bytes and read them with the layer's scale.
    assert len(cache_calls["written"]) == passes * e2e.LAYERS, cache_calls
    assert set(cache_calls["written"]) <= set(FP8_CACHE), cache_calls
    assert len(cache_calls["read"]) == passes * e2e.LAYERS, cache_calls
    assert all(s is not None for s in cache_calls["read"]), cache_calls
