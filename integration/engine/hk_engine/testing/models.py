"""Tiny causal language models written from scratch, for running an engine end to end on hk's
interpreter or emulator: a config from transformers' own classes, random weights saved as
safetensors, and a BPE tokenizer trained with `tokenizers` on a text of our own.
Nothing is downloaded.

    write("llama", path)        # a dense Llama (GQA: 4 heads of 64 over 2 KV heads)
    write("qwen3", path)        # Qwen3: q/k norms, heads of 128 (GQA: 2 over 1)
    write("qwen3_moe", path)    # Qwen3-MoE: 8 experts, top-2 routing, heads of 64
    write("llama_awq", path)    # the Llama's weights quantized to 4 bits in AutoAWQ's format
    write("llama_w8a8", path)   # the Llama as a CompressedTensors W8A8 int8 checkpoint
    write("llama_fp8", path)    # ... as a CompressedTensors W8A8 fp8 one (FP8_DYNAMIC)
    write("llama_fp8_block", path)  # ... with fp8 weights in 128 x 128 blocks (FP8_BLOCK)
    write("llama_head40", path) # a Llama with heads of 40, a size hk's attention and rotary do not take

    python -m hk_engine.testing.models KIND DIR   # the same, and DIR/reference.json (see main)

The weights are scaled so that each block changes the residual stream by about as much as the
embedding, and the logits spread over several units: attention and the MLPs decide the next
token, and the top two logits are usually far enough apart that bf16 rounding does not swap them.
Every stored value is exactly representable in bf16 (and, for the AWQ checkpoint, in fp16; the
fp8 checkpoints' scales are fp32, which vLLM keeps), so an engine running in bf16 reads the same
weights as a float32 reference.

The quantized checkpoints are written by hand from the same weights (no quantization library):
llama_awq's in AutoAWQ's format, and the W8A8 ones as llm-compressor writes its presets in
CompressedTensors' format, every projection of the layers quantized, symmetric, the logits' head
left bf16:

    llama_w8a8       W8A8: int8 weights per output channel with a bf16 weight_scale, int8
                     activations quantized per token when the model runs
    llama_fp8        FP8_DYNAMIC: e4m3 weights per output channel with an fp32 weight_scale,
                     e4m3 activations quantized per token when the model runs
    llama_fp8_block  FP8_BLOCK: e4m3 weights with an fp32 weight_scale per 128 x 128 block,
                     e4m3 activations quantized per token per 128 columns when the model runs
                     (the Llama's sizes are all multiples of 128)
"""

import json
import os

import torch

# A few hundred words to train the tokenizer on (and to draw prompts from).
TEXT = """\
The kernel reads a tile of the matrix into shared memory, waits for the copy, and multiplies it
with the tile it holds in registers. Each wave owns sixteen rows; the workgroup owns the block.
When the loop ends, the partial sums are reduced across the waves and written back to memory.
A good schedule keeps the matrix cores busy while the next tile is on its way.
The river runs past the old mill and under the stone bridge before it reaches the sea.
In the morning the fishermen mend their nets, and in the evening they count the catch.
The market opens at seven; bread, cheese, apples and honey are sold from wooden stalls.
Rain fell all night on the hills, and by noon the streams were loud and brown.
A request arrives with a prompt; the scheduler gives it blocks of the cache and a place in the
next batch. Prefill writes the prompt's keys and values; each decode step adds one token.
When memory runs short, a request is preempted and its blocks are freed, to be computed again.
Cached prefixes are found by hashing blocks of tokens, so a shared system prompt is computed once.
Numbers: one, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve.
Colours: red, orange, yellow, green, blue, indigo, violet, black, white, grey.
The quick brown fox jumps over the lazy dog while the cat sleeps in the sun.
She wrote the letter by hand, sealed it with wax and carried it to the post office herself.
Every test must fail when the feature it covers is broken; a test that cannot fail proves nothing.
"""

PROMPTS = [
    "The kernel reads a tile of the matrix",
    "The river runs past the old mill",
    "A request arrives with a prompt; the scheduler gives it blocks of the cache and a place in the next batch. "
    "Prefill writes the prompt's keys and values; each decode step adds one token.",
    "Numbers: one, two, three",
    "Rain fell all night on the hills, and by noon",
    "She wrote the letter by hand",
]

VOCAB = 512
BOS, EOS, UNK = "<s>", "</s>", "<unk>"

_COMMON = dict(vocab_size=VOCAB, hidden_size=256, num_hidden_layers=2, max_position_embeddings=1024,
               rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=0, eos_token_id=1, pad_token_id=1,
               rope_parameters={"rope_type": "default", "rope_theta": 10000.0})

# kind: (transformers config class, its arguments)
SPECS = {
    "llama": ("LlamaConfig", dict(_COMMON, num_attention_heads=4, num_key_value_heads=2, head_dim=64,
                                  intermediate_size=512)),
    "qwen3": ("Qwen3Config", dict(_COMMON, num_attention_heads=2, num_key_value_heads=1, head_dim=128,
                                  intermediate_size=512)),
    "qwen3_moe": ("Qwen3MoeConfig", dict(_COMMON, num_attention_heads=4, num_key_value_heads=2,
                                         intermediate_size=512, moe_intermediate_size=128, num_experts=8,
                                         num_experts_per_tok=2, norm_topk_prob=True, decoder_sparse_step=1)),
    "llama_head40": ("LlamaConfig", dict(_COMMON, hidden_size=160, num_attention_heads=4, num_key_value_heads=2,
                                         head_dim=40, intermediate_size=320)),
}
# Kinds written from another's config: (that kind, how the checkpoint differs).
DERIVED = {"llama_awq": ("llama", "AWQ 4-bit"), "llama_w8a8": ("llama", "W8A8 int8, CompressedTensors"),
           "llama_fp8": ("llama", "W8A8 fp8, CompressedTensors"),
           "llama_fp8_block": ("llama", "W8A8 fp8 in 128 x 128 blocks, CompressedTensors")}
KINDS = tuple(SPECS) + tuple(DERIVED)
FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")

AWQ_GROUP = 64
# AutoAWQ's order of the eight 4-bit values in a 32-bit word: value j of a group of eight columns
# goes to nibble _AWQ_SLOT.index(j).
_AWQ_SLOT = (0, 2, 4, 6, 1, 3, 5, 7)


def tokenizer(path):
    """Trains a BPE tokenizer on TEXT (word pieces marked by "\u2581", as SentencePiece's: every
    token decodes to printable text) and saves it into `path` as transformers loads it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=[BOS, EOS, UNK], show_progress=False)
    tok.train_from_iterator(TEXT.splitlines(), trainer=trainer)
    if tok.get_vocab_size() != VOCAB:  # every id a model may generate must have a token
        raise ValueError("the tokenizer learnt %d tokens from TEXT, not %d" % (tok.get_vocab_size(), VOCAB))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS, unk_token=UNK, pad_token=EOS)
    fast.save_pretrained(path)
    return fast


def config(kind):
    """The transformers config of a model kind (float32; the checkpoint's dtype is set on saving)."""
    import transformers

    class_name, args = SPECS[DERIVED.get(kind, (kind,))[0]]
    return getattr(transformers, class_name)(**args)


def _bf16_exact(t):
    return t.to(torch.bfloat16).float()


def _fill(model, seed):
    """Random weights at scales that make every layer matter (see the module's docstring)."""
    g = torch.Generator().manual_seed(seed)
    hidden = model.config.hidden_size
    values = {}
    for name, p in sorted(model.named_parameters()):
        if p.dim() == 1:  # norms' weights
            values[name] = 0.5 + torch.rand(p.shape, generator=g)
        elif "embed_tokens" in name:
            values[name] = torch.randn(p.shape, generator=g)
        elif "lm_head" in name:
            values[name] = torch.randn(p.shape, generator=g) * (3.0 / hidden ** 0.5)
        else:  # projections, experts and routers: [..., out, in]
            values[name] = torch.randn(p.shape, generator=g) / p.shape[-1] ** 0.5
    if getattr(model.config, "num_experts", None):
        _decisive_routing(model.config, values, g)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(_bf16_exact(values[name]))


ROUTING_CODE = 8.0


def _decisive_routing(cfg, values, g):
    """Routers whose choice of experts bf16 cannot change. With random routers the k-th and
    (k+1)-th router logits of some token are always within rounding of each other, and an engine
    in bf16 then sends it to another expert than a float32 reference does. Here each token's
    embedding holds a code along E orthonormal directions, +ROUTING_CODE for k experts of its own
    and -ROUTING_CODE for the others, and each layer's router reads those directions (permuted per
    layer): the chosen experts' logits stand far above the others', whatever the layers add."""
    experts, k = cfg.num_experts, cfg.num_experts_per_tok
    directions = torch.linalg.qr(torch.randn(cfg.hidden_size, experts, generator=g)).Q.t()  # [E, H]
    embed = "model.embed_tokens.weight"
    code = -torch.ones(values[embed].shape[0], experts)
    for row in code:
        row[torch.randperm(experts, generator=g)[:k]] = 1.0
    values[embed] = values[embed] + ROUTING_CODE * code @ directions
    for name in values:
        if name.endswith("mlp.gate.weight"):
            values[name] = directions[torch.randperm(experts, generator=g)]


def write(kind, path, seed=0):
    """Writes model `kind` (one of KINDS) into directory `path`: config.json, weights as
    safetensors, the tokenizer. Returns `path`."""
    import transformers

    if kind not in KINDS:
        raise ValueError("unknown model kind %r: one of %s" % (kind, ", ".join(KINDS)))
    os.makedirs(path, exist_ok=True)
    cfg = config(kind)
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    _fill(model, seed)
    tokenizer(path)
    if kind == "llama_awq":
        _write_awq(model, path)
        model.generation_config.save_pretrained(path)
    elif kind in W8A8:
        _write_w8a8(model, path, kind)
        model.generation_config.save_pretrained(path)
    else:
        model.to(torch.bfloat16).save_pretrained(path, safe_serialization=True)
    return path


def _quantize(w, group):
    """AWQ's asymmetric 4-bit quantization of a linear weight w [out, in]: (q, zeros, scales), each
    laid out [in or in / group, out] as AWQ stores them (zeros and scales per group of `group` input
    rows). Scales are rounded to bf16 (then exact in fp16 too)."""
    wt = w.t().contiguous()  # [K, N]
    k, n = wt.shape
    grouped = wt.view(k // group, group, n)
    lo, hi = grouped.amin(1), grouped.amax(1)
    scales = _bf16_exact(((hi - lo) / 15).clamp(min=1e-4))
    zeros = torch.round(-lo / scales).clamp(0, 15)
    q = (torch.round(grouped / scales[:, None]) + zeros[:, None]).clamp(0, 15).view(k, n)
    return q.to(torch.int32), zeros.to(torch.int32), scales


def pack(values):
    """int values [R, C] in 0..15 packed eight to an int32 word in AWQ's order: [R, C / 8]."""
    v = values.view(values.shape[0], -1, 8).to(torch.int64)
    word = torch.zeros(v.shape[:2], dtype=torch.int64)
    for nibble, column in enumerate(_AWQ_SLOT):
        word |= v[..., column] << (4 * nibble)
    return torch.where(word >= 2 ** 31, word - 2 ** 32, word).to(torch.int32)


def unpack(words):
    """pack's inverse: [R, C / 8] int32 words -> [R, C] values."""
    w = words.to(torch.int64) & 0xFFFFFFFF
    out = torch.empty(w.shape[0], w.shape[1], 8, dtype=torch.int32)
    for nibble, column in enumerate(_AWQ_SLOT):
        out[..., column] = ((w >> (4 * nibble)) & 0xF).to(torch.int32)
    return out.view(w.shape[0], -1)


def _quantized(name, p):
    return p.dim() == 2 and ".layers." in name and name.endswith("_proj.weight")


def _write_awq(model, path):
    """The AWQ checkpoint of a dense model: every projection of its layers as qweight, qzeros and
    scales (group AWQ_GROUP), the rest in fp16, config.json's quantization_config as AutoAWQ writes it."""
    from safetensors.torch import save_file

    tensors = {}
    for name, p in model.state_dict().items():
        if _quantized(name, p):
            q, z, s = _quantize(p.float(), AWQ_GROUP)
            prefix = name[:-len("weight")]
            tensors[prefix + "qweight"] = pack(q)
            tensors[prefix + "qzeros"] = pack(z)
            tensors[prefix + "scales"] = s.half()
        else:
            tensors[name] = p.half()
    save_file({k: v.contiguous() for k, v in tensors.items()}, os.path.join(path, "model.safetensors"),
              metadata={"format": "pt"})
    cfg = model.config.to_dict()
    cfg["dtype"] = "float16"
    cfg["quantization_config"] = {"bits": 4, "group_size": AWQ_GROUP, "modules_to_not_convert": None,
                                  "quant_method": "awq", "version": "gemm", "zero_point": True}
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


W8A8_QMAX = 127
FP8_MAX = 448.0  # e4m3's largest finite value
FP8_BLOCK = 128  # FP8_BLOCK's weight blocks (128 x 128) and activation groups (128 columns)
# vLLM's QuantFP8 floor of a dynamic activation scale (an all-zero row quantizes to zeros).
FP8_MIN_SCALE = 1.0 / (FP8_MAX * 512.0)

# The W8A8 checkpoints' quantization_config: (format, the weights' and the input activations'
# QuantizationArgs beyond what they share), as compressed-tensors' presets W8A8, FP8_DYNAMIC and
# FP8_BLOCK serialize them (the weights' observer is llm-compressor's; vLLM reads none of it).
_ARGS = {"num_bits": 8, "symmetric": True, "group_size": None, "block_structure": None, "actorder": None,
         "scale_dtype": None, "zp_dtype": None, "observer": None, "observer_kwargs": {}}
W8A8 = {
    "llama_w8a8": ("int-quantized", dict(type="int", strategy="channel"), dict(type="int", strategy="token")),
    "llama_fp8": ("float-quantized", dict(type="float", strategy="channel"), dict(type="float", strategy="token")),
    "llama_fp8_block": ("float-quantized", dict(type="float", strategy="block", block_structure=[FP8_BLOCK] * 2),
                        dict(type="float", strategy="group", group_size=FP8_BLOCK)),
}


def _per_element(scale, shape):
    """A weight_scale ([out, 1] per channel, [out / b, in / b] per block) repeated to the weight's shape."""
    return scale.repeat_interleave(shape[0] // scale.shape[0], 0).repeat_interleave(shape[1] // scale.shape[1], 1)


def _quantize_w8a8(w, kind):
    """(q, weight_scale) of a float32 projection weight w [out, in] in checkpoint `kind`'s scheme,
    symmetric, W = q * scale: int8 per output channel with bf16 scales; e4m3 per output channel
    or per 128 x 128 block (the blocks' largest value to 448) with fp32 scales."""
    if kind == "llama_w8a8":
        scale = _bf16_exact((w.abs().amax(1, keepdim=True) / W8A8_QMAX).clamp(min=1e-6))
        return torch.round(w / scale).clamp(-W8A8_QMAX, W8A8_QMAX).to(torch.int8), scale.to(torch.bfloat16)
    if kind == "llama_fp8":
        amax = w.abs().amax(1, keepdim=True)
    else:
        n, k = w.shape
        if n % FP8_BLOCK or k % FP8_BLOCK:
            raise ValueError("%s's projections are blocks of %d: a weight of %s is not" % (kind, FP8_BLOCK, tuple(w.shape)))
        amax = w.reshape(n // FP8_BLOCK, FP8_BLOCK, k // FP8_BLOCK, FP8_BLOCK).abs().amax((1, 3))
    scale = (amax / FP8_MAX).clamp(min=1e-12)
    return (w / _per_element(scale, w.shape)).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn), scale


def _write_w8a8(model, path, kind):
    """The CompressedTensors W8A8 checkpoint `kind` (one of W8A8) of a dense model: every
    projection of its layers as 8-bit weights [out, in] with a weight_scale (_quantize_w8a8), the
    rest (embeddings, norms, the logits' head) in bf16; config.json's quantization_config as
    llm-compressor writes it, activations quantized dynamically as W8A8[kind] says."""
    from safetensors.torch import save_file

    tensors = {}
    for name, p in model.state_dict().items():
        if _quantized(name, p):
            tensors[name], tensors[name[:-len("weight")] + "weight_scale"] = _quantize_w8a8(p.float(), kind)
        else:
            tensors[name] = p.to(torch.bfloat16)
    save_file({k: v.contiguous() for k, v in tensors.items()}, os.path.join(path, "model.safetensors"),
              metadata={"format": "pt"})
    fmt, weights, activations = W8A8[kind]
    cfg = model.config.to_dict()
    cfg["dtype"] = "bfloat16"
    cfg["quantization_config"] = {
        "quant_method": "compressed-tensors", "format": fmt, "quantization_status": "compressed",
        "ignore": ["lm_head"], "kv_cache_scheme": None,
        "config_groups": {"group_0": {
            "targets": ["Linear"], "output_activations": None,
            "weights": dict(_ARGS, dynamic=False, observer="memoryless_minmax", **weights),
            "input_activations": dict(_ARGS, dynamic=True, **activations)}}}
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def _quantization_config(path):
    with open(os.path.join(path, "config.json")) as f:
        return json.load(f).get("quantization_config", {})


def quant_method(path):
    """The quant_method of the checkpoint in `path` (None: not quantized)."""
    return _quantization_config(path).get("quant_method")


def dequantized_state(path):
    """The float32 state dict a quantized checkpoint in `path` stands for: AWQ's W = (q - z) * s,
    transposed back to [out, in]; W8A8's W = q * weight_scale (per channel or per block); other
    tensors as stored."""
    from safetensors.torch import load_file

    stored = load_file(os.path.join(path, "model.safetensors"))
    if quant_method(path) == "compressed-tensors":
        return {name: t.float() * _per_element(stored[name + "_scale"].float(), t.shape)
                if name + "_scale" in stored else t.float()
                for name, t in stored.items() if not name.endswith(".weight_scale")}
    group = _quantization_config(path)["group_size"]
    state = {}
    for name, t in stored.items():
        if name.endswith(".qweight"):
            prefix = name[:-len("qweight")]
            q = unpack(t).float()
            z = unpack(stored[prefix + "qzeros"]).float().repeat_interleave(group, 0)
            s = stored[prefix + "scales"].float().repeat_interleave(group, 0)
            state[prefix + "weight"] = ((q - z) * s).t().contiguous()
        elif not name.endswith((".qzeros", ".scales")):
            state[name] = t.float()
    return state


def fake_quant(x, kind, group=None):
    """x quantized and dequantized in float32 as a W8A8 model's dynamic activations are, per token
    (per `group` columns of each token when given), symmetric: "int" as int8 (scale = max|x| / 127,
    round to nearest), "float" as vLLM's QuantFP8 does e4m3 (scale = max|x| / 448 with its floor,
    clamp to +-448, round to e4m3)."""
    shape = x.shape
    g = x.reshape(*shape[:-1], -1, group or shape[-1])
    amax = g.abs().amax(-1, keepdim=True)
    if kind == "int":
        scale = amax.clamp(min=1e-10) / W8A8_QMAX
        q = torch.round(g / scale).clamp(-W8A8_QMAX, W8A8_QMAX)
    elif kind == "float":
        scale = (amax / FP8_MAX).clamp(min=FP8_MIN_SCALE)
        q = (g / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn).to(g.dtype)
    else:
        raise ValueError("activations of type %r: the W8A8 checkpoints' are 'int' or 'float'" % kind)
    return (q * scale).reshape(shape)


def quantize_activations(model, path):
    """Makes every projection of the model's layers quantize its input (fake_quant, in float32)
    as the W8A8 checkpoint in `path` says its dynamic activations are (per token, or per token
    per group): the computation the checkpoint stands for. Returns the model."""
    args = _quantization_config(path)["config_groups"]["group_0"]["input_activations"]
    if not args.get("dynamic") or args["strategy"] not in ("token", "group"):
        raise ValueError("the reference quantizes dynamic activations per token or per group, not %s" % args)
    group = args["group_size"] if args["strategy"] == "group" else None

    def hook(module, inputs):
        return (fake_quant(inputs[0], args["type"], group),) + tuple(inputs[1:])

    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and _quantized(name + ".weight", module.weight):
            module.register_forward_pre_hook(hook)
    return model


NEW_TOKENS = 16


def main(argv=None):
    """Writes model KIND into DIR and, beside it, reference.json: PROMPTS as the model's tokenizer
    encodes them and transformers' float32 greedy continuation of each (NEW_TOKENS tokens)."""
    import argparse

    from transformers import AutoTokenizer

    from hk_engine.testing import reference

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("dir")
    args = parser.parse_args(argv)
    write(args.kind, args.dir)
    tok = AutoTokenizer.from_pretrained(args.dir)
    prompts = [tok(p)["input_ids"] for p in PROMPTS]
    reference.save(os.path.join(args.dir, reference.FILE), prompts,
                   reference.greedy(args.dir, prompts, NEW_TOKENS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
