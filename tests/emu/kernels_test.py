"""HIP kernels compiled by the hermetic clang for every architecture, run on the emulator and
checked against numpy: vector add, a reduction with shuffles, and a matrix-core GEMM through LDS
with barriers (WMMA on gfx1100/gfx1201, MFMA on gfx942/gfx950)."""

import numpy as np

import hk.emu
from tests.emu import emutest

ARCHS = ["gfx1100", "gfx1201", "gfx942", "gfx950"]
WAVE = {"gfx1100": 32, "gfx1201": 32, "gfx942": 64, "gfx950": 64}


class KernelsTest(emutest.EmuTest):

    def test_vector_add(self):
        rng = np.random.default_rng(0)
        for arch in ARCHS:
            with self.subTest(arch=arch):
                n = 1000                                   # not a multiple of the block: the bounds check
                a, b = rng.random(n, np.float32), rng.random(n, np.float32)
                c = np.full(n + 24, -1.0, np.float32)      # the tail must stay untouched
                hk.emu.launch(emutest.code_object("vector_add", arch), "vector_add", grid=(4,), block=(256,),
                              args=[a, b, c, n], arch=arch)
                np.testing.assert_array_equal(c[:n], a + b)
                np.testing.assert_array_equal(c[n:], -1.0)

    def test_reduce_with_shuffles(self):
        rng = np.random.default_rng(1)
        for arch in ARCHS:
            with self.subTest(arch=arch):
                n = 3000
                x = rng.standard_normal(n).astype(np.float32)
                out = np.zeros(12, np.float32)
                hk.emu.launch(emutest.code_object("reduce", arch), "block_sum", grid=(12,), block=(256,),
                              args=[x, out, n])
                ref = np.array([x[i * 256:(i + 1) * 256].astype(np.float64).sum() for i in range(12)])
                np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)

    def test_gemm_matrix_cores(self):
        rng = np.random.default_rng(2)
        M, N, K = 64, 96, 128
        for arch in ARCHS:
            with self.subTest(arch=arch):
                a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
                b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
                c = np.zeros((M, N), np.float32)
                hk.emu.launch(emutest.code_object("gemm", arch), "gemm_f16", grid=(N // 32, M // 32),
                              block=(4 * WAVE[arch],), args=[a, b, c, M, N, K])
                ref = a.astype(np.float64) @ b.astype(np.float64)
                # products of f16 are exact in f32: only the accumulation order differs
                np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)

    def test_private_array_in_scratch(self):
        rng = np.random.default_rng(4)
        for arch in ARCHS:
            with self.subTest(arch=arch):
                n = 256
                idx = rng.integers(0, 1000, n).astype(np.int32)
                out = np.zeros(n, np.float32)
                hk.emu.launch(emutest.code_object("private_array", arch), "private_array", grid=(2,), block=(128,),
                              args=[idx, out])
                ref = np.zeros(n, np.float32)
                for t in range(n):
                    buf = np.float32(t * 100.0) + np.arange(64, dtype=np.float32)
                    for i in range(64):
                        buf[(i * 7 + idx[t]) & 63] += np.float32(0.5 * i)
                    ref[t] = buf[idx[t] & 63]
                np.testing.assert_array_equal(out, ref)

    def test_math_library_and_conversions(self):
        rng = np.random.default_rng(5)
        n = 200
        for arch in ARCHS:
            for seed in (None, 7):
                with self.subTest(arch=arch, seed=seed):
                    x = rng.uniform(-3, 3, n).astype(np.float32)
                    k = rng.integers(-1000, 1000, n).astype(np.int32)
                    out = np.zeros(2 * n, np.float32)
                    ob = np.zeros(n, np.uint16)
                    od = np.zeros(n, np.float64)
                    cnt = np.zeros(1, np.uint32)
                    hk.emu.launch(emutest.code_object("math_mix", arch), "math_mix", grid=(4,), block=(64,),
                                  args=[x, k, out, ob, od, cnt, n], random_order_seed=seed)
                    xd, qd = x.astype(np.float64), k.astype(np.int64)
                    ref = (np.exp(xd) + np.log(np.abs(xd) + 1) + np.sin(xd) * np.cos(xd) + xd / (qd + 0.5) +
                           np.sqrt(np.abs(xd)) + np.tanh(xd))
                    ref += np.trunc(qd / 7) + np.fmod(qd, 13) + (k.view(np.uint32).astype(np.uint64) // 3)
                    ref += (x.astype(np.float16) * np.float16(1.5)).astype(np.float64)
                    np.testing.assert_allclose(out[:n], ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())
                    np.testing.assert_allclose(od, xd * 3 + np.sqrt(np.abs(xd)) + 1 / (qd + 1.5), rtol=1e-15)
                    bf = (ob.astype(np.uint32) << 16).view(np.float32)
                    np.testing.assert_allclose(bf, out[:n], rtol=2 ** -8)
                    waves = (n + WAVE[arch] - 1) // WAVE[arch]
                    self.assertEqual(cnt[0], waves)

    def test_random_legal_order_keeps_correct_kernels_correct(self):
        rng = np.random.default_rng(3)
        M, N, K = 32, 32, 64
        a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
        b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        for arch in ARCHS:
            for seed in (1, 2):
                with self.subTest(arch=arch, seed=seed):
                    c = np.zeros((M, N), np.float32)
                    hk.emu.launch(emutest.code_object("gemm", arch), "gemm_f16", grid=(1, 1),
                                  block=(4 * WAVE[arch],), args=[a, b, c, M, N, K], random_order_seed=seed)
                    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)

    def test_torch_tensors(self):
        import torch
        a = torch.arange(300, dtype=torch.float32)
        b = torch.ones(300)
        c = torch.zeros(300)
        hk.emu.launch(emutest.code_object("vector_add", "gfx1100"), "vector_add", grid=(2,), block=(256,),
                      args=[a, b, c, 300])
        self.assertTrue(torch.equal(c, a + 1))


if __name__ == "__main__":
    emutest.main()
