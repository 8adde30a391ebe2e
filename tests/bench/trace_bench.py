"""Prints how long tracing takes and the Python overhead of a repeated call.

    ./bazelw run //tests/bench:trace_bench

cold trace: a fresh Kernel traced, verified and run through the passes (the MLIR context and
the bindings already imported); warm trace: the same specialization again (a cache hit);
call overhead: a repeated call with the same specialization up to the runner, per call.

Then the same overhead of hk.ops.linear up to its kernels' runner (a repeated call: the key of
its operands' layouts, then its kernels' calls; the checks and the tuned-schedule lookup of the
first call are kept per layout): its implementation called directly, and through torch's
dispatcher (torch.ops.hk.linear), at a prefill's shape (one GEMM, the tuned file's choice) and a
decode's (split-K: two kernels and the parts' allocation).

Overheads are the calling thread's CPU time per call, the best of ROUNDS rounds: on a machine
shared with other jobs, wall time would count their turns too.
"""

import os
import time

from examples import load

ROUNDS, CALLS = 5, 1000
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
                overhead = "%10.1f us" % (per_call(lambda: fresh(a, a, a)) * 1e6)
            finally:
                hk.interp.run = real
        print("%-22s %9.1f ms %9.1f us %14s" % (name, cold * 1e3, warm * 1e6, overhead))
    ops_overhead()


def per_call(call):
    """The thread's CPU seconds per call of `call` after a first one, the best of ROUNDS."""
    call()
    best = None
    for _ in range(ROUNDS):
        start = time.thread_time()
        for _ in range(CALLS):
            call()
        took = (time.thread_time() - start) / CALLS
        best = took if best is None else min(best, took)
    return best


def ops_overhead():
    """hk.ops.linear up to its kernels' runner, on the interpreter with the runner replaced."""
    import hk.interp
    import hk.ops
    import torch
    from hk.ops import gemm

    os.environ["HK_DEVICE"] = "interp"
    real = hk.interp.run
    hk.interp.run = lambda traced, grid, args: None
    print()
    print("%-48s %14s" % ("hk.ops call (bf16, N = K = 256)", "call overhead"))
    try:
        w = torch.zeros(256, 256, dtype=torch.bfloat16)
        for rows, what in ((64, "M=64, one GEMM, tuned"), (1, "M=1, split-K")):
            x = torch.zeros(rows, 256, dtype=torch.bfloat16)
            for label, call in (("linear %s" % what, lambda: gemm._linear(x, w)),
                                ("torch.ops.hk.linear %s" % what, lambda: torch.ops.hk.linear(x, w))):
                print("%-48s %11.1f us" % (label, per_call(call) * 1e6))
    finally:
        hk.interp.run = real


if __name__ == "__main__":
    main()
