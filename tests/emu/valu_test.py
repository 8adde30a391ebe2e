"""Known answers for the vector ALU on gfx1100: f32 arithmetic with input and output modifiers,
integer and carry arithmetic, conversions, true16 and packed 16-bit math, transcendentals within
the hardware's error, comparisons, the precise-division sequence, and f64. A few gfx9 (gfx942)
and gfx12 (gfx1201) forms at the end. Inputs are per lane: v1..v4 hold inp[i * wave + lane]."""

import numpy as np

from tests.emu import asm, emutest

RNG = np.random.default_rng(7)


loads, inputs = emutest.loads, emutest.inputs


def f32(x):
    return np.asarray(x, np.float64).astype(np.float32)


A = f32(RNG.uniform(-2, 2, 32))
B = f32(RNG.uniform(-2, 2, 32))
C = f32(RNG.uniform(-2, 2, 32))
U1 = RNG.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
U2 = RNG.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
U3 = RNG.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
U4 = RNG.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)


def fma32(a, b, c):
    return (a.astype(np.float64) * b + c).astype(np.float32)


def fp8_table(kind, fnuz):
    """The value of each of the 256 codes (NaN where the format has none)."""
    man = 3 if kind == "fp8" else 2
    bias = (8 if kind == "fp8" else 16) if fnuz else (7 if kind == "fp8" else 15)
    out = np.zeros(256)
    for c in range(256):
        s, e, m = c >> 7, (c >> man) & ((1 << (7 - man)) - 1), c & ((1 << man) - 1)
        v = (m / 2**man) * 2.0 ** (1 - bias) if e == 0 else (1 + m / 2**man) * 2.0 ** (e - bias)
        if fnuz and c == 0x80:
            v = np.nan
        elif not fnuz and kind == "fp8" and e == 15 and m == 7:
            v = np.nan
        elif not fnuz and kind == "bf8" and e == 31:
            v = np.nan if m else np.inf
        out[c] = -v if s else v
    return out


def encode_nearest(table, v):
    """Round to nearest, ties to an even code, over the finite codes (no negative zero in FNUZ)."""
    best = None
    for c in range(256):
        t = table[c]
        if not np.isfinite(t) or (t == 0 and np.signbit(t) != np.signbit(v) and v != 0):
            continue
        d = abs(float(v) - t)
        if best is None or d < best[0] or (d == best[0] and c % 2 == 0 and best[1] % 2 == 1):
            best = (d, c)
    c = best[1]
    if v == 0 and np.signbit(v) and table[0x80] == 0:
        c = 0x80
    return c


# The sequence clang emits for an f32 a / b (div_scale, rcp, Newton steps, div_fmas, div_fixup):
# v1 / v2 into v10.
F32_DIVISION = """
  v_div_scale_f32 v20, null, v2, v2, v1
  v_div_scale_f32 v21, vcc_lo, v1, v2, v1
  v_rcp_f32 v22, v20
  v_fma_f32 v23, -v20, v22, 1.0
  v_fmac_f32 v22, v23, v22
  v_mul_f32 v23, v21, v22
  v_fma_f32 v24, -v20, v23, v21
  v_fmac_f32 v23, v24, v22
  v_fma_f32 v21, -v20, v23, v21
  v_div_fmas_f32 v21, v21, v22, v23
  v_div_fixup_f32 v10, v21, v2, v1
"""


class ValuTest(emutest.EmuTest):

    def check(self, arch, name, body, nin, ins, expected, tol_ulp=0):
        co = asm.assemble(arch, {name: (loads(arch, nin) + body, [10 + i for i in range(len(expected))])})
        out = emutest.run_asm(arch, co, name, len(expected), inp=inputs(arch, *ins))
        for i, e in enumerate(expected):
            e = np.asarray(e)
            got = out[i]
            if e.dtype == np.float32:
                g = got.view(np.float32)
                if tol_ulp:
                    ulp = np.spacing(np.abs(e).astype(np.float32))
                    bad = ~(np.abs(g.astype(np.float64) - e) <= tol_ulp * ulp) & ~(np.isnan(g) & np.isnan(e))
                    self.assertFalse(bad.any(), "%s result %d lanes %s: got %s want %s" % (
                        name, i, np.nonzero(bad)[0], g[bad], e[bad]))
                else:
                    np.testing.assert_array_equal(g, e, err_msg="%s result v%d" % (name, 10 + i))
            else:
                np.testing.assert_array_equal(got, e.astype(np.uint32), err_msg="%s result v%d" % (name, 10 + i))

    def test_f32_arithmetic_and_modifiers(self):
        body = """
  v_add_f32 v10, v1, v2
  v_mul_f32 v11, v1, v2
  v_sub_f32 v12, v1, v2
  v_fma_f32 v13, v1, v2, v3
  v_max_f32 v14, v1, v2
  v_min_f32 v15, v1, v2
  v_mov_b32 v16, v3
  v_fmac_f32 v16, v1, v2
  v_add_f32_e64 v17, -v1, |v2|
  v_mul_f32_e64 v18, v1, v2 clamp
  v_add_f32_e64 v19, v1, v2 mul:2
  v_med3_f32 v20, v1, v2, v3
  v_fmaak_f32 v21, v1, v2, 0x40000000
  v_fmamk_f32 v22, v1, 0x3f000000, v2
  v_subrev_f32 v23, v1, v2
  v_add_f32_e64 v24, v1, v2 div:2
"""
        med = np.median(np.stack([A, B, C]), axis=0).astype(np.float32)
        exp = [A + B, A * B, A - B, fma32(A, B, C), np.maximum(A, B), np.minimum(A, B), fma32(A, B, C),
               -A + np.abs(B), np.clip(A * B, 0, 1), (A + B) * 2, med, fma32(A, B, f32(2.0)),
               fma32(A, f32(0.5), B), B - A, (A + B) * f32(0.5)]
        self.check("gfx1100", "f32", body, 3, (A, B, C), [np.asarray(e, np.float32) for e in exp])

    def test_integer(self):
        body = """
  v_add_nc_u32 v10, v1, v2
  v_sub_nc_u32 v11, v1, v2
  v_mul_lo_u32 v12, v1, v2
  v_mul_hi_u32 v13, v1, v2
  v_lshlrev_b32 v14, 5, v1
  v_ashrrev_i32 v15, 7, v1
  v_bfe_u32 v16, v1, 3, 5
  v_bfe_i32 v17, v1, 28, 4
  v_bfi_b32 v18, v1, v2, v3
  v_alignbit_b32 v19, v1, v2, 8
  v_add3_u32 v20, v1, v2, v3
  v_lshl_or_b32 v21, v1, 4, v2
  v_max_i32 v22, v1, v2
  v_min_u32 v23, v1, v2
  v_perm_b32 v24, v1, v2, 0x0c070501
  v_xor3_b32 v25, v1, v2, v3
  v_bcnt_u32_b32 v26, v1, 3
  v_mul_hi_i32 v27, v1, v2
"""
        a, b, c = (x.astype(np.uint64) for x in (U1, U2, U3))
        m = 0xFFFFFFFF
        s32 = lambda x: x.astype(np.uint32).view(np.int32)
        bfi = (a & b) | (~a & m & c)
        align = (((a << 32) | b) >> 8) & m
        byte = lambda x, i: (x >> (8 * i)) & 0xFF
        v64 = (a << 32) | b                       # perm selects bytes of {S0, S1}
        perm = byte(v64, 1) | byte(v64, 5) << 8 | byte(v64, 7) << 16 | 0 << 24
        popc = np.array([bin(int(x)).count("1") for x in U1]) + 3
        exp = [(a + b) & m, (a - b) & m, (a * b) & m, (a * b) >> 32, (a << 5) & m,
               s32(U1) >> 7, (a >> 3) & 31, s32(U1) >> 28, bfi, align, (a + b + c) & m, ((a << 4) | b) & m,
               np.maximum(s32(U1), s32(U2)), np.minimum(U1, U2), perm, a ^ b ^ c, popc,
               (s32(U1).astype(np.int64) * s32(U2)) >> 32]
        self.check("gfx1100", "int", body, 3, (U1, U2, U3), [np.asarray(e).astype(np.int64).astype(np.uint32) for e in exp])

    def test_carries_and_wide_multiply(self):
        body = """
  v_add_co_u32 v10, vcc_lo, v1, v2
  v_add_co_ci_u32_e32 v11, vcc_lo, v3, v4, vcc_lo
  v_sub_co_u32 v12, s20, v1, v2
  v_sub_co_ci_u32_e64 v13, s21, v3, v4, s20
  v_mad_u64_u32 v[14:15], null, v1, v2, v[3:4]
  v_mov_b32 v16, s21
  v_mad_i64_i32 v[17:18], null, v1, v2, 0
"""
        x = U1.astype(np.uint64) | U3.astype(np.uint64) << 32
        y = U2.astype(np.uint64) | U4.astype(np.uint64) << 32
        s, d = x + y, x - y
        borrow = np.array([int(a) < int(b) for a, b in zip(x, y)])
        mask = sum(1 << i for i in range(32) if borrow[i])
        mad = U1.astype(np.uint64) * U2.astype(np.uint64) + (U3.astype(np.uint64) | U4.astype(np.uint64) << 32)
        smul = U1.view(np.int32).astype(np.int64) * U2.view(np.int32).astype(np.int64)
        exp = [s & 0xFFFFFFFF, s >> 32, d & 0xFFFFFFFF, d >> 32, mad & 0xFFFFFFFF, mad >> 32,
               np.full(32, mask, np.uint64), smul.view(np.uint64) & 0xFFFFFFFF, smul.view(np.uint64) >> 32]
        self.check("gfx1100", "carry", body, 4, (U1, U2, U3, U4), [np.asarray(e, np.uint64) for e in exp])

    def test_conversions_and_rounding(self):
        big = f32(np.concatenate([RNG.uniform(-1e10, 1e10, 28), [np.nan, np.inf, -np.inf, -0.0]]))
        body = """
  v_cvt_i32_f32 v10, v1
  v_cvt_u32_f32 v11, v1
  v_cvt_f32_i32 v12, v2
  v_rndne_f32 v13, v3
  v_floor_f32 v14, v3
  v_fract_f32 v15, v3
  v_ldexp_f32 v16, v3, 3
  v_frexp_mant_f32 v17, v3
  v_frexp_exp_i32_f32 v18, v3
  v_trunc_f32 v19, v3
  v_ceil_f32 v20, v3
"""
        ints = U2.view(np.int32)
        c = A * 7.3
        sat_i = np.where(np.isnan(big), 0, np.clip(np.nan_to_num(big.astype(np.float64)), -2**31, 2**31 - 1))
        sat_i = np.trunc(sat_i).astype(np.int64).astype(np.int32)
        sat_u = np.where(np.isnan(big) | (big < 0), 0, np.clip(np.nan_to_num(big.astype(np.float64)), 0, 2**32 - 1))
        sat_u = np.trunc(sat_u).astype(np.int64).astype(np.uint32)
        mant, ex = np.frexp(c)
        exp = [sat_i.view(np.uint32), sat_u, ints.astype(np.float32), np.rint(c).astype(np.float32),
               np.floor(c).astype(np.float32), (c - np.floor(c)).astype(np.float32), (c * 8).astype(np.float32),
               mant.astype(np.float32), ex.astype(np.uint32), np.trunc(c).astype(np.float32),
               np.ceil(c).astype(np.float32)]
        self.check("gfx1100", "cvt", body, 3, (big, ints, f32(c)), exp)

    def test_true16_and_packed(self):
        h1 = RNG.uniform(-4, 4, 64).astype(np.float16)
        h2 = RNG.uniform(-4, 4, 64).astype(np.float16)
        w1, w2 = h1.view(np.uint32), h2.view(np.uint32)          # two halves per lane
        body = """
  v_mov_b32 v10, 0
  v_add_f16 v10.l, v1.l, v1.h
  v_mul_f16 v10.h, v1.h, v2.l
  v_pk_add_f16 v11, v1, v2
  v_pk_fma_f16 v12, v1, v2, v2 op_sel:[1,0,0] op_sel_hi:[0,1,1]
  v_pack_b32_f16 v13, v1.h, v2.l
  v_cvt_f32_f16 v14, v1.h
  v_cvt_f16_f32 v15.l, v3
  v_pk_mul_lo_u16 v16, v1, v2
  v_fma_f16 v17.l, v1.l, v2.h, -v1.h
  v_pk_max_f16 v18, v1, v2 neg_lo:[1,0] neg_hi:[0,1]
"""
        lo1, hi1, lo2, hi2 = h1[0::2], h1[1::2], h2[0::2], h2[1::2]
        pack = lambda lo, hi: np.asarray(lo, np.float16).view(np.uint16).astype(np.uint32) | \
            np.asarray(hi, np.float16).view(np.uint16).astype(np.uint32) << 16
        f = lambda x: np.asarray(x, np.float64)
        fma16 = lambda a, b, c: (f(a) * f(b) + f(c)).astype(np.float16)
        c3 = f32(RNG.uniform(-100, 100, 32))
        u1, u2 = w1.astype(np.uint64), w2.astype(np.uint64)
        mullo = ((u1 & 0xFFFF) * (u2 & 0xFFFF) & 0xFFFF) | (((u1 >> 16) * (u2 >> 16)) & 0xFFFF) << 16
        exp = [pack((f(lo1) + f(hi1)).astype(np.float16), (f(hi1) * f(lo2)).astype(np.float16)),
               pack(lo1 + lo2, hi1 + hi2),
               pack(fma16(hi1, lo2, lo2), fma16(lo1, hi2, hi2)),
               pack(hi1, lo2), hi1.astype(np.float32), c3.astype(np.float16).view(np.uint16).astype(np.uint32),
               mullo, fma16(lo1, hi2, -hi1).view(np.uint16).astype(np.uint32),
               pack(np.maximum(-lo1, lo2), np.maximum(hi1, -hi2))]
        co = asm.assemble("gfx1100", {"h": (loads("gfx1100", 3) + body, list(range(10, 19)))})
        out = emutest.run_asm("gfx1100", co, "h", 9, inp=inputs("gfx1100", w1, w2, c3))
        for i, e in enumerate(exp):
            if i == 7:
                np.testing.assert_array_equal(out[i] & 0xFFFF, e, err_msg="v%d" % (10 + i))
            elif i == 4:
                np.testing.assert_array_equal(out[i].view(np.float32), e)
            else:
                np.testing.assert_array_equal(out[i], np.asarray(e, np.uint32), err_msg="v%d" % (10 + i))

    def test_transcendentals_within_hardware_error(self):
        pos = f32(RNG.uniform(0.01, 100, 32))
        x = f32(RNG.uniform(-10, 10, 32))
        body = """
  v_exp_f32 v10, v2
  v_log_f32 v11, v1
  v_rcp_f32 v12, v1
  v_rsq_f32 v13, v1
  v_sqrt_f32 v14, v1
  v_sin_f32 v15, v3
  v_cos_f32 v16, v3
"""
        r = f32(RNG.uniform(-1, 1, 32))
        d = lambda v: np.asarray(v, np.float64)
        exp = [np.exp2(d(x)), np.log2(d(pos)), 1 / d(pos), 1 / np.sqrt(d(pos)), np.sqrt(d(pos)),
               np.sin(2 * np.pi * d(r)), np.cos(2 * np.pi * d(r))]
        self.check("gfx1100", "trans", body, 3, (pos, x, r), [np.asarray(e).astype(np.float32) for e in exp],
                   tol_ulp=2)

    def test_transcendentals_have_no_denormals(self):
        # v_exp_f32 gives 0 below 2^-126 and v_log_f32 takes a denormal input as 0, whatever the
        # denormal mode (the compiler's accurate exp2 and log2 scale around exactly this).
        body = """
  v_exp_f32 v10, v1
  v_log_f32 v11, v2
"""
        for arch in ("gfx1100", "gfx950"):
            wave = asm.WAVE[arch]
            x = np.resize([-126.0, -125.0, -127.0, -140.0, -149.0, -200.0, 0.0, -np.inf], wave)
            tiny = f32(np.resize([2.0 ** -126, 2.0 ** -127, 2.0 ** -140, 2.0 ** -149, 1.0, 0.0, 2.0 ** -100, 0.5], wave))
            exp2 = np.where(x < -126, 0.0, np.exp2(x))
            log2 = np.where(tiny < 2.0 ** -126, -np.inf, np.log2(np.maximum(tiny, 2.0 ** -126)))
            self.assertEqual((exp2[3], log2[1]), (0.0, -np.inf))
            self.check(arch, "trans_denormals", body, 2, (f32(x), tiny), [f32(exp2), f32(log2)])

    def test_compare_and_select(self):
        a = A.copy()
        a[:4] = [np.nan, 1.0, -0.0, np.inf]
        body = """
  v_cmp_gt_f32 vcc_lo, v1, v2
  v_cndmask_b32 v10, 0, 1, vcc_lo
  v_cmp_u_f32_e64 s20, v1, v1
  v_cndmask_b32_e64 v11, 0, 1, s20
  v_cmp_class_f32_e64 s21, v1, 0x60
  v_cndmask_b32_e64 v12, 0, 1, s21
  v_mov_b32 v13, 0
  s_mov_b32 s22, exec_lo
  v_cmpx_lt_f32 v1, v2
  v_mov_b32 v13, 7
  s_mov_b32 exec_lo, s22
  v_cmp_ne_u32 vcc_lo, 0, v3
  v_mov_b32 v14, vcc_lo
"""
        gt = np.array([x > y for x, y in zip(a, B)])
        un = np.isnan(a)
        zero = a == 0                                     # class mask 0x60: -0 and +0
        lt = np.array([x < y for x, y in zip(a, B)])
        u3 = (U3 % 2).astype(np.uint32)
        ne_mask = sum(1 << i for i in range(32) if u3[i] != 0)
        exp = [gt, un, zero, np.where(lt, 7, 0), np.full(32, ne_mask)]
        self.check("gfx1100", "cmp", body, 3, (a, B, u3), [np.asarray(e).astype(np.uint32) for e in exp])

    def test_precise_division_sequence(self):
        num = f32(np.concatenate([RNG.uniform(-100, 100, 26), [1.0, 0.0, 1.0, 3.0, -5.0, 1e-30]]))
        den = f32(np.concatenate([RNG.uniform(-100, 100, 26), [3.0, 5.0, 0.0, np.inf, 7.0, 3e30]]))
        body = F32_DIVISION
        with np.errstate(divide="ignore", invalid="ignore"):
            q = (num / den).astype(np.float32)
        self.check("gfx1100", "div", body, 2, (num, den), [q])

    def test_division_where_div_scale_scales(self):
        # The branches of v_div_scale: a quotient near the largest float (the denominator is
        # scaled up, v_div_fmas scales back by 2^64 / 2^128), a denormal quotient (the numerator
        # scaled up, back by 2^-64 / 2^-128, rounding once), a denormal denominator or a tiny
        # numerator (both scaled), and quotients beyond the range (infinity, through the NaN of
        # the Newton steps) or below it (0, ties to even). clang's f32 and f64 sequences.
        pairs32 = [(2.0 ** 100, 4.0), (2.0 ** 100, 3.0), (-2.0 ** 100, 3.0), (3e38, 1e-7), (1e-40, 3.0),
                   (3e-39, 7.0), (1.0, 3e-39), (1e-40, 1e-41), (1e30, 1e-45), (7.0, 7.3e-40), (1.5, 1.4e-45),
                   (1e-30, 3e30), (1.4e-45, 2.0), (4.2e-45, 2.0), (2.0 ** -126, 2.0 ** 100), (5.0, 0.1)]
        num = f32(np.concatenate([[p[0] for p in pairs32], 2.0 ** RNG.uniform(-140, 127, 16)]))
        den = f32(np.concatenate([[p[1] for p in pairs32], 2.0 ** RNG.uniform(-140, 127, 16)]))
        body = F32_DIVISION
        with np.errstate(over="ignore", under="ignore"):
            q = num / den
        self.assertTrue(np.isinf(q).any() and (q == 0).any() and (np.abs(q) < 2.0 ** -126).any())
        self.check("gfx1100", "div32", body, 2, (num, den), [q])

        pairs64 = [(2.0 ** 1000, 3.0), (-2.0 ** 1000, 7.0), (1e-310, 3.0), (1e-300, 1e10), (1.0, 1e-310),
                   (1e300, 1e-10), (5e-324, 2.0), (1.5e-323, 2.0), (1e-300, 1e300), (5.0, 0.1)]
        a = np.concatenate([[p[0] for p in pairs64], 2.0 ** RNG.uniform(-1070, 1023, 22)])
        b = np.concatenate([[p[1] for p in pairs64], 2.0 ** RNG.uniform(-1070, 1023, 22)])
        body = """
  v_div_scale_f64 v[20:21], null, v[3:4], v[3:4], v[1:2]
  v_rcp_f64 v[22:23], v[20:21]
  v_fma_f64 v[24:25], -v[20:21], v[22:23], 1.0
  v_fma_f64 v[22:23], v[22:23], v[24:25], v[22:23]
  v_fma_f64 v[24:25], -v[20:21], v[22:23], 1.0
  v_fma_f64 v[22:23], v[22:23], v[24:25], v[22:23]
  v_div_scale_f64 v[24:25], vcc_lo, v[1:2], v[3:4], v[1:2]
  v_mul_f64 v[26:27], v[24:25], v[22:23]
  v_fma_f64 v[20:21], -v[20:21], v[26:27], v[24:25]
  v_div_fmas_f64 v[20:21], v[20:21], v[22:23], v[26:27]
  v_div_fixup_f64 v[10:11], v[20:21], v[3:4], v[1:2]
"""
        with np.errstate(over="ignore", under="ignore"):
            q = (a / b).view(np.uint64)
        words = lambda x: [(x.view(np.uint64) >> s & 0xFFFFFFFF).astype(np.uint32) for s in (0, 32)]
        self.check("gfx1100", "div64", body, 4, words(a) + words(b), [q & 0xFFFFFFFF, q >> 32])

    def test_f64(self):
        d1 = RNG.uniform(-5, 5, 32)
        d2 = RNG.uniform(-5, 5, 32)
        w1, w2 = d1.view(np.uint32), d2.view(np.uint32)
        body = """
  v_add_f64 v[10:11], v[1:2], v[3:4]
  v_mul_f64 v[12:13], v[1:2], v[3:4]
  v_fma_f64 v[14:15], v[1:2], v[3:4], 1.0
  v_cvt_f32_f64 v16, v[1:2]
  v_cvt_f64_f32 v[17:18], v16
"""
        # lanes 0-15 use inp pairs: v1,v2 = d1 words; v3,v4 = d2 words (each lane its own double)
        lo1, hi1 = w1[0::2][:32] if False else (w1[:64:2], w1[1:64:2])
        lo2, hi2 = (w2[:64:2], w2[1:64:2])
        a = (lo1.astype(np.uint64) | hi1.astype(np.uint64) << 32).view(np.float64)
        b = (lo2.astype(np.uint64) | hi2.astype(np.uint64) << 32).view(np.float64)
        f = lambda x: [np.asarray(x, np.float64).view(np.uint64) & 0xFFFFFFFF, np.asarray(x, np.float64).view(np.uint64) >> 32]
        from fractions import Fraction
        fma = np.array([float(Fraction(x) * Fraction(y) + 1) for x, y in zip(a, b)])
        exp = f(a + b) + f(a * b) + f(fma) + [a.astype(np.float32).view(np.uint32)] + \
            f(a.astype(np.float32).astype(np.float64))
        self.check("gfx1100", "f64", body, 4, (lo1, hi1, lo2, hi2), [np.asarray(e, np.uint64) for e in exp])

    def test_mixed_precision_and_dot_products(self):
        h = RNG.uniform(-2, 2, 64).astype(np.float16)
        w1 = h.view(np.uint32)                                   # two halves per lane
        fl = f32(RNG.uniform(-2, 2, 32))
        i8a = RNG.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
        i8b = RNG.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
        body = """
  v_fma_mix_f32 v10, v1, v2, v2 op_sel:[1,0,0] op_sel_hi:[1,0,0]
  v_mov_b32 v11, 0x12345678
  v_fma_mixlo_f16 v11, v1, v1, v2 op_sel_hi:[1,1,0]
  v_dot2_f32_f16 v12, v1, v1, v2
  v_dot4_i32_iu8 v13, v3, v4, 5 neg_lo:[1,0,0]
"""
        lo, hi = h[0::2].astype(np.float64), h[1::2].astype(np.float64)
        f = fl.astype(np.float64)
        mix = (hi * f + f).astype(np.float32)
        mixlo = (lo * lo + f).astype(np.float16).view(np.uint16).astype(np.uint32) | 0x12340000
        dot2 = (lo * lo + hi * hi + f).astype(np.float32)
        a8 = i8a.view(np.uint8).reshape(32, 4).astype(np.int8).astype(np.int64)      # signed (neg_lo[0])
        b8 = i8b.view(np.uint8).reshape(32, 4).astype(np.int64)                       # unsigned
        dot4 = ((a8 * b8).sum(axis=1) + 5).astype(np.int64).astype(np.uint32)
        co = asm.assemble("gfx1100", {"mix": (loads("gfx1100", 4) + body, [10, 11, 12, 13])})
        out = emutest.run_asm("gfx1100", co, "mix", 4, inp=inputs("gfx1100", w1, fl, i8a, i8b))
        np.testing.assert_array_equal(out[0].view(np.float32), mix)
        np.testing.assert_array_equal(out[1], mixlo)
        np.testing.assert_allclose(out[2].view(np.float32), dot2, rtol=1e-6)
        np.testing.assert_array_equal(out[3], dot4)

    def test_gfx950_conversions_and_swaps(self):
        a = f32(RNG.uniform(-100, 100, 64))
        b = f32(RNG.uniform(-100, 100, 64))
        body = """
  v_cvt_pk_bf16_f32 v10, v1, v2
  v_mov_b32 v11, v0
  v_mov_b32 v12, v0
  v_add_u32 v12, 100, v12
  v_permlane32_swap_b32 v11, v12
  v_mov_b32 v13, v0
  v_mov_b32 v14, v0
  v_add_u32 v14, 100, v14
  v_permlane16_swap_b32 v13, v14
  v_mov_b32 v16, v1
  v_mov_b32 v17, v2
  v_pk_mov_b32 v[18:19], v[16:17], v[16:17] op_sel:[1,0]
  v_mov_b32 v15, v18
"""
        def bf16(x):
            u = x.view(np.uint32).astype(np.uint64)
            return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
        co = asm.assemble("gfx950", {"g950": (loads("gfx950", 2) + body, [10, 11, 12, 13, 14, 15, 19])})
        out = emutest.run_asm("gfx950", co, "g950", 7, inp=inputs("gfx950", a, b))
        l = np.arange(64)
        np.testing.assert_array_equal(out[0], (bf16(a) | bf16(b) << 16).astype(np.uint32))
        # 32: vdst's upper half <-> vsrc's lower half
        np.testing.assert_array_equal(out[1], np.where(l >= 32, l - 32 + 100, l))
        np.testing.assert_array_equal(out[2], np.where(l < 32, l + 32, l + 100))
        # 16: vdst's odd rows <-> vsrc's even rows
        odd = (l >> 4) & 1 == 1
        np.testing.assert_array_equal(out[3], np.where(odd, l - 16 + 100, l))
        np.testing.assert_array_equal(out[4], np.where(~odd, l + 16, l + 100))
        np.testing.assert_array_equal(out[5], b.view(np.uint32))      # op_sel[0]: the high dword of src0
        np.testing.assert_array_equal(out[6], a.view(np.uint32))      # op_sel[1] = 0: the low dword of src1

    def test_f32_denormal_mode_of_the_descriptor(self):
        tiny = np.full(32, np.float32(1e-39))                   # a denormal
        body = loads("gfx1100", 2) + "  v_add_f32 v10, v1, v2\n  v_mul_f32 v11, v1, 1.0\n  v_mul_f32 v12, v2, 0.5\n"
        co = asm.assemble("gfx1100", {
            "keep": (body, [10, 11, 12], {"directives": [".amdhsa_float_denorm_mode_32 3"]}),
            "flush": (body, [10, 11, 12], {"directives": [".amdhsa_float_denorm_mode_32 0"]}),
        })
        big = np.full(32, np.float32(2e-38))                    # normal; half of it is denormal
        inp = inputs("gfx1100", tiny, big)
        keep = emutest.run_asm("gfx1100", co, "keep", 3, inp=inp).view(np.float32)
        flush = emutest.run_asm("gfx1100", co, "flush", 3, inp=inp).view(np.float32)
        np.testing.assert_array_equal(keep[0], tiny + big)
        np.testing.assert_array_equal(keep[1], tiny)
        np.testing.assert_array_equal(keep[2], big * np.float32(0.5))
        np.testing.assert_array_equal(flush[0], big)            # the denormal input is read as 0
        np.testing.assert_array_equal(flush[1], 0)
        np.testing.assert_array_equal(flush[2], 0)              # the denormal result is flushed

    def test_fp8_conversions(self):
        vals = f32([1.0, -2.0, 0.5, 0.3, 3.14159, -0.0078125, 12.0, 0.0] * 8)
        vals2 = f32([-1.5, 100.0, 0.001953125, -7.0, 0.1, 2.5, -0.75, 224.0] * 8)
        for arch, fnuz in (("gfx942", True), ("gfx950", False), ("gfx1201", False)):
            for kind in ("fp8", "bf8"):
                with self.subTest(arch=arch, kind=kind):
                    table = fp8_table(kind, fnuz)
                    wave = asm.WAVE[arch]
                    body = """
  v_mov_b32 v10, 0
  v_cvt_pk_%s_f32 v10, v1, v2
  v_cvt_pk_f32_%s v[12:13], v10
  v_mov_b32 v11, v13
  v_mov_b32 v12, v12
""" % (kind, kind)
                    co = asm.assemble(arch, {"f8": (loads(arch, 2) + body, [10, 11, 12])})
                    out = emutest.run_asm(arch, co, "f8", 3, inp=inputs(arch, vals[:wave], vals2[:wave]))
                    b0 = np.array([encode_nearest(table, v) for v in vals[:wave]])
                    b1 = np.array([encode_nearest(table, v) for v in vals2[:wave]])
                    np.testing.assert_array_equal(out[0] & 0xFFFF, b0 | b1 << 8)
                    np.testing.assert_array_equal(out[2].view(np.float32), table[b0].astype(np.float32))
                    np.testing.assert_array_equal(out[1].view(np.float32), table[b1].astype(np.float32))

    def test_fp8_pack_into_the_high_word(self):
        # The destination's op_sel bit is printed after the two sources' (op_sel:[0,0,1]): the
        # pair goes to the high word, and the low word is kept.
        vals = f32([1.0, -2.0, 0.5, 0.3, 3.0, -0.0078125, 12.0, 0.0] * 8)
        vals2 = f32([-1.5, 100.0, 0.25, -7.0, 0.1, 2.5, -0.75, 224.0] * 8)
        body = """
  v_mov_b32 v10, 0x5a5a1234
  v_cvt_pk_fp8_f32 v10, v1, v2 op_sel:[0,0,1]
  v_mov_b32 v11, 0x5a5a1234
  v_cvt_pk_bf8_f32 v11, v2, v1 op_sel:[0,0,1]
"""
        for arch, fnuz in (("gfx942", True), ("gfx950", False), ("gfx1201", False)):
            with self.subTest(arch=arch):
                wave = asm.WAVE[arch]
                a, b = vals[:wave], vals2[:wave]
                co = asm.assemble(arch, {"hi": (loads(arch, 2) + body, [10, 11])})
                out = emutest.run_asm(arch, co, "hi", 2, inp=inputs(arch, a, b))
                for row, kind, x, y in ((0, "fp8", a, b), (1, "bf8", b, a)):
                    table = fp8_table(kind, fnuz)
                    pair = np.array([encode_nearest(table, v) | encode_nearest(table, w) << 8 for v, w in zip(x, y)])
                    np.testing.assert_array_equal(out[row], 0x1234 | pair.astype(np.uint32) << 16, err_msg=kind)

    def test_gfx942_forms(self):
        h = RNG.uniform(-4, 4, 128).astype(np.float16).view(np.uint32)
        body = """
  v_add_u32 v10, v1, v2
  v_add_co_u32 v11, vcc, v1, v2
  v_addc_co_u32 v12, vcc, 0, 0, vcc
  v_cvt_f32_f16_sdwa v13, v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1
  v_mov_b32 v20, v1
  v_mov_b32 v21, v2
  v_lshl_add_u64 v[14:15], v[20:21], 2, v[20:21]
  v_mov_b32 v16, 0
  v_dot2c_f32_f16 v16, v3, v3
  v_pk_fma_f32 v[22:23], v[20:21], v[20:21], v[20:21]
  v_mov_b32 v17, v22
  v_mov_b32 v18, v23
"""
        u1 = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
        u2 = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
        a, b = u1.astype(np.uint64), u2.astype(np.uint64)
        s = a + b
        hh = h.view(np.float16)
        lo, hi = hh[0::2].astype(np.float64), hh[1::2].astype(np.float64)
        x64 = a | b << 32
        l64 = (x64 * 5) & 0xFFFFFFFFFFFFFFFF
        fa, fb = u1.view(np.float32).astype(np.float64), u2.view(np.float32).astype(np.float64)
        with np.errstate(all="ignore"):
            pk = [(fa * fa + fa).astype(np.float32).view(np.uint32), (fb * fb + fb).astype(np.float32).view(np.uint32)]
        exp = [s & 0xFFFFFFFF, s & 0xFFFFFFFF, s >> 32, hi.astype(np.float32).view(np.uint32),
               l64 & 0xFFFFFFFF, l64 >> 32, (lo * lo + hi * hi).astype(np.float32).view(np.uint32)] + pk
        co = asm.assemble("gfx942", {"g9": (loads("gfx942", 3) + body, list(range(10, 19)))})
        out = emutest.run_asm("gfx942", co, "g9", 9, inp=inputs("gfx942", u1, u2, h))
        for i, e in enumerate(exp):
            if i in (7, 8):
                ok = (out[i] == np.asarray(e, np.uint32)) | np.isnan(out[i].view(np.float32))
                self.assertTrue(ok.all(), "v%d" % (10 + i))
            else:
                np.testing.assert_array_equal(out[i], np.asarray(e, np.uint64).astype(np.uint32), err_msg="v%d" % (10 + i))


if __name__ == "__main__":
    emutest.main()
