"""Prints the cold compile time of each example kernel for each target, and the cache-hit
latency of building it again.

    ./bazelw run //tests/bench:compile_bench

cold: a fresh cache, hipcc-equivalent compile plus the gate; hit: the code object found in the
cache (key, lookup, metadata read, gate) for an already traced kernel.
"""

import os
import shutil
import tempfile
import time

from examples import load

# (file, kernel, tensor divisors): the GEMM as LLM layers call it, 128-byte aligned rows.
KERNELS = [("01_vector_add", "add", None), ("02_rmsnorm", "rmsnorm", None), ("04_gemm", "gemm", 64),
           ("10_layernorm_backward", "layernorm_backward", None)]
ARCHS = ["gfx1100", "gfx1201", "gfx942", "gfx950"]


def main():
    from hk.runtime import build as build_lib

    cache = tempfile.mkdtemp(prefix="hk-bench-cache-")
    os.environ["HK_CACHE_DIR"] = cache
    print("%-20s %-8s %10s %10s" % ("kernel", "arch", "cold", "hit"))
    try:
        for file, name, divisors in KERNELS:
            kernel = getattr(load(file), name)
            for arch in ARCHS:
                traced = kernel.trace(arch=arch, divisors=divisors)
                traced.cpp  # translate outside the timing
                start = time.perf_counter()
                build_lib.build(traced)
                cold = time.perf_counter() - start
                build_lib.build(traced)
                start = time.perf_counter()
                for _ in range(20):
                    build_lib.build(traced)
                hit = (time.perf_counter() - start) / 20
                print("%-20s %-8s %8.2f s %7.2f ms" % (name, arch, cold, hit * 1e3))
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
