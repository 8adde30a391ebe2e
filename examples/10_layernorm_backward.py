"""LayerNorm backward as in Triton's tutorial: row reductions for dx, column reductions for the
weight and bias gradients, written as per-block partial sums (no lock) that a second step adds.

    xhat = (x - mean) * rstd,  wdy = w * dy
    dx = (wdy - (xhat * mean(xhat * wdy) + mean(wdy))) * rstd
    dw = sum over rows of dy * xhat,  db = sum over rows of dy

Each workgroup owns 16 rows and writes its partial dw and db for them to row `block` of
[blocks, N] buffers; torch adds the partials (as the tutorial's second kernel does). The kernel
is the library's (`hk.ops.layer_norm_backward`), here for fp32.
"""

import torch

import hk
from common import check, run, timed
from hk.ops.training import layer_norm_backward_kernel

layernorm_backward = layer_norm_backward_kernel(hk.fp32)


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
