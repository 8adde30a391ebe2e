"""The GPU launch path without a GPU: the kernel arguments are packed at the offsets the code
object's metadata gives, as the hk::gl<T> layout the tile library pins (48 bytes)."""

import struct

import torch

import hk
from hk.runtime import gpu_launch


@hk.kernel(grid=lambda p: (1,))
def scaled(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], factor: float, n: int):
    t = x[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))
    o[0, 0, 0, 0] = t * factor


def test_arguments_follow_the_metadata():
    build = scaled.build(arch="gfx1100")
    x = torch.zeros(3, 40, 100, dtype=torch.bfloat16)
    o = torch.zeros(40, 100, dtype=torch.bfloat16)[:, :64]  # a strided view
    payload = gpu_launch.pack_arguments(build.meta, build.traced.params, [x, o, 2.5, 7])
    explicit = [a for a in build.meta.args if not a[".value_kind"].startswith("hidden")]
    assert [a[".size"] for a in explicit] == [48, 48, 4, 4]
    gl = struct.Struct("<Q4i3q")
    assert gl.unpack_from(payload, explicit[0][".offset"]) == (x.data_ptr(), 3, 1, 40, 100, 4000, 0, 100)
    assert gl.unpack_from(payload, explicit[1][".offset"]) == (o.data_ptr(), 1, 1, 40, 64, 0, 0, 100)
    assert struct.unpack_from("<f", payload, explicit[2][".offset"]) == (2.5,)
    assert struct.unpack_from("<i", payload, explicit[3][".offset"]) == (7,)
