"""The float32 reference an engine's output is checked against: transformers' greedy generate on
the same weights, with each step's top-2 margin, and the comparison of an engine's tokens and
logprobs with it.

    ref = reference.greedy(model_dir, prompts_token_ids, new_tokens=16)
    forced = reference.forced(model_dir, prompts_token_ids, engine_tokens)
    rows = reference.compare(ref, forced, engine_tokens, engine_logprobs, MARGIN, LOGPROB_ERROR)
    print(reference.table(rows))

An engine computing in bf16 rounds its logits by up to some e, so it may pick another token only
where the reference's two best logits are within 2e of each other. Its tokens are compared with
the greedy continuation up to their first divergence, and at every step with the reference run on
the engine's own tokens (`forced`: the same context as the engine had, also after a divergence):
wherever the reference's margin is above the threshold, the engine must pick the reference's best
token; below it the step is a tie the engine may break either way.

The thresholds, for hk's kernels (bf16) on the models of hk_engine.testing.models: the logprob an
engine reports for a token differs from the float32 reference's, in the same context, by at most
0.056 over every step of every prompt of every model with bf16 activations and caches, in vLLM
and in SGLang (the tests print the largest, per prompt), so LOGPROB_ERROR = 0.1 is about twice
that. The difference of two logits is the difference of their logprobs: its error is under
2 x LOGPROB_ERROR = 0.2, and where the reference's two best logits are more than MARGIN = 0.25
apart the engine must pick the same token. A mixture of experts'
routing must be as decisive: its k-th and (k+1)-th router logits more than MARGIN apart too.

8-bit activations and caches (a W8A8 checkpoint's int8 activations, an fp8 KV cache) are modelled
by the reference (load), but not to the bit: where the engine's bf16 value and the reference's
float32 one fall on either side of a rounding boundary they round to neighbouring 8-bit values, a
whole step apart (an e4m3 step is 6 to 12%). The logprobs of vLLM on hk's kernels differ from the
reference's by at most 0.140 on llama_w8a8 and 0.169 on llama_w8a8 with an fp8 KV cache (every
prompt, 16 tokens), so QUANTIZED_LOGPROB_ERROR = 0.35 is about twice that, and QUANTIZED_MARGIN =
0.75 is above twice it, as MARGIN is above twice LOGPROB_ERROR. An e4m3 activation (llama_fp8,
llama_fp8_block: every projection's input) rounds to 3 mantissa bits where int8 per token keeps 7,
so a value on the other side of a boundary moves more: at most 0.316 (every prompt, 16 tokens), so
FP8_ACTIVATION_LOGPROB_ERROR = 0.65 and FP8_ACTIVATION_MARGIN = 1.5.
"""

import dataclasses
import functools
import json
import os

import torch

FILE = "reference.json"  # beside a model written by hk_engine.testing.models
LOGPROB_ERROR = 0.1
MARGIN = 0.25
QUANTIZED_LOGPROB_ERROR = 0.35
QUANTIZED_MARGIN = 0.75
FP8_ACTIVATION_LOGPROB_ERROR = 0.65
FP8_ACTIVATION_MARGIN = 1.5


@dataclasses.dataclass
class Greedy:
    """The reference's continuation of one prompt: tokens, the logprob of each and the margin
    between the two best logits at each step."""

    tokens: list
    logprobs: list
    margins: list


FP8_KV = "fp8"  # a kv_cache_dtype the reference models (per-tensor e4m3, scale 1: vLLM's without scales)


def _fp8_kv_attention(module, query, key, value, attention_mask, **kwargs):
    """SDPA on keys and values rounded to e4m3 (after the rotary), as an fp8 KV cache holds them."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    def e4m3(t):
        return t.to(torch.float8_e4m3fn).to(t.dtype)

    return sdpa_attention_forward(module, query, e4m3(key), e4m3(value), attention_mask, **kwargs)


@functools.lru_cache(maxsize=4)
def load(path, kv_cache_dtype=None):
    """The model in `path` in float32 (an AWQ checkpoint as the dense model its 4-bit weights stand
    for; a W8A8 one as its int8 or e4m3 weights, with its activations quantized per token, or per
    token per group, as the checkpoint says), loaded once per process. kv_cache_dtype FP8_KV: its attention reads keys and
    values rounded to e4m3, as an engine's fp8 KV cache (without scales) holds them."""
    import transformers

    from hk_engine.testing import models

    method = models.quant_method(path)
    if method in ("awq", "compressed-tensors"):
        kind = "llama_awq" if method == "awq" else "llama_w8a8"  # every W8A8 kind is the Llama's
        model = transformers.AutoModelForCausalLM.from_config(models.config(kind), dtype=torch.float32)
        model.load_state_dict(models.dequantized_state(path))
        if method == "compressed-tensors":
            models.quantize_activations(model, path)
    else:
        model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    if kv_cache_dtype == FP8_KV:
        transformers.AttentionInterface.register("fp8_kv", _fp8_kv_attention)
        model.set_attn_implementation("fp8_kv")
    elif kv_cache_dtype is not None:
        raise ValueError("the reference models kv_cache_dtype %r or None, not %r" % (FP8_KV, kv_cache_dtype))
    return model.eval()


def greedy(path, prompts, new_tokens, kv_cache_dtype=None):
    """transformers' greedy generate of `new_tokens` tokens after each prompt (lists of token ids),
    never stopping early, by the model in `path` (see load)."""
    model = load(path, kv_cache_dtype)
    out = []
    with torch.no_grad():
        for ids in prompts:
            result = model.generate(torch.tensor([ids]), max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                    do_sample=False, output_logits=True, return_dict_in_generate=True,
                                    eos_token_id=None, pad_token_id=0)
            tokens = result.sequences[0, len(ids):].tolist()
            logits = torch.cat(result.logits).float()  # [steps, vocab]
            top2 = logits.topk(2, -1).values
            logprobs = torch.log_softmax(logits, -1)[torch.arange(len(tokens)), tokens]
            out.append(Greedy(tokens, logprobs.tolist(), (top2[:, 0] - top2[:, 1]).tolist()))
    return out


def save(path, prompts, greedy_runs):
    """Writes prompts (token ids) and their Greedy continuations as JSON."""
    with open(path, "w") as f:
        json.dump({"prompts": prompts, "greedy": [dataclasses.asdict(g) for g in greedy_runs]}, f)


def read(path):
    """(prompts, [Greedy]) as save wrote them."""
    with open(path) as f:
        data = json.load(f)
    return data["prompts"], [Greedy(**g) for g in data["greedy"]]


@dataclasses.dataclass
class Forced:
    """The reference on an engine's own continuation of a prompt (teacher forcing): at each step,
    given the same tokens before it as the engine had, the reference's best token, the margin
    between its two best logits, and the logprob of the token the engine chose. For a mixture of
    experts, `routing_gap`: the smallest gap, over the sequence's tokens and the layers, between the
    last router logit chosen (the k-th) and the next, which bf16 must not bridge either."""

    best: list
    margins: list
    logprobs: list
    routing_gap: object = None


def _routing_gap(router_logits, k):
    gaps = [rl.float().sort(-1, descending=True).values for rl in router_logits]
    return min(float((g[:, k - 1] - g[:, k]).min()) for g in gaps)


def forced(path, prompts, continuations, kv_cache_dtype=None):
    """Forced steps of the model in `path` (see load) on each prompt followed by the engine's
    continuation."""
    model = load(path, kv_cache_dtype)
    k = getattr(model.config, "num_experts_per_tok", None)
    out = []
    with torch.no_grad():
        for ids, cont in zip(prompts, continuations):
            result = model(torch.tensor([list(ids) + list(cont)]), output_router_logits=bool(k))
            steps = result.logits[0].float()[len(ids) - 1:len(ids) - 1 + len(cont)]
            top2 = steps.topk(2, -1)
            chosen = torch.log_softmax(steps, -1)[torch.arange(len(cont)), torch.tensor(cont, dtype=torch.long)]
            out.append(Forced(top2.indices[:, 0].tolist(), (top2.values[:, 0] - top2.values[:, 1]).tolist(),
                              chosen.tolist(), _routing_gap(result.router_logits, k) if k else None))
    return out


@dataclasses.dataclass
class Row:
    """One prompt's comparison. Against the greedy reference: the steps that agree before the first
    divergence, where it is (None: none) and the reference's margin there. Against the forced
    reference, at every step: the steps whose token is the reference's best, the decisive steps
    (margin above the threshold), those of them where the engine chose another token (`wrong`), and
    the largest difference of the chosen tokens' logprobs; for a mixture of experts, the smallest
    routing gap. ok: the full length, nothing wrong, the logprobs within the tolerance, and the
    routing gap (if any) above the margin."""

    prompt: int
    steps: int
    agree: int
    diverged_at: object
    margin_there: object
    same: int
    decisive: int
    wrong: int
    max_logprob_error: float
    routing_gap: object
    ok: bool


def compare(greedy_runs, forced_runs, tokens, logprobs, margin, logprob_error):
    """A Row per prompt: the reference's Greedy and Forced runs against an engine's tokens and the
    logprob of each (lists per prompt); a step is decisive above `margin`, and logprobs may differ
    by `logprob_error`."""
    rows = []
    for i, (ref, f, got, got_lp) in enumerate(zip(greedy_runs, forced_runs, tokens, logprobs)):
        steps = len(ref.tokens)
        agree = next((s for s in range(steps) if s >= len(got) or got[s] != ref.tokens[s]), steps)
        where = agree if agree < steps else None
        decisive = [s for s in range(len(got)) if f.margins[s] > margin]
        wrong = [s for s in decisive if got[s] != f.best[s]]
        same = sum(got[s] == f.best[s] for s in range(len(got)))
        error = max((abs(a - b) for a, b in zip(got_lp, f.logprobs)), default=0.0)
        routed = f.routing_gap is None or f.routing_gap > margin
        rows.append(Row(i, steps, agree, where, ref.margins[agree] if where is not None else None, same,
                        len(decisive), len(wrong), error, f.routing_gap,
                        len(got) == steps and not wrong and error <= logprob_error and routed))
    return rows


def table(rows, title=""):
    """The rows as a text table."""
    routed = any(r.routing_gap is not None for r in rows)
    lines = ([title] if title else []) + [
        "prompt  greedy agree  first divergence (margin)  per-step agree  decisive  wrong  max |dlogprob|"
        + ("  routing gap" if routed else "") + "  ok"]
    for r in rows:
        div = "-" if r.diverged_at is None else "step %d (%.3f)" % (r.diverged_at, r.margin_there)
        gap = "  %11.2f" % r.routing_gap if routed else ""
        lines.append("%6d  %6d/%-5d  %-25s  %8d/%-5d  %8d  %5d  %14.4f%s  %s" % (
            r.prompt, r.agree, r.steps, div, r.same, r.steps, r.decisive, r.wrong, r.max_logprob_error, gap,
            "yes" if r.ok else "NO"))
    return "\n".join(lines)
