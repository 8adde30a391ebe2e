"""Triton's tutorial programs (tests/emu/triton/kernels.py), compiled ahead of time by the build for
gfx1100, gfx1201, gfx942 and gfx950, run on the emulator with its hazard detector on and checked
against numpy. Code nobody here wrote: its instructions, source modifiers and wave layouts are
what the emulator must get right.
"""

import json
import os

import numpy as np
from absl.testing import absltest, parameterized

import hk.emu
from hk.emu import runner
from tests.emu.triton import corpus, kernels
from tests.emu.triton.corpus import FLAGS

corpus.use_test_tmpdir()


def _load(spec, arch):
    path = corpus.code_object(spec, arch)
    with open(path[:-3] + ".json") as f:
        return path, json.load(f)


def launch(spec, arch, grid, *args, seed=None):
    """Runs SPECS[spec] for `arch` on the emulator with the hazard detector on (and, given a seed,
    memory operations completing in a random legal order); Triton's trailing scratch pointers
    are null."""
    path, meta = _load(spec, arch)
    (k,) = [k for k in hk.emu.kernels(path) if k == meta["name"]]
    block = meta["num_warps"] * kernels.ARCHS[arch]
    extra = len(runner.load(path)[0].kernel(k).explicit_args) - len(args)
    return hk.emu.launch(path, k, grid=grid, block=(block,), args=list(args) + [None] * extra,
                         arch=arch, shared_mem=meta["shared"], random_order_seed=seed)


def f16_round(x):
    return x.astype(np.float16).astype(np.float32)


def bf16(x):
    """float32 -> bf16 bits (round to nearest even) as uint16, and the values they hold."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32)


ARCHS = sorted(kernels.ARCHS)


def cases(*specs):
    return [dict(testcase_name="%s_%s" % (s, a), spec=s, arch=a) for s in specs for a in ARCHS]


class CorpusTest(parameterized.TestCase):
    SEED = None

    def launch(self, spec, arch, grid, *args):
        return launch(spec, arch, grid, *args, seed=self.SEED)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if FLAGS.objdump:
            os.environ["HK_LLVM_OBJDUMP"] = os.path.abspath(FLAGS.objdump)

    def setUp(self):
        super().setUp()
        self.rng = np.random.default_rng(20261201)

    @parameterized.named_parameters(cases("vector_add"))
    def test_vector_add(self, spec, arch):
        n = 1000                                         # not a multiple of the block: the mask
        x, y = self.rng.standard_normal((2, n), dtype=np.float32)
        out = np.full(n + 24, 7.0, np.float32)           # past n stays untouched
        self.launch(spec, arch, (4,), x, y, out, n)
        np.testing.assert_array_equal(out[:n], x + y)
        np.testing.assert_array_equal(out[n:], 7.0)

    @parameterized.named_parameters(cases("softmax_f32", "softmax_f16_w8"))
    def test_softmax(self, spec, arch):
        f16 = "f16" in spec
        rows, cols, stride = 7, (300 if f16 else 100), (320 if f16 else 112)
        x = (self.rng.standard_normal((rows, stride)) * 3).astype(np.float16 if f16 else np.float32)
        out = np.zeros((rows, stride), x.dtype)
        self.launch(spec, arch, (3,), out, x, stride, stride, rows, cols)    # three programs stride over seven rows
        ref = np.exp(x[:, :cols].astype(np.float64) - x[:, :cols].max(axis=1, keepdims=True))
        ref /= ref.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(out[:, :cols].astype(np.float64), ref, rtol=2e-3 if f16 else 2e-6, atol=1e-6)
        self.assertTrue((out[:, cols:] == 0).all())

    @parameterized.named_parameters(cases(*[s for s in kernels.SPECS if s.startswith("matmul_")]))
    def test_matmul(self, spec, arch):
        cons = kernels.SPECS[spec].constexprs
        signature = kernels.SPECS[spec].signature
        bf = signature["a_ptr"] == "*bf16"
        out_ty = signature["c_ptr"][1:]
        M, N, K = 2 * cons["BM"] + 16, 2 * cons["BN"], 3 * cons["BK"] + 16   # a partial tile in M and K
        if "K" in kernels.SPECS[spec].aligned:
            M, K = 2 * cons["BM"], 3 * cons["BK"]
        a = self.rng.standard_normal((M, K), dtype=np.float32)
        b = self.rng.standard_normal((K, N), dtype=np.float32)
        if bf:
            (a_bits, a), (b_bits, b) = bf16(a), bf16(b)
            a_dev, b_dev = a_bits, b_bits
        else:
            a, b = f16_round(a), f16_round(b)
            a_dev, b_dev = a.astype(np.float16), b.astype(np.float16)
        c = np.zeros((M, N), {"fp32": np.float32, "fp16": np.float16, "bf16": np.uint16}[out_ty])
        grid = -(-M // cons["BM"]) * -(-N // cons["BN"])
        self.launch(spec, arch, (grid,), a_dev, b_dev, c, M, N, K, K, N, N)    # unit strides are constants
        ref = a.astype(np.float64) @ b.astype(np.float64)
        if cons["LEAKY"]:
            ref = np.where(ref >= 0, ref, 0.01 * ref)
        got = (c.astype(np.uint32) << 16).view(np.float32) if out_ty == "bf16" else c.astype(np.float32)
        tol = {"fp32": 1e-4, "fp16": 2e-3, "bf16": 1e-2}[out_ty]
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.sqrt(K))

    @parameterized.named_parameters(cases("layernorm_fwd_f16", "layernorm_fwd_f32"))
    def test_layernorm_forward(self, spec, arch):
        f16 = "f16" in spec
        dt = np.float16 if f16 else np.float32
        rows, N = 5, (300 if f16 else 200)
        stride = 320 if f16 else 200
        x = (self.rng.standard_normal((rows, stride)) * 2 + 1.5).astype(dt)
        w = self.rng.standard_normal(N).astype(dt)
        b = self.rng.standard_normal(N).astype(dt)
        y = np.zeros((rows, stride), dt)
        mean, rstd = np.zeros(rows, np.float32), np.zeros(rows, np.float32)
        self.launch(spec, arch, (rows,), x, y, w, b, mean, rstd, stride, N, 1e-5)
        xs = x[:, :N].astype(np.float64)
        mu = xs.mean(axis=1)
        rs = 1 / np.sqrt(xs.var(axis=1) + 1e-5)
        np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(rstd, rs, rtol=1e-4)
        ref = (xs - mu[:, None]) * rs[:, None] * w.astype(np.float64) + b.astype(np.float64)
        np.testing.assert_allclose(y[:, :N].astype(np.float64), ref, rtol=5e-3 if f16 else 1e-5, atol=5e-3 if f16 else 1e-5)

    @parameterized.named_parameters(cases("layernorm_bwd_dx_f16"))
    def test_layernorm_backward(self, spec, arch):
        rows, N, groups = 9, 200, kernels.SPECS[spec].constexprs["GROUPS"]
        x = (self.rng.standard_normal((rows, N)) + 0.5).astype(np.float16)
        dy = self.rng.standard_normal((rows, N)).astype(np.float16)
        w = self.rng.standard_normal(N).astype(np.float32)
        xs, dys = x.astype(np.float64), dy.astype(np.float64)
        mu = xs.mean(axis=1)
        rs = 1 / np.sqrt(xs.var(axis=1) + 1e-5)
        dx = np.zeros((rows, N), np.float16)
        dw_part = np.full((groups, N), np.nan, np.float32)       # unset until a row fills it
        db_part = np.full((groups, N), np.nan, np.float32)
        locks = np.zeros(2 * groups, np.int32)
        self.launch(spec, arch, (rows,), dx, dy, dw_part, db_part, x, w, mu.astype(np.float32),
               rs.astype(np.float32), locks, N, N)
        xhat = (xs - mu[:, None]) * rs[:, None]
        wdy = w * dys
        ref_dx = (wdy - (xhat * (xhat * wdy).mean(axis=1, keepdims=True) + wdy.mean(axis=1, keepdims=True))) * rs[:, None]
        np.testing.assert_allclose(dx.astype(np.float64), ref_dx, rtol=1e-2, atol=1e-2)
        np.testing.assert_array_equal(locks, [0] * groups + [1] * groups)   # every lock released
        g = np.arange(rows) % groups
        for k in range(groups):
            np.testing.assert_allclose(dw_part[k], (dys * xhat)[g == k].sum(axis=0), rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(db_part[k], dys[g == k].sum(axis=0), rtol=1e-4, atol=1e-4)
        dw, db = np.zeros(N, np.float32), np.zeros(N, np.float32)
        self.launch("layernorm_bwd_dwdb", arch, (-(-N // 64),), dw_part, db_part, dw, db, groups, N)
        np.testing.assert_allclose(dw, (dys * xhat).sum(axis=0), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(db, dys.sum(axis=0), rtol=1e-4, atol=1e-4)

    @parameterized.named_parameters(cases("dropout"))
    def test_dropout(self, spec, arch):
        n, p, seed = 700, 0.3, 1234
        x = self.rng.standard_normal(n, dtype=np.float32) + 3.0      # never 0: a dropped element is
        out = np.full(n, np.nan, np.float32)
        self.launch(spec, arch, (3,), x, out, n, p, seed)
        import torch
        from hk.interp import philox                 # the tl.rand reference hk.rand is tested on
        keep = philox.uniform(seed, torch.arange(n)).numpy() > np.float32(p)
        np.testing.assert_array_equal(out == 0, ~keep)
        np.testing.assert_allclose(out[keep], x[keep] / np.float32(1 - p), rtol=1e-6)
        self.assertBetween(keep.mean(), 0.6, 0.8)

    @parameterized.named_parameters(cases("math_fns"))
    def test_libdevice_math(self, spec, arch):
        n = 300
        x = self.rng.uniform(-4, 4, n).astype(np.float32)
        y = self.rng.uniform(-3, 3, n).astype(np.float32)
        out = np.zeros(6 * n, np.float32)
        self.launch(spec, arch, (-(-n // 128),), x, y, out, n)
        xd, yd = x.astype(np.float64), y.astype(np.float64)
        from math import erf
        refs = [np.exp(xd), np.log(np.abs(xd) + 1), np.sin(xd), np.tanh(xd),
                np.array([erf(v) for v in xd]), (np.abs(xd) + 0.5) ** yd]
        for i, (name, ref) in enumerate(zip(["exp", "log", "sin", "tanh", "erf", "pow"], refs)):
            np.testing.assert_allclose(out[i * n:(i + 1) * n], ref, rtol=2e-6, atol=2e-7, err_msg=name)


    @parameterized.named_parameters(cases("math_more"))
    def test_more_math(self, spec, arch):
        n = 300
        x = self.rng.uniform(-4, 4, n).astype(np.float32)
        out = np.zeros(12 * n, np.float32)
        self.launch(spec, arch, (-(-n // 128),), x, out, n)
        xd, ad = x.astype(np.float64), np.abs(x.astype(np.float64))
        refs = [("cos", np.cos(xd)), ("sqrt", np.sqrt(ad)), ("rsqrt", 1 / np.sqrt(ad + 0.25)),
                ("atan", np.arctan(xd)), ("sinh", np.sinh(xd)), ("log1p", np.log1p(ad)), ("expm1", np.expm1(xd)),
                ("asinh", np.arcsinh(xd)), ("div", xd / (ad + 1)), ("fmod", np.fmod(xd, 1.5)),
                ("exp2+log2", 2 ** xd + np.log2(ad + 1)),
                ("sin of a large angle", np.sin((x * np.float32(1000)).astype(np.float64)))]
        for i, (name, ref) in enumerate(refs):
            np.testing.assert_allclose(out[i * n:(i + 1) * n], ref, rtol=3e-6, atol=1e-7, err_msg=name)


class DecodeTest(absltest.TestCase):

    def test_every_instruction_of_the_corpus_can_run(self):
        os.environ["HK_LLVM_OBJDUMP"] = os.path.abspath(FLAGS.objdump)
        for path in FLAGS.code_object:
            self.assertEqual(hk.emu.unsupported(path), [], os.path.basename(path))


class RandomOrderTest(CorpusTest):
    """The same programs with memory operations completing in a random legal order: correct
    code gives the same answers and no hazard."""
    SEED = 7


if __name__ == "__main__":
    absltest.main()
