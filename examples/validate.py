"""Every hk op at the shapes of an LLM layer, against torch: correctness wherever HK_DEVICE runs
(a GPU, the interpreter, the emulator for HK_ARCH), and on a GPU its time beside torch's and
beside hk.perf's prediction for the GPU's architecture.

    ./bazelw run //examples:validate                        # the interpreter (no GPU here)
    HK_DEVICE=emu HK_ARCH=gfx950 ./bazelw run //examples:validate -- --model=small
    ./bazelw run //examples:validate -- --ops=linear,rotary_embedding --tokens=128

A model is the dimensions of one decoder layer (hidden size, heads, KV heads, head size, MLP
width, vocabulary); `--tokens` the tokens of the batch. Each line: the op, its shapes, the
largest error against torch and the tolerance it is held to (bf16: 1.6e-2 relative; fp32
accumulation of bf16 products, 1e-2 of the output's scale), then on a GPU microseconds for hk
and for torch. The exit code is 1 when an op is off.
"""

import dataclasses
import sys

import torch
import torch.nn.functional as F
from absl import app, flags

import hk
import hk.ops
import hk.perf
from common import ensure_runner, timed
from hk.interp import philox
from hk.ops import rotary

FLAGS = flags.FLAGS


@dataclasses.dataclass(frozen=True)
class Model:
    hidden: int
    heads: int
    kv_heads: int
    head: int
    mlp: int
    vocab: int


MODELS = {
    # Llama-3-8B's layer, and one small enough for the emulator.
    "llama3-8b": Model(4096, 32, 8, 128, 14336, 128256),
    "small": Model(512, 8, 2, 64, 1024, 4096),
}
BF16 = torch.bfloat16
BF16_TOL = (1.6e-2, 1e-2, False)
EXACT = (0.0, 0.0, False)


def cases(m, tokens, device):
    """(name, shapes, hk call, torch call, tolerance): each op at this layer's shapes. The calls
    return what is compared; the torch one is the reference (and, on a GPU, what hk is timed
    against). A tolerance is (rtol, atol, whether atol is relative to the output's largest
    magnitude); None is bf16's."""
    g = torch.Generator().manual_seed(0)

    def rnd(*shape, scale=1.0, dtype=BF16):
        return (torch.randn(*shape, generator=g) * scale).to(dtype).to(device)

    x = rnd(tokens, m.hidden)
    res = rnd(tokens, m.hidden)
    w = rnd(m.hidden, scale=0.1) + 1
    b = rnd(m.hidden, scale=0.1)
    gate_up = rnd(tokens, 2 * m.mlp)
    q_size, kv_size = m.heads * m.head, m.kv_heads * m.head
    w_qkv = rnd(q_size + 2 * kv_size, m.hidden, scale=m.hidden ** -0.5)
    w_down = rnd(m.hidden, m.mlp, scale=m.mlp ** -0.5)
    gemm_tol = (1e-2, 1e-2, True)  # fp32 sums of bf16 products, in another order
    out = [
        ("rms_norm", "%dx%d" % (tokens, m.hidden), lambda: torch.ops.hk.rms_norm(x, w, 1e-6),
         lambda: F.rms_norm(x.float(), (m.hidden,), w.float(), 1e-6).to(BF16), None),
        ("fused_add_rms_norm", "%dx%d" % (tokens, m.hidden), lambda: torch.ops.hk.fused_add_rms_norm(x, res, w, 1e-6)[0],
         lambda: F.rms_norm((x.float() + res.float()).to(BF16).float(), (m.hidden,), w.float(), 1e-6).to(BF16), None),
        ("layer_norm", "%dx%d" % (tokens, m.hidden), lambda: torch.ops.hk.layer_norm(x, w, b, 1e-5),
         lambda: F.layer_norm(x.float(), (m.hidden,), w.float(), b.float(), 1e-5).to(BF16), None),
        ("softmax", "%dx%d" % (tokens, m.vocab // 8), lambda: torch.ops.hk.softmax(gate_up[:, :m.vocab // 8].contiguous(), None),
         lambda: torch.softmax(gate_up[:, :m.vocab // 8].float(), -1).to(BF16), (1.6e-2, 1e-4, False)),
        ("silu_and_mul", "%dx%d" % (tokens, 2 * m.mlp), lambda: torch.ops.hk.silu_and_mul(gate_up),
         lambda: (F.silu(gate_up[:, :m.mlp].float()) * gate_up[:, m.mlp:].float()).to(BF16), None),
        ("gelu_tanh_and_mul", "%dx%d" % (tokens, 2 * m.mlp), lambda: torch.ops.hk.gelu_tanh_and_mul(gate_up),
         lambda: (F.gelu(gate_up[:, :m.mlp].float(), approximate="tanh") * gate_up[:, m.mlp:].float()).to(BF16), None),
        ("linear (qkv)", "%dx%d . %dx%d" % (tokens, m.hidden, q_size + 2 * kv_size, m.hidden),
         lambda: torch.ops.hk.linear(x, w_qkv), lambda: F.linear(x.float(), w_qkv.float()).to(BF16), gemm_tol),
        ("linear (down)", "%dx%d . %dx%d" % (tokens, m.mlp, m.hidden, m.mlp),
         lambda: torch.ops.hk.linear(gate_up[:, :m.mlp], w_down),
         lambda: F.linear(gate_up[:, :m.mlp].float(), w_down.float()).to(BF16), gemm_tol),
    ]

    # The output projection as an AWQ checkpoint has it: 4-bit weights, groups of 128, fp16.
    words = lambda rows, cols: torch.randint(-2 ** 31, 2 ** 31 - 1, (rows, cols), generator=g,  # noqa: E731
                                             dtype=torch.int64).to(torch.int32).to(device)
    x16 = x.to(torch.float16)
    qweight, qzeros = words(m.hidden, m.hidden // 8), words(m.hidden // 128, m.hidden // 8)
    qscales = (torch.rand(m.hidden // 128, m.hidden, generator=g) * 0.01).to(torch.float16).to(device)
    out.append(("awq_gemm (o_proj)", "%dx%d . 4-bit %dx%d, groups of 128" % (tokens, m.hidden, m.hidden, m.hidden),
                lambda: torch.ops.hk.awq_gemm(x16, qweight, qscales, qzeros),
                lambda: hk.ops.awq.reference(x16, qweight, qscales, qzeros), gemm_tol))
    # And as a GPTQ checkpoint: weights packed along K, groups of 128 in order, and act-order
    # (g_idx) where the target takes it.
    gq_weight, gq_zeros = words(m.hidden // 8, m.hidden), words(m.hidden // 128, m.hidden // 8)
    no_g_idx = torch.empty(0, dtype=torch.int32, device=device)
    out.append(("gptq_gemm (o_proj)", "%dx%d . 4-bit %dx%d, groups of 128" % (tokens, m.hidden, m.hidden, m.hidden),
                lambda: torch.ops.hk.gptq_gemm(x16, gq_weight, gq_zeros, qscales, no_g_idx),
                lambda: hk.ops.gptq.reference(x16, gq_weight, gq_zeros, qscales, no_g_idx), gemm_tol))
    if hk.ops.registry.launch_arch() not in hk.ops.gptq.ONE_GROUP_PER_STEP:
        g_idx = (torch.arange(m.hidden) // 128)[torch.randperm(m.hidden, generator=g)].to(torch.int32).to(device)
        out.append(("gptq_gemm (act-order)", "%dx%d . 4-bit %dx%d, g_idx" % (tokens, m.hidden, m.hidden, m.hidden),
                    lambda: torch.ops.hk.gptq_gemm(x16, gq_weight, gq_zeros, qscales, g_idx),
                    lambda: hk.ops.gptq.reference(x16, gq_weight, gq_zeros, qscales, g_idx), gemm_tol))

    # A mixture-of-experts MLP of 8 experts (Mixtral's), each 1/8 of the layer's MLP wide, top 2.
    experts, inter = 8, m.mlp // 8
    w1 = rnd(experts, 2 * inter, m.hidden, scale=m.hidden ** -0.5)
    w2 = rnd(experts, m.hidden, inter, scale=inter ** -0.5)
    topk_weights, topk_ids = torch.topk(torch.softmax(torch.randn(tokens, experts, generator=g), -1), 2)
    topk_weights, topk_ids = topk_weights.to(device), topk_ids.to(device)
    out.append(("fused_moe", "%dx%d, %d experts %dx%d, top 2" % (tokens, m.hidden, experts, 2 * inter, m.hidden),
                lambda: torch.ops.hk.fused_moe(x, w1, w2, topk_weights, topk_ids),
                lambda: hk.ops.moe.reference(x, w1, w2, topk_weights, topk_ids), gemm_tol))

    positions = torch.randint(0, 4096, (tokens,), generator=g).to(device)
    cache = rnd(4096, m.head)
    qkv = rnd(tokens, q_size + 2 * kv_size)

    def rope(neox):
        q, k = qkv[:, :q_size].clone(), qkv[:, q_size:q_size + kv_size].clone()
        torch.ops.hk.rotary_embedding(positions, q, k, m.head, cache, neox)
        return torch.cat([q, k], -1)

    def rope_ref(neox):
        return torch.cat([rotary.reference(positions, qkv[:, :q_size], m.head, cache, neox),
                          rotary.reference(positions, qkv[:, q_size:q_size + kv_size], m.head, cache, neox)], -1)

    out += [("rotary_embedding (%s)" % ("neox" if neox else "interleaved"),
             "q %dx%d, k %dx%d" % (tokens, q_size, tokens, kv_size),
             (lambda neox=neox: rope(neox)), (lambda neox=neox: rope_ref(neox)), None) for neox in (True, False)]

    q4 = rnd(1, m.heads, tokens, m.head)
    k4, v4 = rnd(1, m.kv_heads, tokens, m.head), rnd(1, m.kv_heads, tokens, m.head)
    scale = m.head ** -0.5
    out.append(("flash_attention (causal)", "%dx%dx%d, %d KV heads" % (m.heads, tokens, m.head, m.kv_heads),
                lambda: torch.ops.hk.flash_attention(q4, k4, v4, scale, True),
                lambda: F.scaled_dot_product_attention(q4.float(), k4.float(), v4.float(), is_causal=True, scale=scale,
                                                       enable_gqa=True).to(BF16), gemm_tol))

    # Decode: one query per sequence against its paged cache (block size 16, blocks shuffled).
    seqs, bs = max(2, tokens // 8), 16
    lens = torch.randint(1, 300, (seqs,), generator=g).to(torch.int32)
    per_seq = int(-(-lens.max() // bs))
    pool = seqs * per_seq + 3
    tables = torch.randperm(pool, generator=g)[:seqs * per_seq].view(seqs, per_seq).to(torch.int32).to(device)
    kcache, vcache = rnd(pool, bs, m.kv_heads, m.head), rnd(pool, bs, m.kv_heads, m.head)
    q1 = rnd(seqs, m.heads, m.head)
    lens = lens.to(device)

    def decode_ref():
        out = []
        for s_ in range(seqs):
            n = int(lens[s_])
            blocks = tables[s_, :-(-n // bs)].long()
            k_ = kcache[blocks].reshape(-1, m.kv_heads, m.head)[:n].transpose(0, 1).unsqueeze(0)
            v_ = vcache[blocks].reshape(-1, m.kv_heads, m.head)[:n].transpose(0, 1).unsqueeze(0)
            out.append(F.scaled_dot_product_attention(q1[s_:s_ + 1, :, None].float(), k_.float(), v_.float(),
                                                      scale=scale, enable_gqa=True)[0, :, 0])
        return torch.stack(out).to(BF16)

    out.append(("paged_attention_decode", "%d seqs of up to %d, %d heads" % (seqs, int(lens.max()), m.heads),
                lambda: torch.ops.hk.paged_attention_decode(q1, kcache, vcache, tables, lens, scale), decode_ref,
                gemm_tol))

    # Prefill: each sequence's last few tokens new (the batch's `tokens` in all), causal against
    # the whole sequence in the same cache.
    new = torch.full((seqs,), tokens // seqs, dtype=torch.int32)
    new[: tokens % seqs] += 1
    new = torch.minimum(new, lens.cpu())
    starts = torch.cat([torch.zeros(1, dtype=torch.int32), new.cumsum(0).to(torch.int32)]).to(device)
    qp = rnd(int(new.sum()), m.heads, m.head)

    def prefill_ref():
        out = torch.empty(qp.shape, dtype=BF16, device=device)
        for s_ in range(seqs):
            a, b, n = int(starts[s_]), int(starts[s_ + 1]), int(lens[s_])
            blocks = tables[s_, :-(-n // bs)].long()
            k_ = kcache[blocks].reshape(-1, m.kv_heads, m.head)[:n].transpose(0, 1).float()
            v_ = vcache[blocks].reshape(-1, m.kv_heads, m.head)[:n].transpose(0, 1).float()
            mask = torch.ones(b - a, n, dtype=torch.bool, device=device).tril(n - (b - a))
            out[a:b] = F.scaled_dot_product_attention(qp[a:b].transpose(0, 1).float(), k_, v_, attn_mask=mask,
                                                      scale=scale, enable_gqa=True).transpose(0, 1).to(BF16)
        return out

    out.append(("paged_attention_prefill", "%d seqs, %d new tokens, %d heads" % (seqs, int(new.sum()), m.heads),
                lambda: torch.ops.hk.paged_attention_prefill(qp, kcache, vcache, tables, lens, starts,
                                                             int(new.max()), scale), prefill_ref, gemm_tol))

    table = rnd(m.vocab, m.hidden)
    ids = torch.randint(0, m.vocab, (tokens,), generator=g).to(device)
    out.append(("embedding", "%dx%d, %d ids" % (m.vocab, m.hidden, tokens), lambda: torch.ops.hk.embedding(table, ids),
                lambda: F.embedding(ids, table), EXACT))

    blocks, block = max(4, -(-2 * tokens // 16)), 16
    slots = torch.randperm(blocks * block, generator=g)[:tokens].to(device)
    k3, v3 = qkv[:, q_size:q_size + kv_size].view(tokens, m.kv_heads, m.head), qkv[:, q_size + kv_size:].view(
        tokens, m.kv_heads, m.head)
    kc0 = rnd(blocks, block, m.kv_heads, m.head)

    def cache_write():
        kc, vc = kc0.clone(), kc0.clone()
        torch.ops.hk.reshape_and_cache_flash(k3, v3, kc, vc, slots)
        return torch.cat([kc, vc])

    def cache_write_ref():
        kc, vc = kc0.clone(), kc0.clone()
        kc.view(-1, m.kv_heads, m.head).index_copy_(0, slots, k3)
        vc.view(-1, m.kv_heads, m.head).index_copy_(0, slots, v3)
        return torch.cat([kc, vc])

    out.append(("reshape_and_cache_flash", "%d tokens, %d x %d slots" % (tokens, blocks, block), cache_write,
                cache_write_ref, EXACT))

    def quant_ref(qdtype, qmax):
        amax = x.float().abs().amax(-1, keepdim=True).clamp(min=1e-30)
        v = x.float() / (amax / qmax)
        q = torch.round(v).clamp(-128, 127).to(qdtype) if qdtype == torch.int8 else v.clamp(-qmax, qmax).to(qdtype)
        return q.float()

    for qdtype, qmax in ((torch.int8, 127.0), (torch.float8_e4m3fn, 448.0)):
        out.append(("quant_per_row (%s)" % str(qdtype).replace("torch.", ""), "%dx%d" % (tokens, m.hidden),
                    (lambda qdtype=qdtype: torch.ops.hk.quant_per_row(x, qdtype)[0].float()),
                    (lambda qdtype=qdtype, qmax=qmax: quant_ref(qdtype, qmax)), EXACT))

    out.append(("dropout", "%dx%d" % (tokens, m.hidden), lambda: torch.ops.hk.dropout(x, 0.1, 7),
                lambda: torch.where(philox.uniform(7, torch.arange(x.numel(), dtype=torch.int32)).reshape(x.shape).to(device)
                                    > 0.1, x.float() / 0.9, 0.0).to(BF16), None))
    return out


def predicted(call):
    """hk.perf's prediction of a call's launches on this GPU's architecture, beside its time."""
    try:
        launches = hk.perf.predict_call(call)
    except hk.errors.HKError as e:
        return "(none: %s)" % str(e).splitlines()[0]
    error = max(p.error for p in launches)
    return "%8.1f us (model error +-%.0f%%)" % (sum(p.seconds for p in launches) * 1e6, 100 * error)


def run(m, tokens, only, repeat, device):
    failed = []
    for name, shapes, ours, theirs, tol in cases(m, tokens, device):
        if only and name.split(" ")[0] not in only:
            continue
        try:
            got, want = ours(), theirs()
            rtol, atol, relative = tol or BF16_TOL
            if relative:
                atol *= want.float().abs().max().item()
            err = (got.float() - want.float()).abs().max().item()
            ok = torch.allclose(got.float(), want.float(), rtol=rtol, atol=atol)
        except hk.errors.HKError as e:
            print("%-30s %-34s refused: %s" % (name, shapes, str(e).splitlines()[0]))
            failed.append(name)
            continue
        line = "%-30s %-34s max err %-9.3g %s" % (name, shapes, err, "ok" if ok else "OFF")
        if repeat:
            line += "   hk %8.1f us   torch %8.1f us" % (timed(ours, repeat) * 1e6, timed(theirs, repeat) * 1e6)
            line += "   predicted %s" % predicted(ours)
        print(line)
        if not ok:
            failed.append(name)
    return failed



def main(argv):
    del argv
    runner = ensure_runner()
    device = "cuda" if runner == "gpu" else "cpu"
    m = MODELS[FLAGS.model]
    only = set(FLAGS.ops) if FLAGS.ops else None
    print("%s, %d tokens, on %s%s" % (FLAGS.model, FLAGS.tokens, runner,
                                      "" if runner == "gpu" else " for " + hk.dsl.kernel.default_arch()))
    failed = run(m, FLAGS.tokens, only, FLAGS.repeat if runner == "gpu" else 0, device)
    if failed:
        print("off: %s" % ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    flags.DEFINE_enum("model", "llama3-8b", sorted(MODELS), "the layer's dimensions")
    flags.DEFINE_integer("tokens", 32, "tokens in the batch")
    flags.DEFINE_list("ops", [], "only these ops (the first word of their names)")
    flags.DEFINE_integer("repeat", 20, "timed repetitions on a GPU")
    app.run(main)
