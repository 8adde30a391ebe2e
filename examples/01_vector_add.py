"""Elementwise add, the smallest complete kernel: the one in the README, verbatim."""

import torch

import hk
from common import check, run, timed


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y,
                        hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


SHAPES = [(4, 256, 1024), (3, 37, 100)]  # the second is ragged in rows and columns


def checks(device, repeat):
    for shape in SHAPES:
        a = torch.randn(*shape, dtype=torch.bfloat16, device=device)
        b = torch.randn(*shape, dtype=torch.bfloat16, device=device)
        out = torch.empty_like(a)
        add(a, b, out)
        check("vector add %s" % (shape,), out, a + b)
        if repeat:
            seconds = timed(lambda: add(a, b, out), repeat)
            print("  %.1f us, %.1f GB/s" % (seconds * 1e6, 3 * a.numel() * 2 / seconds / 1e9))


if __name__ == "__main__":
    run([(add, {})], checks)
