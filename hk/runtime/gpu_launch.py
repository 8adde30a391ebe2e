"""Launching a built kernel on an AMD GPU: the HIP module API on torch's current stream.

The code object is loaded once per device (hipModuleLoadData) and its kernel looked up
(hipModuleGetFunction); each launch packs the kernel's arguments into one buffer laid out as
the code object's metadata says (tensors as hk::gl<T>: data pointer, four extents, three
strides) and calls hipModuleLaunchKernel with HIP_LAUNCH_PARAM_BUFFER_POINTER.
"""

import ctypes
import ctypes.util
import functools
import struct

from hk import types
from hk.errors import LaunchError

_HIP_LAUNCH_PARAM_BUFFER_POINTER = ctypes.c_void_p(0x01)
_HIP_LAUNCH_PARAM_BUFFER_SIZE = ctypes.c_void_p(0x02)
_HIP_LAUNCH_PARAM_END = ctypes.c_void_p(0x03)
# hk::gl<T>: T* data; int batch, depth, rows, cols; int64_t stride_batch, stride_depth, stride_row.
_GL = struct.Struct("<Q4i3q")


@functools.lru_cache(maxsize=None)
def _hip():
    name = ctypes.util.find_library("amdhip64") or "libamdhip64.so"
    try:
        lib = ctypes.CDLL(name)
    except OSError as e:
        raise LaunchError("cannot load the HIP runtime (%s): %s" % (name, e),
                          hint="install ROCm, or set HK_DEVICE=interp or emu") from None
    lib.hipModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
    lib.hipModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
    lib.hipModuleLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
        ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]
    lib.hipGetErrorString.restype = ctypes.c_char_p
    return lib


def _check(status, what):
    if status != 0:
        message = _hip().hipGetErrorString(status).decode()
        raise LaunchError("%s failed: %s (hipError %d)" % (what, message, status))


@functools.lru_cache(maxsize=None)
def _function(path, name, device):
    """The hipFunction_t of kernel `name` in the code object at `path`, on `device`."""
    with open(path, "rb") as f:
        image = f.read()
    buffer = ctypes.create_string_buffer(image, len(image))
    module = ctypes.c_void_p()
    _check(_hip().hipModuleLoadData(ctypes.byref(module), buffer), "hipModuleLoadData(%s)" % path)
    function = ctypes.c_void_p()
    _check(_hip().hipModuleGetFunction(ctypes.byref(function), module, name.encode()),
           "hipModuleGetFunction(%s)" % name)
    return function, buffer  # keep the image alive with the module


def pack_arguments(meta, params, args):
    """The kernel's explicit arguments as one buffer, at the metadata's offsets."""
    explicit = [a for a in meta.args if not str(a.get(".value_kind", "")).startswith("hidden")]
    if len(explicit) != len(args):
        raise LaunchError("kernel %s takes %d arguments in its code object, %d given"
                          % (meta.name, len(explicit), len(args)))
    size = max((a[".offset"] + a[".size"] for a in meta.args), default=0)
    buffer = bytearray(max(size, meta.kernarg_bytes))
    for desc, p, value in zip(explicit, params, args):
        offset, width = desc[".offset"], desc[".size"]
        if isinstance(p.kind, types.TensorType):
            shape = types.view4d(value.shape)
            strides = types.view4d_strides(value.stride())
            raw = _GL.pack(value.data_ptr(), *shape, *strides[:3])
        elif p.kind.is_float:
            raw = struct.pack("<f", float(value))
        else:
            raw = struct.pack("<i", int(value))
        if len(raw) != width:
            raise LaunchError("argument %r packs to %d bytes but the kernel expects %d"
                              % (p.name, len(raw), width))
        buffer[offset:offset + width] = raw
    return bytes(buffer)


def run(built, grid, args):
    """Launches a Build over `grid` on torch's current stream."""
    import torch

    for p, a in zip(built.traced.params, args):
        if isinstance(p.kind, types.TensorType) and a.device.type != "cuda":
            raise LaunchError("kernel %s: %r is on %s; launch on the GPU with GPU tensors"
                              % (built.name, p.name, a.device))
    if 0 in grid:
        return None
    device = torch.cuda.current_device()
    function, _ = _function(built.path, built.name, device)
    payload = pack_arguments(built.meta, built.traced.params, args)
    arg_buffer = ctypes.create_string_buffer(payload, len(payload))
    arg_size = ctypes.c_size_t(len(payload))
    config = (ctypes.c_void_p * 5)(_HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.cast(arg_buffer, ctypes.c_void_p),
                                   _HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.cast(ctypes.pointer(arg_size), ctypes.c_void_p),
                                   _HIP_LAUNCH_PARAM_END)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    threads = built.warps * built.meta.wave_size
    _check(_hip().hipModuleLaunchKernel(function, grid[0], grid[1], grid[2], threads, 1, 1, 0,
                                        stream, None, config), "hipModuleLaunchKernel(%s)" % built.name)
    return None
