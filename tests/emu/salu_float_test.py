"""gfx12's scalar float instructions against numpy: every f32 and f16 comparison (the ordered
ones false and the n* ones true when an operand is NaN), the arithmetic, fma forms, min/max
families, conversions and roundings, over operands that include zeros of both signs,
infinities, NaN, denormals and rounding ties.

Each kernel walks 32 operand triples (a, b, c) of `inp` with a scalar loop, runs the instruction
on SGPRs and writes the result into lane i of v1, so one launch checks 32 cases."""

import numpy as np

from tests.emu import asm, emutest

LOOP = """
  s_mov_b32 s20, 0
.L%(name)s:
  s_lshl_b32 s21, s20, 4
  s_load_b128 s[12:15], s[6:7], s21 offset:0x0
  s_wait_kmcnt 0x0
%(op)s
  v_writelane_b32 v1, s16, s20
  s_add_co_i32 s20, s20, 1
  s_cmp_lt_u32 s20, 32
  s_cbranch_scc1 .L%(name)s
"""

CMP = ["lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt"]


def _cmp_ref(c, a, b):
    un = np.isnan(a) | np.isnan(b)
    with np.errstate(invalid="ignore"):
        return {"lt": a < b, "eq": a == b, "le": a <= b, "gt": a > b, "lg": (a < b) | (a > b),
                "ge": a >= b, "o": ~un, "u": un, "nge": ~(a >= b), "nlg": ~((a < b) | (a > b)),
                "ngt": ~(a > b), "nle": ~(a <= b), "neq": ~(a == b), "nlt": ~(a < b)}[c]


def _rtz16(x):
    """f32 -> f16 rounding toward zero, from the f16 grid itself."""
    out = np.empty(len(x), np.float16)
    for i, v in enumerate(x.astype(np.float64)):
        if np.isnan(v) or np.isinf(v):
            out[i] = v
            continue
        e = max(int(np.floor(np.log2(abs(v)))) if v else -14, -14)
        q = 2.0 ** (e - 10)
        out[i] = np.copysign(min(np.trunc(abs(v) / q) * q, 65504.0), v)
    return out


F32 = np.array([0.0, -0.0, 1.0, -1.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 1e-45, -3e-39, 3.0,
                0.1, 1e30, -7.25, 2.5, 0.5, -0.5, 3.5, -1e-40, 2.0 ** 31, -2.0 ** 31, 5e9, 123.456,
                -0.75, 1e-38, 2.0 ** 24 + 2, 1.0e-7, -1e30, 65520.0, 7.0, -3.0], np.float32)
F16 = np.array([0.0, -0.0, 1.0, -1.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 6e-8, -3e-5, 3.0,
                0.1, 60000.0, -7.25, 2.5, 0.5, -0.5, 3.5, -1e-6, 1024.0, -2048.0, 0.333, 123.44,
                -0.75, 6.1e-5, 2049.0, 1e-3, -60000.0, 65504.0, 7.0, -3.0], np.float16)


def _triples(a, b, c):
    inp = np.zeros(1024, np.uint32)
    inp[0:128:4], inp[1:128:4], inp[2:128:4] = a, b, c
    return inp


def _same(got, want, nbits):
    """Equal bit patterns, or both NaN."""
    if nbits == 16:
        g, w = got.astype(np.uint16).view(np.float16), want.astype(np.float16)
        return np.isnan(g) & np.isnan(w) | (got.astype(np.uint16) == w.view(np.uint16))
    g, w = got.view(np.float32), want.astype(np.float32)
    return np.isnan(g) & np.isnan(w) | (got == w.view(np.uint32))


class SaluFloatTest(emutest.EmuTest):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        a32, b32, c32 = F32, np.roll(F32, 7), np.roll(F32, 13)
        a16, b16, c16 = F16, np.roll(F16, 7), np.roll(F16, 13)
        # Garbage in the high halves of f16 operands: the instructions read the low half only.
        noise = (np.arange(32, dtype=np.uint32) * 0x9e37) << 16
        h = lambda x: x.view(np.uint16).astype(np.uint32) | noise
        cls.cases = {}            # name -> (op text, inp, expected, bits compared)
        with np.errstate(all="ignore"):
            for c in CMP:
                cls._case("cmp_%s_f32" % c, "  s_cmp_%s_f32 s12, s13\n  s_cselect_b32 s16, 1, 0" % c,
                          _triples(a32.view(np.uint32), b32.view(np.uint32), 0), _cmp_ref(c, a32, b32), 32)
                cls._case("cmp_%s_f16" % c, "  s_cmp_%s_f16 s12, s13\n  s_cselect_b32 s16, 1, 0" % c,
                          _triples(h(a16), h(b16), 0), _cmp_ref(c, a16, b16), 32)
            nz = ~((a32 == 0) & (b32 == 0))        # max/min of +0 and -0: either zero
            nz16 = ~((a16 == 0) & (b16 == 0))
            arith32 = {"add": a32 + b32, "sub": a32 - b32, "mul": a32 * b32,
                       "max_num": np.where(nz, np.fmax(a32, b32), 0), "min_num": np.where(nz, np.fmin(a32, b32), 0),
                       "maximum": np.where(nz, np.maximum(a32, b32), 0),
                       "minimum": np.where(nz, np.minimum(a32, b32), 0)}
            arith16 = {"add": a16 + b16, "sub": a16 - b16, "mul": a16 * b16,
                       "max_num": np.where(nz16, np.fmax(a16, b16), 0), "min_num": np.where(nz16, np.fmin(a16, b16), 0),
                       "maximum": np.where(nz16, np.maximum(a16, b16), 0),
                       "minimum": np.where(nz16, np.minimum(a16, b16), 0)}
            for op, want in arith32.items():
                cls._case("%s_f32" % op, "  s_%s_f32 s16, s12, s13" % op,
                          _triples(a32.view(np.uint32), b32.view(np.uint32), 0), want, 32,
                          nz if op.startswith(("max", "min")) else None)
            for op, want in arith16.items():
                cls._case("%s_f16" % op, "  s_%s_f16 s16, s12, s13" % op, _triples(h(a16), h(b16), 0),
                          want, 16, nz16 if op.startswith(("max", "min")) else None)
            # fma forms: the products and sums of these operands are exact in float64, so the
            # float64 result rounds once to the answer.
            fa, fb_, fc = (np.array(v, np.float32) for v in (
                np.linspace(-3, 5, 32), np.linspace(7, -2, 32) * 1.25, np.linspace(-1, 1, 32) ** 3))
            fma = lambda x, y, z: (x.astype(np.float64) * y + z).astype(np.float32)
            t = _triples(fa.view(np.uint32), fb_.view(np.uint32), fc.view(np.uint32))
            cls._case("fmac_f32", "  s_mov_b32 s16, s14\n  s_fmac_f32 s16, s12, s13", t, fma(fa, fb_, fc), 32)
            cls._case("fmaak_f32", "  s_fmaak_f32 s16, s12, s13, 0x3fc00000", t, fma(fa, fb_, np.float32(1.5)), 32)
            cls._case("fmamk_f32", "  s_fmamk_f32 s16, s12, 0x3fc00000, s13", t, fma(fa, np.float32(1.5), fb_), 32)
            ha, hb, hc = fa.astype(np.float16), fb_.astype(np.float16), fc.astype(np.float16)
            cls._case("fmac_f16", "  s_mov_b32 s16, s14\n  s_fmac_f16 s16, s12, s13", _triples(h(ha), h(hb), h(hc)),
                      (ha.astype(np.float64) * hb + hc).astype(np.float16), 16)
            # conversions and roundings
            t32 = _triples(a32.view(np.uint32), b32.view(np.uint32), 0)
            ints = np.array([0, 1, -1, 7, -3, 2 ** 31 - 1, -2 ** 31, 16777217, -16777219, 123456789] * 4,
                            np.int64)[:32]
            trunc = np.trunc(a32.astype(np.float64))
            cls._case("cvt_f32_i32", "  s_cvt_f32_i32 s16, s12", _triples(ints.astype(np.uint32), 0, 0),
                      ints.astype(np.float32), 32)
            cls._case("cvt_f32_u32", "  s_cvt_f32_u32 s16, s12", _triples(ints.astype(np.uint32), 0, 0),
                      ints.astype(np.uint32).astype(np.float32), 32)
            cls._case("cvt_i32_f32", "  s_cvt_i32_f32 s16, s12", t32,
                      np.where(np.isnan(trunc), 0, np.clip(trunc, -2.0 ** 31, 2.0 ** 31 - 1)).astype(np.int64)
                      .astype(np.uint32), "int")
            cls._case("cvt_u32_f32", "  s_cvt_u32_f32 s16, s12", t32,
                      np.where(np.isnan(trunc), 0, np.clip(trunc, 0, 2.0 ** 32 - 1)).astype(np.uint32), "int")
            cls._case("cvt_f16_f32", "  s_cvt_f16_f32 s16, s12", t32, a32.astype(np.float16), 16)
            cls._case("cvt_f32_f16", "  s_cvt_f32_f16 s16, s12", _triples(h(a16), 0, 0), a16.astype(np.float32), 32)
            hi = (a16.view(np.uint16).astype(np.uint32) << 16) | 0x3c00
            cls._case("cvt_hi_f32_f16", "  s_cvt_hi_f32_f16 s16, s12", _triples(hi, 0, 0), a16.astype(np.float32), 32)
            cls._case("cvt_pk_rtz_f16_f32", "  s_cvt_pk_rtz_f16_f32 s16, s12, s13", t32,
                      _rtz16(a32).view(np.uint16).astype(np.uint32) | _rtz16(b32).view(np.uint16).astype(np.uint32) << 16,
                      "int")
            for op, fn in (("ceil", np.ceil), ("floor", np.floor), ("trunc", np.trunc), ("rndne", np.rint)):
                cls._case("%s_f32" % op, "  s_%s_f32 s16, s12" % op, t32, fn(a32), 32)
                cls._case("%s_f16" % op, "  s_%s_f16 s16, s12" % op, _triples(h(a16), 0, 0), fn(a16), 16)
        kernels = {name: (LOOP % {"name": name, "op": op}, [1]) for name, (op, _, _, _, _) in cls.cases.items()}
        cls.co = asm.assemble("gfx1201", kernels)

    @classmethod
    def _case(cls, name, op, inp, want, bits, only=None):
        cls.cases[name] = (op, inp, np.asarray(want), bits, only)

    def test_every_instruction_against_numpy(self):
        for name, (_, inp, want, bits, only) in self.cases.items():
            with self.subTest(name):
                got = emutest.run_asm("gfx1201", self.co, name, 1, inp=inp)[0]
                if want.dtype == bool:
                    ok = got == want.astype(np.uint32)
                elif bits == "int":
                    ok = got == want.astype(np.uint32)
                else:
                    ok = _same(got & 0xffff if bits == 16 else got, want, bits)
                if only is not None:
                    ok = ok | ~only
                bad = np.flatnonzero(~ok)
                self.assertEqual(len(bad), 0, "%s: lanes %s got %s, want %s (inputs %s)" % (
                    name, bad[:4], [hex(int(x)) for x in got[bad[:4]]], want[bad[:4]],
                    [hex(int(x)) for x in inp[4 * bad[:4]]]))

    def test_compares_cover_unordered_operands(self):
        # The table above has NaN against numbers on both sides: each n* form must have been
        # true there and each ordered form false.
        nan_lanes = np.isnan(F32) | np.isnan(np.roll(F32, 7))
        self.assertGreaterEqual(int(nan_lanes.sum()), 2)
        for c in CMP:
            want = c.startswith("n") or c == "u"
            self.assertTrue((_cmp_ref(c, F32, np.roll(F32, 7))[nan_lanes] == want).all(), c)


if __name__ == "__main__":
    emutest.main()
