"""Training ops: dropout and LayerNorm's backward.

Dropout with hk.rand's counter-based draws (Philox 4x32-10, the draws of Triton's tl.rand):

    dropout(x, p, seed)     x / (1 - p) where rand(seed, i) > p, else 0, i the element's index
                            in x's row-major order; any shape, bf16, fp16 or fp32

A call keeps the same elements for the same seed and shape wherever it runs, so the backward is
the same call on the gradient, and no mask is stored.

LayerNorm's backward, as in Triton's tutorial: row reductions for dx, column reductions for
the weight and bias gradients as per-block partial sums (no lock) that a second step adds.

    layer_norm_backward(dy, x, weight, mean, rstd) -> (dx, dweight, dbias)

x, dy [..., N] and weight [N] in bf16, fp16 or fp32 (computed in fp32), mean and rstd fp32
[...] (what the forward saved); dx in x's dtype, dweight and dbias in weight's.

    xhat = (x - mean) * rstd,  wdy = weight * dy
    dx = (wdy - (xhat * mean(xhat * wdy) + mean(wdy))) * rstd
    dweight = sum over rows of dy * xhat,  dbias = sum over rows of dy
"""

import functools

import torch

import hk
from hk.ops import registry

BLOCK = 64
ROWS = 16  # rows per workgroup of the backward


@functools.lru_cache(maxsize=None)
def dropout_kernel(dtype):
    """o = x / (1 - p) where hk.rand(seed, index) > p, else 0, for `dtype` tensors (in fp32)."""
    tile = hk.RT(hk.fp32, 16, BLOCK)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, BLOCK), hk.cdiv(p.x.rows, 16)), name="dropout_%s" % dtype.name)
    def dropout(x: hk.Tensor[dtype], o: hk.Tensor[dtype], p: float, seed: int):
        r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
        # Each element's offset is its index in the row-major tensor, as in Triton's tutorial.
        offsets = (hk.iota(tile, "row") + r * 16) * x.cols + hk.iota(tile, "col") + c * BLOCK
        keep = hk.rand(seed, offsets) > p
        kept = x[0, 0, r, c].load(hk.RT(dtype, 16, BLOCK)).to(hk.fp32) / (1.0 - p)
        o[0, 0, r, c] = hk.where(keep, kept, 0.0).to(dtype)

    return dropout


def launch_dropout(x, p, seed, out):
    op = "dropout"
    dtype = registry.dtype_of(op, x)
    registry.same(op, "out", out, x)
    if not 0.0 <= p < 1.0:
        raise registry.LaunchError("hk.ops.%s: p = %r; it must be in [0, 1)" % (op, p))
    if x.shape != out.shape:
        raise registry.LaunchError("hk.ops.%s: out has shape %s, x %s" % (op, tuple(out.shape), tuple(x.shape)))
    if x.numel() >= 2 ** 31:
        raise registry.LaunchError("hk.ops.%s: x has %d elements; the draws' offsets are 32-bit" % (op, x.numel()),
                                   hint="split the call")
    if not -2 ** 31 <= seed < 2 ** 31:
        raise registry.LaunchError("hk.ops.%s: seed %d is not a 32-bit integer" % (op, seed))
    if x.numel() == 0:
        return
    dropout_kernel(dtype)(registry.rows(op, "x", x), registry.rows(op, "out", out, writable=True), float(p), int(seed))

def _dropout(x, p, seed):
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    launch_dropout(x, p, seed, out)
    return out


@functools.lru_cache(maxsize=None)
def layer_norm_backward_kernel(dtype):
    """dx, and the partial dweight and dbias of each 16 rows (row `block` of [blocks, N] fp32
    buffers), for `dtype` x, dy and weight."""
    f32 = hk.fp32

    @hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, ROWS)), name="layer_norm_backward_%s" % dtype.name)
    def layer_norm_backward(x: hk.Tensor[dtype], dy: hk.Tensor[dtype], w: hk.Tensor[dtype],
                            mean: hk.Tensor[hk.fp32], rstd: hk.Tensor[hk.fp32], dx: hk.Tensor[dtype],
                            dw_part: hk.Tensor[hk.fp32], db_part: hk.Tensor[hk.fp32]):
        row = hk.arch.block_idx.y
        tile = hk.RT(dtype, ROWS, BLOCK)
        stat = hk.RV(f32, ROWS, "col")
        wide = hk.RV(dtype, BLOCK, "row")
        mu = mean[0, 0, 0, row].load(stat)
        rs = rstd[0, 0, 0, row].load(stat)
        n = x.cols.to(f32)

        c1 = hk.zeros(stat)
        c2 = hk.zeros(stat)
        for j in hk.range(hk.cdiv(x.cols, BLOCK)):
            xhat = hk.mul_row(hk.sub_row(x[0, 0, row, j].load(tile).to(f32), mu), rs)
            wdy = hk.mul_col(dy[0, 0, row, j].load(tile).to(f32), w[0, 0, 0, j].load(wide).to(f32))
            c1 = c1 + hk.row_sum(xhat * wdy)
            c2 = c2 + hk.row_sum(wdy)
        c1 = c1 / n
        c2 = c2 / n

        for j in hk.range(hk.cdiv(x.cols, BLOCK)):
            # Rows past the end read as zeros: their xhat is -mean * rstd, so they are masked
            # by dy (zero there) in the column sums.
            xhat = hk.mul_row(hk.sub_row(x[0, 0, row, j].load(tile).to(f32), mu), rs)
            g = dy[0, 0, row, j].load(tile).to(f32)
            wdy = hk.mul_col(g, w[0, 0, 0, j].load(wide).to(f32))
            dx[0, 0, row, j] = hk.mul_row(wdy - hk.add_row(hk.mul_row(xhat, c1), c2), rs).to(dtype)
            dw_part[0, 0, row, j] = hk.col_sum(g * xhat)
            db_part[0, 0, row, j] = hk.col_sum(g)

    return layer_norm_backward


def launch_layer_norm_backward(dy, x, weight, mean, rstd):
    op = "layer_norm_backward"
    dtype = registry.dtype_of(op, x)
    registry.same(op, "dy", dy, x)
    registry.same(op, "weight", weight, x)
    n = x.shape[-1] if x.dim() else 0
    if x.dim() == 0 or dy.shape != x.shape or tuple(weight.shape) != (n,):
        raise registry.LaunchError("hk.ops.%s: dy %s, x %s and weight %s do not fit: x [..., N], dy like x, "
                                   "weight [N]" % (op, tuple(dy.shape), tuple(x.shape), tuple(weight.shape)))
    for name, t in (("mean", mean), ("rstd", rstd)):
        if t.dtype != torch.float32 or t.numel() != x.numel() // max(n, 1) or t.device != x.device:
            raise registry.LaunchError("hk.ops.%s: %s is %s of shape %s; it must be float32 with one value per row of x"
                                       % (op, name, t.dtype, tuple(t.shape)), hint="pass what the forward saved")
    rows = x.numel() // max(n, 1)
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    blocks = -(-rows // ROWS)
    dw_part = torch.empty(blocks, n, device=x.device)
    db_part = torch.empty(blocks, n, device=x.device)
    if rows and n:
        layer_norm_backward_kernel(dtype)(
            registry.rows(op, "x", x, n), registry.rows(op, "dy", dy, n), weight.contiguous(),
            mean.reshape(-1).contiguous(), rstd.reshape(-1).contiguous(), dx.view(-1, n), dw_part, db_part)
    return dx, dw_part.sum(0).to(weight.dtype), db_part.sum(0).to(weight.dtype)


def _fake_layer_norm_backward(dy, x, weight, mean, rstd):
    return (torch.empty(x.shape, dtype=x.dtype, device=x.device), torch.empty(weight.shape, dtype=weight.dtype, device=weight.device),
            torch.empty(weight.shape, dtype=weight.dtype, device=weight.device))


OPS = {
    "dropout": registry.define(
        "dropout", "(Tensor x, float p, int seed) -> Tensor", _dropout,
        lambda x, p, seed: torch.empty_like(x, memory_format=torch.contiguous_format)),
    "layer_norm_backward": registry.define(
        "layer_norm_backward", "(Tensor dy, Tensor x, Tensor weight, Tensor mean, Tensor rstd) -> (Tensor, Tensor, Tensor)",
        launch_layer_norm_backward, _fake_layer_norm_backward),
}
