"""LayerNorm backward as in Triton's tutorial: row reductions for dx, column reductions for the
weight and bias gradients, written as per-block partial sums (no lock) that a second step adds.

    xhat = (x - mean) * rstd,  wdy = w * dy
    dx = (wdy - (xhat * mean(xhat * wdy) + mean(wdy))) * rstd
    dw = sum over rows of dy * xhat,  db = sum over rows of dy

Each workgroup owns 16 rows and writes its partial dw and db for them to row `block` of
[blocks, N] buffers; torch adds the partials (as the tutorial's second kernel does).
"""

import torch

import hk
from common import check, run, timed

BLOCK = 64


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16)))
def layernorm_backward(x: hk.Tensor[hk.fp32], dy: hk.Tensor[hk.fp32], w: hk.Tensor[hk.fp32],
                       mean: hk.Tensor[hk.fp32], rstd: hk.Tensor[hk.fp32], dx: hk.Tensor[hk.fp32],
                       dw_part: hk.Tensor[hk.fp32], db_part: hk.Tensor[hk.fp32]):
    row = hk.arch.block_idx.y
    tile = hk.RT(hk.fp32, 16, BLOCK)
    stat = hk.RV(hk.fp32, 16, "col")
    wide = hk.RV(hk.fp32, BLOCK, "row")
    mu = mean[0, 0, 0, row].load(stat)
    rs = rstd[0, 0, 0, row].load(stat)
    n = x.cols.to(hk.fp32)

    c1 = hk.zeros(stat)
    c2 = hk.zeros(stat)
    for j in hk.range(hk.cdiv(x.cols, BLOCK)):
        xhat = hk.mul_row(hk.sub_row(x[0, 0, row, j].load(tile), mu), rs)
        wdy = hk.mul_col(dy[0, 0, row, j].load(tile), w[0, 0, 0, j].load(wide))
        c1 = c1 + hk.row_sum(xhat * wdy)
        c2 = c2 + hk.row_sum(wdy)
    c1 = c1 / n
    c2 = c2 / n

    for j in hk.range(hk.cdiv(x.cols, BLOCK)):
        # Rows past the end read as zeros: their xhat is -mean * rstd, so mask by dy (zero there).
        xhat = hk.mul_row(hk.sub_row(x[0, 0, row, j].load(tile), mu), rs)
        g = dy[0, 0, row, j].load(tile)
        wdy = hk.mul_col(g, w[0, 0, 0, j].load(wide))
        dx[0, 0, row, j] = hk.mul_row(wdy - hk.add_row(hk.mul_row(xhat, c1), c2), rs)
        dw_part[0, 0, row, j] = hk.col_sum(g * xhat)
        db_part[0, 0, row, j] = hk.col_sum(g)


def reference(x, dy, w, mean, rstd):
    xhat = (x - mean[:, None]) * rstd[:, None]
    wdy = w * dy
    c1 = (xhat * wdy).mean(1, keepdim=True)
    c2 = wdy.mean(1, keepdim=True)
    return (wdy - (xhat * c1 + c2)) * rstd[:, None], (dy * xhat).sum(0), dy.sum(0)


SHAPES = [(64, 256), (37, 100)]  # the second is ragged in rows and columns


def checks(device, repeat):
    for rows, cols in SHAPES:
        x = torch.randn(rows, cols, device=device)
        dy = torch.randn(rows, cols, device=device)
        w = torch.randn(cols, device=device)
        mean, rstd = x.mean(1), torch.rsqrt(x.var(1, unbiased=False) + 1e-5)
        blocks = -(-rows // 16)
        dx = torch.empty_like(x)
        dw_part = torch.zeros(blocks, cols, device=device)
        db_part = torch.zeros(blocks, cols, device=device)
        layernorm_backward(x, dy, w, mean, rstd, dx, dw_part, db_part)
        ref_dx, ref_dw, ref_db = reference(x.cpu(), dy.cpu(), w.cpu(), mean.cpu(), rstd.cpu())
        check("layernorm backward dx %dx%d" % (rows, cols), dx, ref_dx.to(device), rtol=1e-4, atol=1e-4)
        check("layernorm backward dw %dx%d" % (rows, cols), dw_part.sum(0), ref_dw.to(device), rtol=1e-4, atol=1e-4)
        check("layernorm backward db %dx%d" % (rows, cols), db_part.sum(0), ref_db.to(device), rtol=1e-4, atol=1e-4)
        if repeat:
            print("  %.1f us" % (timed(lambda: layernorm_backward(x, dy, w, mean, rstd, dx, dw_part, db_part), repeat) * 1e6))


if __name__ == "__main__":
    run([(layernorm_backward, {})], checks)
