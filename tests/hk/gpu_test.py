"""On an AMD GPU: the spec's kernel launched through the HIP module API on torch's stream.
Tagged `gpu` and `manual`: run with ./bazelw test --config=gpu //tests/hk:gpu_test."""

import torch

import hk


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


def test_add_on_the_gpu():
    a = torch.randn(3, 37, 100, dtype=torch.bfloat16, device="cuda")
    b = torch.randn_like(a)
    out = torch.empty_like(a)
    add(a, b, out)
    torch.cuda.synchronize()
    assert torch.equal(out, a + b)
