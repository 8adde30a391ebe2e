"""Prints the emulator's speed in wave-instructions per second on vector add and on the GEMM
tile kernel (gfx1100 code objects), with and without the hazard model, and on the GEMM in
hk.emu.profile (hk.perf's mode: every workgroup's streams, LDS cycles and lines). Not a test.

    ./bazelw run //hk/emu:bench
"""

import os
import sys
import time

import numpy as np
from absl import app, flags

import hk.emu

FLAGS = flags.FLAGS
flags.DEFINE_string("vector_add", None, "vector_add code object")
flags.DEFINE_string("gemm", None, "gemm_f16 code object")
flags.DEFINE_string("objdump", None, "llvm-objdump")
flags.DEFINE_integer("repeat", 3, "runs per measurement; the best is reported")


def measure(fn):
    fn()                                              # decode once, warm caches
    count, best = 0, float("inf")
    for _ in range(FLAGS.repeat):
        t = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - t)
    return count, best


def main(argv):
    del argv
    if FLAGS.objdump:
        os.environ["HK_LLVM_OBJDUMP"] = os.path.abspath(FLAGS.objdump)
    n = 1 << 20
    a, b, c = (np.random.rand(n).astype(np.float32) for _ in range(3))
    M = N = K = 256
    x = np.random.rand(M, K).astype(np.float16)
    y = np.random.rand(K, N).astype(np.float16)
    z = np.zeros((M, N), np.float32)
    cases = [
        ("vector add, 2^20 floats", lambda hz: hk.emu.launch(FLAGS.vector_add, "vector_add", (n // 256,), (256,),
                                                             [a, b, c, n], hazards=hz)),
        ("GEMM f16 256x256x256 (WMMA, LDS, barriers)",
         lambda hz: hk.emu.launch(FLAGS.gemm, "gemm_f16", (N // 32, M // 32), (128,), [x, y, z, M, N, K], hazards=hz)),
    ]
    every = [(i, j, 0) for j in range(M // 32) for i in range(N // 32)]
    cases.append(("GEMM f16 256x256x256, profiled",
                  lambda hz: hk.emu.profile(FLAGS.gemm, "gemm_f16", (N // 32, M // 32), (128,), [x, y, z, M, N, K],
                                            workgroups=every, hazards=hz).executed))
    for name, fn in cases:
        for hz in (True, False):
            count, dt = measure(lambda: fn(hz))
            print("%-45s hazards=%-5s %9d wave-instructions in %6.3f s: %5.2f M wave-instructions/s"
                  % (name, hz, count, dt, count / dt / 1e6))
    sys.stdout.flush()


if __name__ == "__main__":
    app.run(main)
