"""vLLM serving one model of hk_engine.testing.models end to end on hk's kernels, token for token
against transformers' float32 greedy generate, every call of every layer on hk (the counters).

HK_E2E_MODEL names the model: qwen3 (q/k norms, heads of 128), qwen3_moe (top-2 of 8 experts on
TritonExperts' seam), llama_awq (4-bit AWQ on AutoAWQLinearMethod's), llama (the dense one).
On the interpreter every prompt runs 16 tokens; on the emulator (HK_DEVICE=emu, HK_ARCH the
target), which compiles each kernel and runs its code object, two prompts run 4 tokens."""

import os

import e2e

KIND = os.environ["HK_E2E_MODEL"]
SHORT = os.environ.get("HK_DEVICE") == "emu"
PROMPTS, TOKENS = (2, 4) if SHORT else (None, 16)


def test_generate_matches_transformers_and_every_call_is_hks():
    from hk_engine import counters

    llm = e2e.engine(KIND)
    prompts, _ = e2e.expected(KIND)
    indices = list(range(len(prompts)))[:PROMPTS]
    counters.reset()
    outputs = e2e.generate(llm, [prompts[i] for i in indices], TOKENS)
    runner = os.environ.get("HK_DEVICE") + (" " + os.environ.get("HK_ARCH", "gfx1100") if SHORT else "")
    e2e.agree(KIND, outputs, indices, "%s on %s against transformers (float32)" % (KIND, runner), TOKENS)
    e2e.per_pass(KIND, counters.snapshot())
