"""What the end-to-end tests share: vLLM's CPU build serving the tiny models of
hk_engine.testing.models on hk's kernels (HK_VLLM_CPU=1), and their checks against transformers'
float32 greedy continuations (reference.json beside each model, written by the same build action)
and against the same model run on each engine's own tokens (reference.forced).

The engine runs in the test's process (VLLM_ENABLE_V1_MULTIPROCESSING=0), so hk_engine.counters
are the counts of every call it made; //integration/vllm:serve_test runs vLLM's own processes.
The thresholds (reference.MARGIN, reference.LOGPROB_ERROR) are justified in hk_engine.testing.reference.
"""

import os
import sys

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ["HK_VLLM_CPU"] = "1"
# vLLM's sampler gathers logprobs in a torch.compile'd function: inductor would build its C++ in
# each test's empty cache, 11 s of a 35 s test, for code of vLLM's own that never calls hk. The
# runs in this process take it eagerly; serve_test's server keeps vLLM's defaults.
os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")

from hk_engine.testing import reference  # noqa: E402

LAYERS = 2  # every model of hk_engine.testing.models
BLOCK = 16

# hk's calls per forward pass, per model: the linear layers (qkv, o, gate_up, down per layer, or
# qkv, o and the router for an MoE layer; and the logits), the RMSNorms (two per layer, and q's and
# k's in Qwen3's attention; and the final one), and one rotary, SiLU-and-mul (the MoE experts'
# own), cache write, attention, AWQ or W8A8 GEMM (int8, fp8 or block-scaled fp8) or MoE experts
# call per layer and projection.
_ATTENTION = {"vllm.rotary": LAYERS, "vllm.kv_cache_write": LAYERS, "vllm.attention": LAYERS}
CALLS = {
    "llama": dict(_ATTENTION, **{"vllm.linear": 4 * LAYERS + 1, "vllm.norm": 2 * LAYERS + 1,
                                 "vllm.silu_and_mul": LAYERS}),
    "qwen3": dict(_ATTENTION, **{"vllm.linear": 4 * LAYERS + 1, "vllm.norm": 4 * LAYERS + 1,
                                 "vllm.silu_and_mul": LAYERS}),
    "qwen3_moe": dict(_ATTENTION, **{"vllm.linear": 3 * LAYERS + 1, "vllm.norm": 4 * LAYERS + 1,
                                     "vllm.moe": LAYERS}),
    "llama_awq": dict(_ATTENTION, **{"vllm.awq": 4 * LAYERS, "vllm.linear": 1, "vllm.norm": 2 * LAYERS + 1,
                                     "vllm.silu_and_mul": LAYERS}),
    "llama_w8a8": dict(_ATTENTION, **{"vllm.w8a8_int8": 4 * LAYERS, "vllm.linear": 1,
                                      "vllm.norm": 2 * LAYERS + 1, "vllm.silu_and_mul": LAYERS}),
    "llama_fp8": dict(_ATTENTION, **{"vllm.w8a8_fp8": 4 * LAYERS, "vllm.linear": 1,
                                     "vllm.norm": 2 * LAYERS + 1, "vllm.silu_and_mul": LAYERS}),
    "llama_fp8_block": dict(_ATTENTION, **{"vllm.w8a8_fp8_block": 4 * LAYERS, "vllm.linear": 1,
                                           "vllm.norm": 2 * LAYERS + 1, "vllm.silu_and_mul": LAYERS}),
}


def report(text):
    """Into the test's log, passed or failed: the end-to-end targets run pytest with --capture=sys,
    which leaves sys.__stdout__ the log's."""
    print(text, file=sys.__stdout__, flush=True)


def model(kind):
    """The directory of a model written by //integration/engine:model_<kind>."""
    return os.path.join(os.environ["TEST_SRCDIR"], "hk_dsl", "integration", "engine", "models", kind)


def expected(kind):
    """(prompts, [Greedy]): the model's reference."""
    return reference.read(os.path.join(model(kind), reference.FILE))


def engine(kind, **overrides):
    """vLLM's LLM serving model `kind` on hk's kernels, eager, in bf16, blocks of 16 tokens."""
    from vllm import LLM

    args = dict(model=model(kind), enforce_eager=True, dtype="bfloat16", block_size=BLOCK, max_model_len=128,
                kv_cache_memory_bytes=32 << 20, seed=0)
    args.update(overrides)
    return LLM(**args)


def greedy_params(tokens):
    from vllm import SamplingParams

    return SamplingParams(temperature=0.0, max_tokens=tokens, ignore_eos=True, logprobs=1)


def continuation(output):
    """(tokens, the logprob of each) of a RequestOutput."""
    completion = output.outputs[0]
    tokens = list(completion.token_ids)
    return tokens, [completion.logprobs[i][t].logprob for i, t in enumerate(tokens)]


def generate(llm, prompts, tokens):
    """vLLM's greedy continuations of prompts (token ids): the RequestOutputs, in order."""
    return llm.generate([{"prompt_token_ids": p} for p in prompts], greedy_params(tokens), use_tqdm=False)


def agree(kind, outputs, indices=None, title="", steps=16, kv_cache_dtype=None, margin=reference.MARGIN,
          logprob_error=reference.LOGPROB_ERROR):
    """Checks vLLM's outputs (`steps` tokens after each of the reference's prompts `indices`, all:
    None) against the reference, and prints the table; returns its rows. kv_cache_dtype
    reference.FP8_KV: against the reference with an fp8 KV cache (computed here). The thresholds:
    reference's for bf16 (the default) or for 8-bit activations or caches (QUANTIZED_*)."""
    prompts, ref = expected(kind)
    indices = list(range(len(ref)) if indices is None else indices)
    got = [continuation(o) for o in outputs]
    tokens, logprobs = [t for t, _ in got], [lp for _, lp in got]
    if kv_cache_dtype is None:
        greedy = [reference.Greedy(*(x[:steps] for x in (ref[i].tokens, ref[i].logprobs, ref[i].margins)))
                  for i in indices]
    else:
        greedy = reference.greedy(model(kind), [prompts[i] for i in indices], steps, kv_cache_dtype)
    forced = reference.forced(model(kind), [prompts[i] for i in indices], tokens, kv_cache_dtype)
    rows = reference.compare(greedy, forced, tokens, logprobs, margin, logprob_error)
    for row, i in zip(rows, indices):
        row.prompt = i
    text = reference.table(rows, title or "%s against transformers (float32)" % kind)
    report("\n" + text)
    assert all(r.ok for r in rows), text
    return rows


def per_pass(kind, counts):
    """Checks that every call counted is hk's, CALLS[kind] of each per forward pass (the passes
    counted by attention), and returns the passes."""
    attention = counts.get("vllm.attention", {}).get("hk", 0)
    assert attention and attention % LAYERS == 0, counts
    passes = attention // LAYERS
    assert counts == {name: {"hk": n * passes} for name, n in CALLS[kind].items()}, (passes, counts)
    report("%s: %d forward passes, counters %s" % (kind, passes, counts))
    return passes
