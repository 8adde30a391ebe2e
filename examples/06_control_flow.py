"""Control flow on device values: a `for` over a runtime trip count, an `if` on a device
scalar and a `while`, each carrying the values it assigns. `--dump ir` shows the scf.for,
scf.if and scf.while they become, `--dump cpp` the C++ loops and branches.

    per row block: acc = sum over column tiles j of (x_j * SCALE if j is even else x_j)
                   then halve acc `steps` times
"""

import torch

import hk
from common import check, run

T = hk.RT(hk.fp32, 16, 64)


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16)))
def staircase(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], steps: int, *, SCALE=2.0):
    row = hk.arch.block_idx.y
    acc = hk.zeros(T)
    for j in hk.range(hk.cdiv(x.cols, 64)):     # scf.for carrying acc
        t = x[0, 0, row, j].load(T)
        if j % 2 == 0:                           # scf.if on a device scalar, yielding t
            t = t * SCALE
        acc = acc + t
    k = 0
    while k < steps:                             # scf.while carrying acc and k
        acc = acc * 0.5
        k = k + 1
    o[0, 0, row, 0] = acc


def reference(x, steps, scale=2.0):
    rows, cols = x.shape
    tiles = -(-cols // 64)
    padded = torch.zeros(rows, tiles * 64)
    padded[:, :cols] = x
    parts = padded.reshape(rows, tiles, 64)
    weights = torch.tensor([scale if j % 2 == 0 else 1.0 for j in range(tiles)]).reshape(1, tiles, 1)
    return (parts * weights).sum(1) * 0.5 ** steps


SHAPES = [(32, 256), (21, 150)]  # the second is ragged in rows and columns


def checks(device, repeat):
    for rows, cols in SHAPES:
        x = torch.randn(rows, cols, device=device)
        out = torch.zeros(rows, 64, device=device)
        staircase(x, out, 3)
        check("control flow %dx%d" % (rows, cols), out, reference(x.cpu(), 3).to(device))


if __name__ == "__main__":
    run([(staircase, {})], checks)
