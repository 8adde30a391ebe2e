"""vLLM serving one model of hk_engine.testing.models end to end on hk's kernels, token for token
against transformers' float32 greedy generate, every call of every layer on hk (the counters).

HK_E2E_MODEL names the model: qwen3 (q/k norms, heads of 128), qwen3_moe (top-2 of 8 experts on
TritonExperts' seam), llama_awq (4-bit AWQ on AutoAWQLinearMethod's), llama (the dense one).
On the interpreter every prompt runs 16 tokens; on the emulator (HK_DEVICE=emu, HK_ARCH the
target), which compiles each kernel and runs its code object, two prompts run 4 tokens.
HK_E2E_DECODE_PARTS=P (P > 1) has decode attention split into P parts a sequence, and
HK_E2E_PREFILL_WAVES=HxT prefill attention run by workgroups of H heads times T tiles of 16
tokens, the choices of a tuned file written for the model's heads (HK_TUNED); the test checks
that they ran."""

import json
import os

import e2e

KIND = os.environ["HK_E2E_MODEL"]
SHORT = os.environ.get("HK_DEVICE") == "emu"
PROMPTS, TOKENS = (2, 4) if SHORT else (None, 16)
PARTS = int(os.environ.get("HK_E2E_DECODE_PARTS", "1"))
WAVES = tuple(int(n) for n in os.environ.get("HK_E2E_PREFILL_WAVES", "1x1").split("x"))


def tuned_attention(directory, monkeypatch):
    """Points HK_TUNED at a tuned file choosing PARTS parts for the model's decode at every count
    of sequences and WAVES for its prefill at every count of tokens; returns (heads per K/V
    head, head size)."""
    from hk import tuned
    from hk.ops import paged

    with open(os.path.join(e2e.model(KIND), "config.json")) as f:
        config = json.load(f)
    heads, kv_heads, d = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]
    arch = os.environ.get("HK_ARCH", "gfx1100")
    path = os.path.join(directory, arch + ".json")
    decode = {paged.decode_bucket((seqs, 64, heads, kv_heads, d, e2e.BLOCK))
              for seqs in paged.SEQ_BUCKETS + (paged.SEQ_BUCKETS[-1] + 1,)}
    tuned.write(path, arch, "paged_attention_decode",
                {b: {"knobs": {"parts": PARTS}, "seconds": 1.0} for b in decode})
    prefill = {paged.prefill_bucket((1, tokens, heads, kv_heads, d, e2e.BLOCK))
               for tokens in paged.PREFILL_BUCKETS + (paged.PREFILL_BUCKETS[-1] + 1,)}
    tuned.write(path, arch, "paged_attention_prefill",
                {b: {"knobs": {"HEADS": WAVES[0], "TILES": WAVES[1]}, "seconds": 1.0} for b in prefill})
    monkeypatch.setenv("HK_TUNED", path)
    return heads // kv_heads, d


def test_generate_matches_transformers_and_every_call_is_hks(tmp_path, monkeypatch):
    from hk_engine import counters

    from hk.ops import paged

    group, d = tuned_attention(str(tmp_path), monkeypatch) if (PARTS, WAVES) != (1, (1, 1)) else (None, None)
    llm = e2e.engine(KIND)
    prompts, _ = e2e.expected(KIND)
    indices = list(range(len(prompts)))[:PROMPTS]
    counters.reset()
    outputs = e2e.generate(llm, [prompts[i] for i in indices], TOKENS)
    runner = os.environ.get("HK_DEVICE") + (" " + os.environ.get("HK_ARCH", "gfx1100") if SHORT else "")
    e2e.agree(KIND, outputs, indices, "%s on %s against transformers (float32)" % (KIND, runner), TOKENS)
    e2e.per_pass(KIND, counters.snapshot())
    if PARTS > 1:  # the merge ran: decode took the split
        assert paged.merge_kernel(d)._launchers, "decode attention did not run split into %d parts" % PARTS
        e2e.report("decode attention split into %d parts a sequence (merge_kernel launched)" % PARTS)
    if WAVES != (1, 1):  # prefill ran in workgroups of WAVES (K and V in one cache or two)
        knobs = {"HEADS": WAVES[0], "TILES": WAVES[1]}
        assert any(paged.prefill_of(d, group, e2e.BLOCK, kv, knobs)._launchers for kv in (1, 2)), \
            "prefill attention did not run in workgroups of %dx%d waves" % WAVES
        e2e.report("prefill attention in workgroups of %d heads x %d tiles of 16 tokens" % WAVES)
