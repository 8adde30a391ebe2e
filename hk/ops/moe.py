"""Mixture-of-experts layers as vLLM's fused_moe computes them: tokens routed to their top-k
experts are sorted by expert into blocks, each block multiplied by its expert's weights.

    moe_align_block_size(topk_ids, block_size, num_experts, expert_map=None)
            -> (sorted_ids, expert_ids, num_tokens_post_pad)
        topk_ids [tokens, top_k] (int32 or int64): each token's experts. The flat ids
        token * top_k + j grouped by expert, each expert's run padded to a multiple of
        block_size with the id topk_ids.numel(); sorted_ids has the host-known length
        topk_ids.numel() + num_experts * (block_size - 1) (so no call waits for the counts),
        expert_ids one expert per block (-1 past the last run, or where expert_map maps the
        expert to -1: an expert of another rank), num_tokens_post_pad [1] the runs' length.

    moe_gemm_out(out, a, w, topk_weights, sorted_ids, expert_ids, num_tokens_post_pad, top_k,
                 block_size, mul_routed_weight)
        out[i] = a[i // top_k] · w[e]ᵀ for every flat id i of a block of expert e (times
        topk_weights[i] with mul_routed_weight), what vLLM's invoke_fused_moe_kernel computes:
        a [tokens, K], w [E, N, K], out [tokens * top_k, N] (or [tokens, top_k, N]); the rows
        of a block of expert -1 are zeros; pads and blocks past num_tokens_post_pad write
        nothing.

    fused_moe(x, w1, w2, topk_weights, topk_ids, expert_map=None) -> out
        sum over j of topk_weights[t, j] * (silu_and_mul(x[t] · w1[e]ᵀ) · w2[e]ᵀ), e =
        topk_ids[t, j]: w1 [E, 2I, K] (gate and up), w2 [E, K, I]; bf16 or fp16.

A workgroup owns a block of sorted ids (one expert's) and BN columns, a wave 16 of the ids: the
expert's weight tile (by batch index) goes through LDS, shared by the block's waves and issued a
step ahead; each wave gathers its ids' rows of `a` (a pad reads zeros), accumulates in fp32 and
scatters the rows to their ids (pads dropped). A block past the padded runs multiplies nothing.
fused_moe picks the block by the rows per expert (block_for): 16, 32 or 64, unless
hk/tuned/<arch>.json records one for the layer's bucket (FUSED_MOE: the block searched per
layer and range of rows per expert).

The align step is a stable sort by expert and a few scans, in torch (its sort is the GPU's
fastest); the grouping, the products, the activation and the weighted sum are hk kernels.
"""

import functools
import os

import torch

import hk
from hk import tuned
from hk.autotune.space import space
from hk.autotune.tunable import Launch, Tunable
from hk.ops import elementwise, gemm, indices, registry

TILE = 16
BN = 128
BK = 32
SUM_BN = 64  # columns per wave of the weighted sum
MAX_BLOCK = 8 * TILE  # the grouped GEMM's largest block: a workgroup of 8 waves


@hk.func
def _ids(ids, t, like, bound, top_k):
    """Sorted ids 16t .. 16t + 15 and the rows of `a` they read (id // top_k), as i32 "col"
    vectors distributed as the rows of tiles of dtype `like` are; an id at or past `bound`
    (a pad) and a slot past the vector's end read as indices.NONE (gathered as zeros, dropped
    by scatters)."""
    inside = indices.masked(ids, t, like)
    flat = hk.where(inside < bound, inside, indices.NONE)
    rows = flat if top_k == 1 else hk.where(flat < 0, flat, flat / top_k)
    return hk.row_max(flat), hk.row_max(rows)


@functools.lru_cache(maxsize=None)
def moe_gemm_kernel(dtype, top_k, weighted, block=TILE):
    """The grouped GEMM for `dtype` operands, `top_k` flat ids per row of `a`, the routing
    weights applied (weighted) or not, and blocks of `block` sorted ids (a multiple of 16): a
    workgroup per block and BN columns, a wave per 16 of its ids."""
    if block % TILE or not 0 < block <= MAX_BLOCK:
        raise ValueError("the block is a multiple of 16 sorted ids up to %d, not %r" % (MAX_BLOCK, block))
    waves = block // TILE

    @hk.kernel(grid=lambda p: (hk.cdiv(p.w.rows, BN), hk.cdiv(p.ids.rows, block)), warps=waves,
               name="moe_gemm_%s_k%d_b%d%s" % (dtype.name, top_k, block, "_weighted" if weighted else ""))
    def moe_gemm(a: hk.Tensor[dtype], w: hk.Tensor[dtype], ids: hk.Tensor[hk.i32], experts: hk.Tensor[hk.i32],
                 padded: hk.Tensor[hk.i32], weights: hk.Tensor[hk.fp32], out: hk.Tensor[dtype]):
        # a [tokens, K]; w [E, 1, N, K] (the expert is the batch index); ids [P, 1] sorted flat
        # ids; experts [P / block, 1]; padded [1, 1]; weights [tokens * top_k, 1]; out
        # [tokens * top_k, N].
        n, blk = hk.arch.block_idx.x, hk.arch.block_idx.y
        t = blk * waves + hk.arch.warp_id()  # the wave's 16 ids
        # 1 for a block within the padded runs, 0 past them (then nothing is read or written).
        live = hk.minimum(hk.maximum(padded.load_scalar(0, 0, 0, 0) - blk * block, 0), 1)
        e = experts.load_scalar(0, 0, blk, 0)
        flat, rows = _ids(ids, t, dtype, live * out.rows, top_k)
        # The expert's weight tile goes through LDS (shared by the block's waves), issued a step
        # ahead; each wave gathers its rows of `a` into registers.
        w_lds = hk.lds.alloc(hk.ST(dtype, BN, BK, 2))
        hk.lds.commit(w_lds, 0, hk.lds.issue(w_lds, w, hk.tile_coord(e, 0, n, 0)))
        hk.arch.barrier()
        acc = hk.zeros(hk.RT(hk.fp32, TILE, BN))
        kstep = gemm.widest_k(dtype)  # B is read in pieces of the matrix instruction's K (registers)
        for k in hk.range(hk.cdiv(a.cols, BK) * live):
            buf = k % 2
            w_next = hk.lds.issue(w_lds, w, hk.tile_coord(e, 0, n, k + 1))
            for kk in range(BK // kstep):
                x = hk.gather(a, hk.tile_coord(0, 0, 0, k * (BK // kstep) + kk), rows, hk.RT(dtype, TILE, kstep))
                acc = hk.mma_ABt(x, w_lds[buf].subtile(BN, kstep, 0, kk).load(hk.RT(dtype, BN, kstep)), acc)
            hk.lds.commit(w_lds, 1 - buf, w_next)
            hk.arch.barrier()
        if weighted:
            # The ids again, distributed as a 32-bit tile's rows are, for the weights' gather.
            wide, _ = _ids(ids, t, hk.fp32, live * out.rows, 1)
            scale = hk.row_sum(hk.gather(weights, hk.tile_coord(0, 0, 0, 0), wide, hk.RT(hk.fp32, TILE, 16)))
            acc = hk.mul_row(acc, scale)
        hk.scatter(out, hk.tile_coord(0, 0, 0, n), flat, acc.to(dtype))

    return moe_gemm


@functools.lru_cache(maxsize=None)
def moe_sum_kernel(dtype):
    """out[t] = the sum over j of y's depth j at row t (each token's top-k rows), in fp32 in
    that order."""

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, SUM_BN), hk.cdiv(p.out.rows, TILE)), name="moe_sum_%s" % dtype.name)
    def moe_sum(y: hk.Tensor[dtype], out: hk.Tensor[dtype]):
        # y [1, top_k, tokens, N]: depth j holds each token's j-th expert's rows.
        n, t = hk.arch.block_idx.x, hk.arch.block_idx.y
        acc = hk.zeros(hk.RT(hk.fp32, TILE, SUM_BN))
        for j in hk.range(y.depth):
            acc = acc + y[0, j, t, n].load(hk.RT(dtype, TILE, SUM_BN)).to(hk.fp32)
        out[0, 0, t, n] = acc.to(dtype)

    return moe_sum


# The align step ---------------------------------------------------------------------------------

def max_padded(numel, block_size, num_experts):
    """sorted_ids' length: every id, and up to block_size - 1 pads per expert."""
    return numel + num_experts * (block_size - 1)


def blocks_of(total, block_size):
    return (total + block_size - 1) // block_size  # (also of a SymInt, under torch.compile)


def align(topk_ids, block_size, num_experts, expert_map=None):
    op = "moe_align_block_size"
    if topk_ids.dtype not in (torch.int32, torch.int64):
        raise registry.LaunchError("hk.ops.%s: topk_ids are %s" % (op, topk_ids.dtype), hint="pass int32 or int64")
    if block_size <= 0 or block_size % TILE or num_experts <= 0:
        raise registry.LaunchError("hk.ops.%s: block_size %d, num_experts %d: the block size is a positive "
                                   "multiple of %d and there is at least one expert" % (op, block_size, num_experts, TILE))
    dev = topk_ids.device
    flat = topk_ids.reshape(-1).long()
    numel = flat.numel()
    total = max_padded(numel, block_size, num_experts)
    # An id outside [0, num_experts) belongs to no run (its expert slot is the extra last one).
    expert = torch.where((flat >= 0) & (flat < num_experts), flat, num_experts)
    counts = torch.zeros(num_experts + 1, dtype=torch.long, device=dev).scatter_add_(0, expert, torch.ones_like(expert))
    runs = (counts[:num_experts] + block_size - 1) // block_size * block_size
    ends = torch.cumsum(runs, 0)
    order = torch.sort(expert, stable=True).indices
    by_expert = expert[order]
    first = torch.cumsum(counts, 0) - counts  # where each expert's ids start in `order`
    rank = torch.arange(numel, device=dev) - first[by_expert]
    starts = torch.cat([ends.new_zeros(1), ends])  # the extra expert's "run" starts past all
    dest = torch.where(by_expert < num_experts, starts[by_expert] + rank, total)
    sorted_ids = torch.full((total + 1,), numel, dtype=torch.int32, device=dev)
    sorted_ids.scatter_(0, dest, order.to(torch.int32))
    blocks = torch.arange(blocks_of(total, block_size), device=dev) * block_size
    owner = torch.searchsorted(ends, blocks, right=True)
    if expert_map is not None:
        owner = expert_map.to(dev).long()[owner.clamp(max=num_experts - 1)]
    expert_ids = torch.where(blocks < ends[-1], owner, -1).to(torch.int32)
    return sorted_ids[:total], expert_ids, ends[-1:].to(torch.int32)


# The grouped GEMM and the layer -----------------------------------------------------------------

def _int32_vector(op, name, t, device):
    if t.dtype != torch.int32 or t.dim() != 1 or t.device != device:
        raise registry.LaunchError("hk.ops.%s: %s is %s %s on %s; it must be a 1-D int32 tensor on %s"
                                   % (op, name, t.dtype, tuple(t.shape), t.device, device))
    return t.contiguous().view(-1, 1)


def launch_gemm(out, a, w, topk_weights, sorted_ids, expert_ids, num_tokens_post_pad, top_k, block_size,
                mul_routed_weight, op="moe_gemm"):
    dtype = registry.dtype_of(op, a, (torch.bfloat16, torch.float16))
    registry.same(op, "w", w, a)
    registry.same(op, "out", out, a)
    if a.dim() != 2 or w.dim() != 3 or w.shape[2] != a.shape[1]:
        raise registry.LaunchError("hk.ops.%s: a %s and w %s: a is [tokens, K] and w [experts, N, K]"
                                   % (op, tuple(a.shape), tuple(w.shape)))
    if top_k <= 0 or not 0 < block_size <= MAX_BLOCK or block_size % TILE:
        raise registry.LaunchError("hk.ops.%s: top_k %d, block_size %d: top_k is positive and the block "
                                   "size a multiple of %d up to %d" % (op, top_k, block_size, TILE, MAX_BLOCK))
    rows, n = a.shape[0] * top_k, w.shape[1]
    if out.numel() != rows * n or out.shape[-1] != n:
        raise registry.LaunchError("hk.ops.%s: out has shape %s; it holds [tokens * top_k, N] = [%d, %d]"
                                   % (op, tuple(out.shape), rows, n))
    if rows >= 2 ** 22:
        raise registry.LaunchError("hk.ops.%s: %d routed rows; at most 2^22" % (op, rows),
                                   hint="split the batch into calls of fewer tokens")
    ids = _int32_vector(op, "sorted_ids", sorted_ids, a.device)
    experts = _int32_vector(op, "expert_ids", expert_ids, a.device)
    padded = _int32_vector(op, "num_tokens_post_pad", num_tokens_post_pad, a.device)
    if experts.shape[0] * block_size < ids.shape[0]:
        raise registry.LaunchError("hk.ops.%s: %d expert ids for %d sorted ids in blocks of %d"
                                   % (op, experts.shape[0], ids.shape[0], block_size))
    if topk_weights.dtype != torch.float32 or topk_weights.numel() != rows:
        raise registry.LaunchError("hk.ops.%s: topk_weights is %s %s; it is float32 with one weight per routed "
                                   "row (%d)" % (op, topk_weights.dtype, tuple(topk_weights.shape), rows))
    if rows == 0 or n == 0 or ids.shape[0] == 0:
        return
    e, k = w.shape[0], w.shape[2]
    weights = registry.rows(op, "w", w.reshape(e * n, k) if w.is_contiguous() else w.contiguous().view(e * n, k), k)
    moe_gemm_kernel(dtype, top_k, bool(mul_routed_weight), block_size)(
        registry.rows(op, "a", a, k), weights.view(e, 1, n, k), ids, experts, padded,
        topk_weights.reshape(-1, 1).contiguous(), registry.rows(op, "out", out, n, writable=True))


def block_for(rows, experts):
    """The block size for `rows` routed rows over `experts`: the blocks of a larger workgroup
    share each weight tile between more waves, and pad each expert's run to more rows."""
    per_expert = rows // max(experts, 1)
    return 64 if per_expert >= 64 else 32 if per_expert >= 32 else TILE


def launch_fused(x, w1, w2, topk_weights, topk_ids, expert_map, out):
    op = "fused_moe"
    registry.dtype_of(op, x, (torch.bfloat16, torch.float16))
    if x.dim() != 2 or w1.dim() != 3 or w2.dim() != 3 or w1.shape[1] != 2 * w2.shape[2] or w1.shape[2] != x.shape[1] \
            or w2.shape[1] != x.shape[1] or w1.shape[0] != w2.shape[0]:
        raise registry.LaunchError("hk.ops.%s: x %s, w1 %s, w2 %s: x is [tokens, K], w1 [E, 2I, K] and w2 [E, K, I]"
                                   % (op, tuple(x.shape), tuple(w1.shape), tuple(w2.shape)))
    if tuple(topk_ids.shape) != tuple(topk_weights.shape) or topk_ids.dim() != 2 or topk_ids.shape[0] != x.shape[0]:
        raise registry.LaunchError("hk.ops.%s: topk_ids %s and topk_weights %s are both [tokens, top_k] for %d tokens"
                                   % (op, tuple(topk_ids.shape), tuple(topk_weights.shape), x.shape[0]))
    if tuple(out.shape) != tuple(x.shape):
        raise registry.LaunchError("hk.ops.%s: out has shape %s, not %s" % (op, tuple(out.shape), tuple(x.shape)))
    tokens, top_k = topk_ids.shape
    if tokens == 0:
        return
    inter = w2.shape[2]
    # Under expert parallelism topk_ids are global experts and expert_map maps them to ours.
    experts = w1.shape[0] if expert_map is None else expert_map.numel()
    dtype = registry.dtype_of(op, x)

    def layer(knobs):
        block_size = block_of(knobs, tokens * top_k, experts)
        sorted_ids, expert_ids, padded = align(topk_ids, block_size, experts, expert_map)
        weights = topk_weights.float()
        gate_up = torch.empty(tokens * top_k, 2 * inter, dtype=x.dtype, device=x.device)
        launch_gemm(gate_up, x, w1, weights, sorted_ids, expert_ids, padded, top_k, block_size, False, op)
        act = torch.empty(tokens * top_k, inter, dtype=x.dtype, device=x.device)
        elementwise.launch("gated", "silu", gate_up, None, act)
        down = torch.empty(tokens * top_k, x.shape[1], dtype=x.dtype, device=x.device)
        launch_gemm(down, act, w2, weights, sorted_ids, expert_ids, padded, 1, block_size, True, op)
        # Expert -1's rows (another rank's experts) are zeros and add nothing.
        ys = down.view(tokens, top_k, x.shape[1]).transpose(0, 1).unsqueeze(0)  # [1, top_k, tokens, K]
        moe_sum_kernel(dtype)(ys, registry.rows(op, "out", out, x.shape[1], writable=True))

    tuned.launch(FUSED_MOE, (tokens, experts, top_k, x.shape[1], inter, dtype.name), layer)


# Tuning -----------------------------------------------------------------------------------------

# The lower ends of the ranges of routed rows per expert (tokens * top_k // experts) a layer's
# block is tuned and looked up by; block_for's thresholds (16, 32, 64) are among them.
PER_EXPERT = (0, 4, 16, 32, 64, 128, 256, 512, 1024)


def block_of(knobs, rows, experts):
    """The block size of tuned knobs ({"block": B}; 0, None or {}: block_for's rule)."""
    block = (knobs or {}).get("block", 0)
    if not isinstance(block, int) or block < 0 or block % TILE or block > MAX_BLOCK:
        raise ValueError("block is 0 (the rule of block_for) or a multiple of %d up to %d, not %r"
                         % (TILE, MAX_BLOCK, block))
    return block or block_for(rows, experts)


def _moe_shape(shape):
    """(tokens, experts, top_k, hidden K, intermediate I, dtype name) of a MoE layer's shape."""
    tokens, experts, top_k, hidden, inter, *rest = shape
    return int(tokens), int(experts), int(top_k), int(hidden), int(inter), rest[0] if rest else "bf16"


def moe_bucket(shape):
    tokens, experts, top_k, hidden, inter, dtype = _moe_shape(shape)
    per = tokens * top_k // max(experts, 1)
    lows = [low for low in PER_EXPERT if low <= per]
    i = len(lows) - 1
    rows = "%d-%d" % (lows[-1], PER_EXPERT[i + 1] - 1) if i + 1 < len(PER_EXPERT) else ">=%d" % PER_EXPERT[-1]
    return "%s E=%d top_k=%d K=%d I=%d rows/expert=%s" % (dtype, experts, top_k, hidden, inter, rows)


def routing(tokens, experts, top_k):
    """A search's routing: token t's j-th expert is (t * top_k + j) mod experts, every expert
    given as many rows as the others (to within one)."""
    if top_k > experts:
        raise ValueError("top_k %d of %d experts" % (top_k, experts))
    return (torch.arange(tokens * top_k, dtype=torch.int32) % experts).view(tokens, top_k)


def _moe_launches(config, shape):
    """A candidate's two grouped GEMMs (the activation, the weighted sum and the align step do
    not depend on the block and are left out), the sorted ids real host tensors: their values
    steer the kernels."""
    tokens, experts, top_k, hidden, inter, dtype = _moe_shape(shape)
    block = block_of(config.as_dict(), tokens * top_k, experts)
    sorted_ids, expert_ids, padded = (t.view(-1, 1) for t in align(routing(tokens, experts, top_k), block, experts))
    t = getattr(torch, getattr(hk, dtype).torch_name)
    rows = tokens * top_k

    def meta(*dims, dtype=t):
        return torch.empty(*dims, dtype=dtype, device="meta")

    weights = meta(rows, 1, dtype=torch.float32)
    act = meta(rows, inter)
    kernel = functools.partial(moe_gemm_kernel, getattr(hk, dtype))
    return [Launch(kernel(top_k, False, block), {},
                   (meta(tokens, hidden), meta(experts, 1, 2 * inter, hidden), sorted_ids, expert_ids, padded,
                    weights, meta(rows, 2 * inter))),
            Launch(kernel(1, True, block), {},
                   (act, meta(experts, 1, hidden, inter), sorted_ids, expert_ids, padded, weights,
                    meta(rows, hidden)))]


FUSED_MOE = Tunable(
    name="fused_moe", space=lambda target: space(block=[0, 16, 32, 64, 128]), knobs=frozenset(("block",)),
    launches=_moe_launches, default=lambda arch: {"block": 0}, bucket=moe_bucket,
    describe=lambda shape: "%s tokens=%d E=%d top_k=%d K=%d I=%d" % (_moe_shape(shape)[5], *_moe_shape(shape)[:5]),
    sources=(os.path.abspath(__file__),))


def reference(x, w1, w2, topk_weights, topk_ids):
    """The layer in torch, token by token and expert by expert, in fp32 (rounded where the
    kernels round: after each product and the activation)."""
    out = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
    inter = w2.shape[2]
    for t in range(x.shape[0]):
        for j in range(topk_ids.shape[1]):
            e = int(topk_ids[t, j])
            h = (x[t].float() @ w1[e].float().T).to(x.dtype).float()
            act = (torch.nn.functional.silu(h[:inter]) * h[inter:]).to(x.dtype).float()
            y = (act @ w2[e].float().T * topk_weights[t, j].float()).to(x.dtype).float()
            out[t] += y
    return out.to(x.dtype)


def _align(topk_ids, block_size, num_experts, expert_map=None):
    return align(topk_ids, block_size, num_experts, expert_map)


def _align_fake(topk_ids, block_size, num_experts, expert_map=None):
    total = max_padded(topk_ids.numel(), block_size, num_experts)
    dev = topk_ids.device
    return (torch.empty(total, dtype=torch.int32, device=dev),
            torch.empty(blocks_of(total, block_size), dtype=torch.int32, device=dev),
            torch.empty(1, dtype=torch.int32, device=dev))


def _gemm_out(out, a, w, topk_weights, sorted_ids, expert_ids, num_tokens_post_pad, top_k, block_size,
              mul_routed_weight):
    launch_gemm(out, a, w, topk_weights, sorted_ids, expert_ids, num_tokens_post_pad, top_k, block_size,
                mul_routed_weight)


def _fused(x, w1, w2, topk_weights, topk_ids, expert_map=None):
    out = torch.empty_like(x)
    launch_fused(x, w1, w2, topk_weights, topk_ids, expert_map, out)
    return out


OPS = {
    "moe_align_block_size": registry.define(
        "moe_align_block_size",
        "(Tensor topk_ids, int block_size, int num_experts, Tensor? expert_map=None) -> (Tensor, Tensor, Tensor)",
        _align, _align_fake),
    "moe_gemm_out": registry.define(
        "moe_gemm_out",
        "(Tensor(a!) out, Tensor a, Tensor w, Tensor topk_weights, Tensor sorted_ids, Tensor expert_ids, "
        "Tensor num_tokens_post_pad, int top_k, int block_size, bool mul_routed_weight) -> ()",
        _gemm_out, lambda out, a, w, topk_weights, sorted_ids, expert_ids, num_tokens_post_pad, top_k, block_size,
        mul_routed_weight: None, mutates=("out",)),
    "fused_moe": registry.define(
        "fused_moe", "(Tensor x, Tensor w1, Tensor w2, Tensor topk_weights, Tensor topk_ids, Tensor? expert_map=None) "
        "-> Tensor", _fused, lambda x, w1, w2, topk_weights, topk_ids, expert_map=None: torch.empty_like(x)),
}
