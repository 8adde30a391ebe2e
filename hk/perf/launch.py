"""hk.perf.predict for hk kernels: the launch built as a call would build it, its tensors placed
in the emulator's memory (a meta tensor as zeros that cost no memory), then predicted."""

from hk import types
from hk.perf import model


# A GPU tensor up to this size is copied to the host for the profile (its values may steer the
# kernel: block tables, lengths); a larger one is placed as zeros.
_COPIED_BYTES = 256 << 20


def _argument(tensor):
    """The emulator's hk::gl<T> of a tensor: a CPU tensor's data, a GPU tensor's (a copy, or zeros
    past _COPIED_BYTES), or zeros for a meta tensor."""
    from hk.emu import ByValue, Zeros
    from hk.runtime import emu_launch

    if tensor.device.type not in ("cpu", "meta") and tensor.numel() * tensor.element_size() <= _COPIED_BYTES:
        tensor = tensor.cpu()
    if tensor.device.type == "cpu":
        return emu_launch.global_view(tensor)
    shape, strides = types.view4d(tensor.shape), types.view4d_strides(tensor.stride())
    extent = 1 + sum((s - 1) * st for s, st in zip(tensor.shape, tensor.stride())) if tensor.numel() else 0

    def pack(alloc):
        address = alloc(Zeros(extent * tensor.element_size()))
        return emu_launch.pack_global(address, shape, strides)

    return ByValue(pack)


def predict(kernel, args, arch=None, device=None, flops=None, constants=None):
    from hk.runtime import launch

    if device is not None and arch is None:
        from hk.perf import device as devices

        arch = devices.get(device).arch
    built, grid, args = launch.built(kernel, list(args), arch, constants)
    return predict_build(built, grid, args, device=device, flops=flops)


def predict_build(built, grid, args, device=None, flops=None):
    """The Prediction of a Build launched over `grid` with `args` (checked, as a launch has them)."""
    values = [_argument(a) if isinstance(p.kind, types.TensorType) else (float(a) if p.kind.is_float else int(a))
              for p, a in zip(built.traced.params, args)]
    block = (built.warps * built.meta.wave_size,)
    return model.predict_code_object(built.path, built.name, grid, block, values, device=device, arch=built.arch,
                                     flops=flops)
