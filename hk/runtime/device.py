"""Which device runs a launch: an AMD GPU through torch's HIP build, or a CPU runner.

HK_DEVICE selects explicitly: `gpu`, `interp` (the reference interpreter of the traced IR) or
`emu` (the ISA emulator running the compiled code object). Unset, a visible AMD GPU is used.
"""

import functools
import os

from hk.errors import LaunchError

RUNNERS = ("gpu", "interp", "emu")


@functools.lru_cache(maxsize=None)
def detected_arch():
    """The gfx name of the first visible AMD GPU (through a ROCm build of torch), or None."""
    try:
        import torch
    except ImportError:
        return None
    if not getattr(torch.version, "hip", None) or not torch.cuda.is_available():
        return None
    name = torch.cuda.get_device_properties(0).gcnArchName
    return name.split(":")[0]


def runner():
    """The runner a launch uses now: HK_DEVICE, else `gpu` when one is visible."""
    chosen = os.environ.get("HK_DEVICE", "").strip().lower()
    if chosen:
        if chosen not in RUNNERS:
            raise LaunchError("HK_DEVICE=%s is not a runner; use one of %s" % (chosen, ", ".join(RUNNERS)))
        return chosen
    if detected_arch():
        return "gpu"
    raise LaunchError(
        "no AMD GPU is visible to torch, so the kernel cannot be launched on one",
        hint="set HK_DEVICE=interp to run it on the reference interpreter or HK_DEVICE=emu to run "
             "the compiled code object on the ISA emulator (both on CPU tensors)")
