"""SGLang serving a model on hk's kernels on the CPU, on hk's interpreter or emulator: a way to run
the plugin end to end without an AMD GPU. For testing; never on a GPU. Switched on explicitly, in
every process SGLang starts (the plugin's entry point reads it):

    HK_SGLANG_CPU=1 HK_DEVICE=interp python -m sglang.launch_server --device cpu \\
        --attention-backend hk --page-size 16 --disable-cuda-graph ...

SGLang with --device cpu (and without SGLANG_USE_CPU_ENGINE, whose kernels are sgl-kernel's CPU
build, which PyPI does not have) takes its generic platform's layer code, which is torch's except
for one import: RotaryEmbedding takes vllm._custom_ops.rotary_embedding as its fallback kernel.
Where vLLM is not installed, a stand-in module of that name serves it (in torch). Routes: every
call hk covers goes to hk (HK_ENGINE_ROUTES, when set, still decides). hk's attention backend
delegates what it does not cover to SGLang's torch_native backend, as on any platform without
CUDA. docs/integration.md lists what differs from a GPU run.
"""

import importlib.util
import os
import sys
import types

import torch

from hk_engine import testing

SWITCH = "HK_SGLANG_CPU"
_ON = ("1", "true", "on", "yes")
CUSTOM_OPS = "vllm._custom_ops"


class RefusedError(RuntimeError):
    """HK_SGLANG_CPU cannot run here (a GPU, no CPU runner for hk)."""


def requested():
    return os.environ.get(SWITCH, "").strip().lower() in _ON


def refusal():
    """Why the CPU mode cannot run in this process, or None."""
    if torch.cuda.is_available():
        return ("%s=1 runs SGLang on hk's interpreter or emulator on the CPU, for testing; this machine has a GPU "
                "(%s): unset %s and let the plugin patch SGLang on it" % (SWITCH, torch.cuda.get_device_name(0),
                                                                         SWITCH))
    runner = os.environ.get("HK_DEVICE", "").strip().lower()
    if runner not in ("interp", "emu"):
        return "%s=1 runs hk's kernels on its interpreter or emulator: set HK_DEVICE=interp or HK_DEVICE=emu, not %r" % (
            SWITCH, runner)
    return None


def _rotary_standin():
    """The module SGLang's RotaryEmbedding imports its fallback kernel from, with that kernel in torch."""
    from hk_engine.testing import kernels

    module = types.ModuleType(CUSTOM_OPS)
    module.__doc__ = "hk_sglang.cpu's stand-in: vllm._custom_ops.rotary_embedding in torch (vLLM is not installed)"
    module.rotary_embedding = kernels.rotary_embedding
    return module


def install(plugin):
    """Makes this process's SGLang serve on hk's kernels on the CPU; RefusedError when it cannot."""
    problem = refusal()
    if problem:
        raise RefusedError(problem)
    if not plugin.registered:
        raise RefusedError("%s=1 needs hk's plugin, which patched nothing (see its warning)" % SWITCH)
    os.environ.setdefault("HK_ENGINE_ROUTES", testing.ALL_HK_ROUTES)
    if CUSTOM_OPS not in sys.modules and importlib.util.find_spec("vllm") is None:
        # Only the submodule: `import vllm` still fails, as SGLang's other optional imports expect.
        sys.modules[CUSTOM_OPS] = _rotary_standin()
