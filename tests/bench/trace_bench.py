"""Prints how long tracing takes and the Python overhead of a repeated call.

    ./bazelw run //tests/bench:trace_bench

cold trace: a fresh Kernel traced, verified and run through the passes (the MLIR context and
the bindings already imported); warm trace: the same specialization again (a cache hit);
call overhead: a repeated call with the same specialization up to the runner, per call.
"""

import os
import time

from examples import load

KERNELS = [("01_vector_add", "add"), ("02_rmsnorm", "rmsnorm"), ("03_softmax", "softmax"),
           ("04_gemm", "gemm"), ("05_attention", "attention"), ("10_layernorm_backward", "layernorm_backward")]


def main():
    import hk
    import torch

    print("%-22s %12s %12s %14s" % ("kernel", "cold trace", "warm trace", "call overhead"))
    load("01_vector_add").add.trace(arch="gfx1100")  # import and first-use costs, once
    for file, name in KERNELS:
        kernel = getattr(load(file), name)
        fresh = hk.Kernel(kernel.fn, grid=kernel.grid, warps=kernel.warps)
        start = time.perf_counter()
        fresh.trace(arch="gfx1100")
        cold = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(100):
            fresh.trace(arch="gfx1100")
        warm = (time.perf_counter() - start) / 100
        overhead = ""
        if name == "add":
            # Everything a call does before the runner takes over: checks, grid, cache lookup.
            a = torch.zeros(64, 64, dtype=torch.bfloat16)
            os.environ["HK_DEVICE"] = "interp"
            import hk.interp

            real = hk.interp.run
            hk.interp.run = lambda traced, grid, args: None
            try:
                fresh(a, a, a)
                start = time.perf_counter()
                for _ in range(1000):
                    fresh(a, a, a)
                overhead = "%10.1f us" % ((time.perf_counter() - start) / 1000 * 1e6)
            finally:
                hk.interp.run = real
        print("%-22s %9.1f ms %9.1f us %14s" % (name, cold * 1e3, warm * 1e6, overhead))


if __name__ == "__main__":
    main()
