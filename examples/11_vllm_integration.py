"""Your kernel in vLLM: write it, register it as a torch op, check it, patch it into vLLM's layer,
and measure vLLM end to end with and without it.

The kernel is vLLM's SiLU-and-mul (silu(x[..., :d]) * x[..., d:], the MLP's activation), written
here in the DSL; hk's plugin patches vLLM's own layers with hk.ops the same way (hk_vllm).

    python examples/11_vllm_integration.py              # check against torch (GPU, else interpreter)
    python examples/11_vllm_integration.py --build      # compile and gate it, no GPU needed
    python examples/11_vllm_integration.py --patch      # patch vLLM's SiluAndMul and run the layer
    python examples/11_vllm_integration.py --ab=MODEL   # on a GPU: vLLM with and without the patch

--patch and --ab need vLLM 0.33 and hk's engine package (hk_engine) installed beside hk.
"""

import os
import subprocess
import sys
import time

import torch

import hk
from common import FLAGS, check, run, timed

TILE = hk.RT(hk.bf16, 16, 64)


@hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, 64), hk.cdiv(p.out.rows, 16)))
def silu_and_mul_kernel(gate: hk.Tensor[hk.bf16], up: hk.Tensor[hk.bf16], out: hk.Tensor[hk.bf16]):
    i, j = hk.arch.block_idx.y, hk.arch.block_idx.x
    g = gate[0, 0, i, j].load(TILE).to(hk.fp32)
    u = up[0, 0, i, j].load(TILE).to(hk.fp32)
    out[0, 0, i, j] = (hk.math.silu(g) * u).to(hk.bf16)


# 1. Register: a torch op of your own namespace, with a fake so torch.compile traces through it.
@torch.library.custom_op("hk_example::silu_and_mul", mutates_args=())
def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    rows = x.reshape(-1, 2 * d)
    out = torch.empty(rows.shape[0], d, dtype=x.dtype, device=x.device)
    silu_and_mul_kernel(rows[:, :d], rows[:, d:], out)  # the halves are row-strided views
    return out.view(*x.shape[:-1], d)


@silu_and_mul.register_fake
def _(x):
    return x.new_empty(*x.shape[:-1], x.shape[-1] // 2)


def reference(x):
    d = x.shape[-1] // 2
    return (torch.nn.functional.silu(x[..., :d].float()) * x[..., d:].float()).to(x.dtype)


SHAPES = [(32, 2 * 256), (7, 2 * 100)]  # the second is ragged in rows and columns


# 2. Check: against torch (and the gates, with --build).
def checks(device, repeat):
    for rows, cols in SHAPES:
        x = torch.randn(rows, cols, device=device).to(torch.bfloat16)
        check("silu_and_mul %dx%d" % (rows, cols), silu_and_mul(x), reference(x))
        if repeat:
            print("  %.1f us" % (timed(lambda: silu_and_mul(x), repeat) * 1e6))
    if FLAGS.patch:
        patch_into_vllm(device)
    if FLAGS.ab:
        ab(FLAGS.ab)


# 3. Patch: vLLM's SiluAndMul layer calls the op where it covers the call, vLLM's own kernel
# elsewhere; the contract check refuses a vLLM whose layer is not as expected.
# Its routes: hk for rows of up to 16384 columns (a table measured on your GPU would say more).
ROUTES = {"target": "any", "ops": {"silu_and_mul": [{"when": {"cols": [1, 16384]}, "route": "hk"}]}}


def plugin():
    import vllm
    from hk_engine import Patch, Plugin, Target
    from hk_engine.plugin import dispatch
    from hk_engine.routing import Table

    table = Table(ROUTES)

    def serve(original, x, *self):
        covered = x.dtype == torch.bfloat16 and x.shape[-1] % 2 == 0
        return dispatch("example.silu_and_mul", "silu_and_mul", {"cols": x.shape[-1]},
                        lambda: silu_and_mul(x), lambda: original(*self, x),
                        uncovered=None if covered else "dtype", table=table)

    # forward_native is a staticmethod (the CPU path, and what vLLM compiles); forward_cuda is
    # what ROCm runs (forward_hip falls back to it).
    layer = "vllm.model_executor.layers.activation.SiluAndMul."
    targets = [Target(layer + "forward_native", lambda original: lambda x: serve(original, x), ("x",)),
               Target(layer + "forward_cuda", lambda original: lambda self, x: serve(original, x, self),
                      ("self", "x"))]
    return Plugin("example", version=vllm.__version__, supported=("0.33.",),
                  patches=[Patch("silu_and_mul", targets)])


def patch_into_vllm(device):
    """Patches vLLM's SiluAndMul, runs the layer as vLLM builds it, checks it; the counters."""
    from hk_engine import counters
    from vllm.model_executor.layers.activation import SiluAndMul

    assert plugin().register(), "vLLM is not the version this example patches"
    x = torch.randn(16, 512, device=device).to(torch.bfloat16)
    check("vLLM SiluAndMul through hk", SiluAndMul().forward_native(x), reference(x))
    print("routes:", counters.snapshot())
    return counters.snapshot()


# 4. A/B: the same generation with and without the patch, each in its own process (on a GPU).
def ab(model):
    if not torch.cuda.is_available():
        print("--ab runs vLLM on a GPU; none is visible here")
        return
    seconds = {}
    for patched in (False, True):
        env = dict(os.environ, HK_EXAMPLE_PATCH="1" if patched else "0")
        out = subprocess.run([sys.executable, __file__, "--generate=" + model], env=env, check=True,
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
        seconds[patched] = float(out.strip().splitlines()[-1])
    print("vLLM %s: %.3f s stock, %.3f s with hk's SiLU-and-mul: %.2fx"
          % (model, seconds[False], seconds[True], seconds[False] / seconds[True]))


def generate(model):
    from vllm import LLM, SamplingParams

    if os.environ.get("HK_EXAMPLE_PATCH") == "1":
        plugin().register()
    llm = LLM(model=model, max_model_len=2048)
    params = SamplingParams(max_tokens=128, ignore_eos=True)
    prompts = ["The tile is"] * 32
    llm.generate(prompts, params)  # warm up (and capture graphs)
    start = time.perf_counter()
    llm.generate(prompts, params)
    print(time.perf_counter() - start)


if __name__ == "__main__":
    from absl import flags

    flags.DEFINE_bool("patch", False, "patch vLLM's SiluAndMul with the kernel and run the layer")
    flags.DEFINE_string("ab", None, "a model: time vLLM generating with and without the patch (GPU)")
    flags.DEFINE_string("generate", None, "(internal to --ab) one timed generation with MODEL")
    if any(a.startswith("--generate=") for a in sys.argv):
        FLAGS(sys.argv)
        generate(FLAGS.generate)
        sys.exit(0)
    run([(silu_and_mul_kernel, {})], checks)
