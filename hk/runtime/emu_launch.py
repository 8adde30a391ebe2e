"""HK_DEVICE=emu: a built kernel's code object run on hk.emu over CPU torch tensors.

Every tensor becomes the hk::gl<T> the kernel takes by value: its storage (the span its view
covers) placed in the emulator's memory, then the 4-D extents and strides.
"""

import struct

import torch

from hk import types
from hk.errors import LaunchError

# hk::gl<T>: T* data; int batch, depth, rows, cols; int64_t stride_batch, stride_depth, stride_row.
_GL = struct.Struct("<Q4i3q")


def _span(tensor):
    """The tensor's storage from its first element to its last, as a 1-D tensor (shared memory)."""
    if tensor.numel() == 0:
        return tensor.reshape(-1)
    extent = 1 + sum((s - 1) * st for s, st in zip(tensor.shape, tensor.stride()))
    return torch.as_strided(tensor, (extent,), (1,), tensor.storage_offset())


def global_view(tensor):
    """The by-value hk::gl argument of a tensor, for hk.emu.launch."""
    from hk.emu import ByValue

    shape = types.view4d(tensor.shape)
    strides4 = types.view4d_strides(tensor.stride())
    span = _span(tensor)

    def pack(alloc):
        return pack_global(alloc(span), shape, strides4)

    return ByValue(pack)


def pack_global(address, shape, strides):
    """The bytes of an hk::gl<T> over `address` with a 4-D shape and its three outer strides."""
    return _GL.pack(address, shape[0], shape[1], shape[2], shape[3], strides[0], strides[1], strides[2])


def run(built, grid, args):
    """Runs a Build on the emulator; the grid is (x, y, z) workgroups."""
    from hk import emu

    values = []
    for p, a in zip(built.traced.params, args):
        if isinstance(p.kind, types.TensorType):
            if a.device.type != "cpu":
                raise LaunchError("HK_DEVICE=emu runs on CPU tensors; %r is on %s" % (p.name, a.device))
            values.append(global_view(a))
        else:
            values.append(float(a) if p.kind.is_float else int(a))
    if 0 in grid:
        return 0
    block = (built.warps * built.meta.wave_size,)
    return emu.launch(built.path, built.name, grid, block, values, arch=built.arch)
