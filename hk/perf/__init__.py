"""hk.perf: the predicted time of a launch on each target, and what bounds it.

No GPU is needed: the emulator runs a few of the launch's workgroups of the real code object and
a model of one compute unit times the launch from their instruction streams and the device's
facts (hk/target/perf.json, each with its source), calibrated against published measurements.

    p = hk.perf.predict(gemm, a, b, c)           # an hk kernel and its launch's arguments
    print(p)                                     # time, TFLOP/s or GB/s, % of peak, bound
    hk.perf.predict_call(hk.ops.attention.launch_attention, q, k, v, 0.125, True, o, arch="gfx950")
    hk.perf.predict_code_object("matmul.co", "matmul_kernel", grid, block, args)   # any code object

Tensors may live on torch's "meta" device: they then take no memory beyond what the profiled
workgroups write. A Prediction is a prediction, with the model's stated error; it is never a
measured time.
"""

import sys

from hk.perf.device import FactsError
from hk.perf.model import PerfError, Prediction, predict_code_object


def predict(kernel, *args, arch=None, device=None, flops=None, **constants):
    """Predicts `kernel(*args, **constants)` on `device` (default: `arch`'s; `arch` as a launch
    picks it). Tensors may be CPU or meta tensors; the kernel is built as a launch would build it."""
    from hk.perf import launch

    return launch.predict(kernel, args, arch=arch, device=device, flops=flops, constants=constants)


def predict_call(fn, *args, arch=None, device=None, **kwargs):
    """The Predictions of every kernel launch `fn(*args, **kwargs)` makes (an hk.ops op, say),
    without running it: its tensors may be meta tensors where the op reads no value of them. The
    op plans its launches for `arch` (hk.ops.registry.launch_arch() answers it meanwhile)."""
    from hk.perf import launch
    from hk.runtime import launch as runtime_launch

    ops = sys.modules.get("hk.ops.registry")  # (an hk op is one only once hk.ops is imported)
    fn = (ops and ops.implementation(fn)) or fn
    with runtime_launch.capture(arch) as launches:
        fn(*args, **kwargs)
    if not launches:
        raise PerfError("the call launched no hk kernel")
    return [launch.predict(k, a, arch=arch or a_arch, device=device, constants=c) for k, a, a_arch, c in launches]


__all__ = ["predict", "predict_call", "predict_code_object", "Prediction", "PerfError", "FactsError"]
