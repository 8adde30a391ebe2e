"""Known answers for the 16-bit integer VALU of gfx11 and gfx12, which clang selects for 16-bit
integer arithmetic (`v_add_nc_i16 ... clamp` is llvm.sadd.sat.i16): add and subtract, signed and
unsigned, wrapping and (with clamp) saturating; mul_lo, the shifts, max/min, the bitwise ops,
mad, max3/min3/med3; the mads with a 32-bit addend, v_sad_u16, v_sat_pk_u8_i16 and v_swap_b16;
the packed forms with clamp and op_sel; and the 32-bit v_add_nc_i32, v_sub_nc_i32 and v_sad_u32
with clamp.

Each 16-bit instruction runs with each source taken from the low and from the high half of its
register and its result written to either half of a register whose other half must be kept, on
gfx1100 and gfx1201 (in true16 form, vN.l / vN.h, which llvm-mc encodes as op_sel). The inputs
hold each type's edges, so sums and products overflow both ways: every instruction that takes
clamp is checked to saturate where it would otherwise wrap.
"""

import numpy as np

from tests.emu import asm, emutest
from tests.emu.emutest import inputs, loads

RNG = np.random.default_rng(16)
ARCHS = ("gfx1100", "gfx1201")
EDGES16 = [0, 1, 2, 15, 16, 17, 0x00FF, 0x4000, 0x7FFE, 0x7FFF, 0x8000, 0x8001, 0xC000, 0xFFFE, 0xFFFF, 0x1234]
EDGES32 = [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFE0001, 0x7FFF0000, 0x80010000]


def s16(x):
    return x - 0x10000 if x & 0x8000 else x


def s32(x):
    return x - 0x100000000 if x & 0x80000000 else x


# name: (sources, result type, exact result of the 16-bit sources as unsigned ints, takes clamp)
OPS16 = {
    "v_add_nc_u16": (2, "u16", lambda a, b, c: a + b, True),
    "v_sub_nc_u16": (2, "u16", lambda a, b, c: a - b, True),
    "v_add_nc_i16": (2, "i16", lambda a, b, c: s16(a) + s16(b), True),
    "v_sub_nc_i16": (2, "i16", lambda a, b, c: s16(a) - s16(b), True),
    "v_mul_lo_u16": (2, "u16", lambda a, b, c: a * b, False),
    "v_lshlrev_b16": (2, "u16", lambda a, b, c: b << (a & 15), False),
    "v_lshrrev_b16": (2, "u16", lambda a, b, c: b >> (a & 15), False),
    "v_ashrrev_i16": (2, "i16", lambda a, b, c: s16(b) >> (a & 15), False),
    "v_max_u16": (2, "u16", lambda a, b, c: max(a, b), False),
    "v_min_u16": (2, "u16", lambda a, b, c: min(a, b), False),
    "v_max_i16": (2, "i16", lambda a, b, c: max(s16(a), s16(b)), False),
    "v_min_i16": (2, "i16", lambda a, b, c: min(s16(a), s16(b)), False),
    "v_and_b16": (2, "u16", lambda a, b, c: a & b, False),
    "v_or_b16": (2, "u16", lambda a, b, c: a | b, False),
    "v_xor_b16": (2, "u16", lambda a, b, c: a ^ b, False),
    "v_mad_u16": (3, "u16", lambda a, b, c: a * b + c, True),
    "v_mad_i16": (3, "i16", lambda a, b, c: s16(a) * s16(b) + s16(c), True),
    "v_max3_u16": (3, "u16", lambda a, b, c: max(a, b, c), False),
    "v_min3_u16": (3, "u16", lambda a, b, c: min(a, b, c), False),
    "v_med3_u16": (3, "u16", lambda a, b, c: sorted([a, b, c])[1], False),
    "v_max3_i16": (3, "i16", lambda a, b, c: max(s16(a), s16(b), s16(c)), False),
    "v_min3_i16": (3, "i16", lambda a, b, c: min(s16(a), s16(b), s16(c)), False),
    "v_med3_i16": (3, "i16", lambda a, b, c: sorted([s16(a), s16(b), s16(c)])[1], False),
}
RANGE = {"u16": (0, 0xFFFF), "i16": (-0x8000, 0x7FFF), "u32": (0, 0xFFFFFFFF), "i32": (-2**31, 2**31 - 1)}
BITS = {"u16": 0xFFFF, "i16": 0xFFFF, "u32": 0xFFFFFFFF, "i32": 0xFFFFFFFF}


def result(exact, kind, clamp):
    """The result bits of the exact results of type `kind`: wrapped, or saturated under clamp."""
    lo, hi = RANGE[kind]
    return np.array([(min(max(x, lo), hi) if clamp else x) & BITS[kind] for x in exact], np.uint64)


def words(n):
    """n 32-bit words whose halves are mostly 16-bit edges."""
    h = np.where(RNG.random(2 * n) < 0.75, RNG.choice(EDGES16, 2 * n), RNG.integers(0, 1 << 16, 2 * n))
    return (h[0::2] | h[1::2] << 16).astype(np.uint32)


def half(w, hi):
    return [int(x) >> 16 if hi else int(x) & 0xFFFF for x in w]


def variants(ns, clamp):
    """(source halves, destination half, clamp): each source from the low and from the high half,
    the result into either half, with and (where the instruction takes it) without clamp."""
    sels = [(0,) * ns] + [tuple(int(i == k) for i in range(ns)) for k in range(ns)] + [(1,) * ns]
    out = [(sel, k % 2) for k, sel in enumerate(sels)] + [(sels[0], 1)]
    return [(sel, dst, c) for sel, dst in out for c in ((False, True) if clamp else (False,))]


class Int16Test(emutest.EmuTest):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.src = [words(32) for _ in range(3)]          # v1, v2, v3: the 16-bit sources
        cls.keep = RNG.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)   # v4
        # v5, v6: 32-bit edges, paired so that their sums and differences overflow both ways
        lane = np.arange(32)
        cls.wide = [np.array(EDGES32, np.uint32)[lane % 8], np.array(EDGES32, np.uint32)[(lane + lane // 8) % 8]]
        cls.inp = {arch: inputs(arch, *cls.src, cls.keep, *cls.wide) for arch in ARCHS}

    def run_bodies(self, arch, bodies):
        """{name: out[result][lane]} for {name: (body, n)}: snippets leaving n results in v10... ."""
        kernels = {k: (loads(arch, 6) + body, list(range(10, 10 + n))) for k, (body, n) in bodies.items()}
        co = asm.assemble(arch, kernels, mattr="+real-true16")
        return {k: emutest.run_asm(arch, co, k, n, inp=self.inp[arch]) for k, (_, n) in bodies.items()}

    def run_body(self, arch, body, n):
        return self.run_bodies(arch, {"k": (body, n)})["k"]

    def test_vop3_halves_destination_and_clamp(self):
        bodies, cases = {}, {}
        for name, (ns, kind, fn, takes_clamp) in OPS16.items():
            cases[name] = variants(ns, takes_clamp)
            body = ""
            for k, (sel, dst, clamp) in enumerate(cases[name]):
                srcs = ", ".join("v%d.%s" % (i + 1, "lh"[s]) for i, s in enumerate(sel))
                body += "  v_mov_b32 v%d, v4\n  %s v%d.%s, %s%s\n" % (
                    10 + k, name, 10 + k, "lh"[dst], srcs, " clamp" if clamp else "")
            bodies[name] = (body, len(cases[name]))
        keep = self.keep.astype(np.uint64)
        for arch in ARCHS:
            outs = self.run_bodies(arch, bodies)
            for name, (ns, kind, fn, takes_clamp) in OPS16.items():
                seen = []
                for k, (sel, dst, clamp) in enumerate(cases[name]):
                    args = [half(self.src[i], sel[i]) for i in range(ns)] + [[0] * 32] * (3 - ns)
                    exact = [fn(*x) for x in zip(*args)]
                    seen += exact
                    r = result(exact, kind, clamp)
                    want = (keep & 0xFFFF) | r << 16 if dst else (keep & 0xFFFF0000) | r
                    what = "%s on %s" % (bodies[name][0].splitlines()[2 * k + 1].strip(), arch)
                    np.testing.assert_array_equal(outs[name][k], want.astype(np.uint32), err_msg=what)
                    if clamp:                    # the inputs make clamp matter
                        self.assertFalse(np.array_equal(r, result(exact, kind, False)), what + ": nothing saturates")
                if kind == "i16" and takes_clamp:
                    self.assertTrue(max(seen) > 0x7FFF and min(seen) < -0x8000, name + ": overflows one way only")

    def test_constants_as_16_bit_sources(self):
        # An inline constant is its 16-bit value (-16 is 0xfff0); a literal its low 16 bits.
        body = """
  v_mov_b32 v10, v4
  v_add_nc_i16 v10.l, v1.h, -16 clamp
  v_mov_b32 v11, v4
  v_sub_nc_u16 v11.h, 0x1234, v2.l clamp
  v_mov_b32 v12, v4
  v_mad_u16 v12.l, v1.l, 64, v3.h
"""
        a, b, c = half(self.src[0], 1), half(self.src[1], 0), half(self.src[2], 1)
        keep = self.keep.astype(np.uint64)
        for arch in ARCHS:
            out = self.run_body(arch, body, 3)
            np.testing.assert_array_equal(out[0], keep & 0xFFFF0000 | result([s16(x) - 16 for x in a], "i16", True))
            np.testing.assert_array_equal(out[1], keep & 0xFFFF | result([0x1234 - x for x in b], "u16", True) << 16)
            np.testing.assert_array_equal(out[2], keep & 0xFFFF0000 | result(
                [x * 64 + y for x, y in zip(half(self.src[0], 0), c)], "u16", False))

    def test_32_bit_results(self):
        body = """
  v_mad_u32_u16 v10, v1.h, v2.l, v5
  v_mad_u32_u16 v11, v1.l, v2.h, v5 clamp
  v_mad_i32_i16 v12, v1.h, v2.h, v6
  v_mad_i32_i16 v13, v1.l, v2.l, v6 clamp
  v_sad_u16 v14, v1, v2, v5
  v_sad_u16 v15, v1, v2, v5 clamp
  v_sad_u32 v16, v5, v1, v6
  v_sad_u32 v17, v5, v1, v6 clamp
  v_add_nc_i32 v18, v5, v6
  v_add_nc_i32 v19, v5, v6 clamp
  v_sub_nc_i32 v20, v5, v6
  v_sub_nc_i32 v21, v6, v5 clamp
"""
        a, b = self.src[0].tolist(), self.src[1].tolist()
        c, d = self.wide[0].tolist(), self.wide[1].tolist()
        sad16 = [(x & 0xFFFF) - (y & 0xFFFF) for x, y in zip(a, b)]
        sad16 = [abs(p) + abs((x >> 16) - (y >> 16)) + z for p, x, y, z in zip(sad16, a, b, c)]
        sad32 = [abs(x - y) + z for x, y, z in zip(c, a, d)]
        cases = [
            ("u32", False, [(x >> 16) * (y & 0xFFFF) + z for x, y, z in zip(a, b, c)]),
            ("u32", True, [(x & 0xFFFF) * (y >> 16) + z for x, y, z in zip(a, b, c)]),
            ("i32", False, [s16(x >> 16) * s16(y >> 16) + s32(z) for x, y, z in zip(a, b, d)]),
            ("i32", True, [s16(x & 0xFFFF) * s16(y & 0xFFFF) + s32(z) for x, y, z in zip(a, b, d)]),
            ("u32", False, sad16), ("u32", True, sad16), ("u32", False, sad32), ("u32", True, sad32),
            ("i32", False, [s32(x) + s32(y) for x, y in zip(c, d)]),
            ("i32", True, [s32(x) + s32(y) for x, y in zip(c, d)]),
            ("i32", False, [s32(x) - s32(y) for x, y in zip(c, d)]),
            ("i32", True, [s32(y) - s32(x) for x, y in zip(c, d)]),
        ]
        for arch in ARCHS:
            out = self.run_body(arch, body, len(cases))
            for k, (kind, clamp, exact) in enumerate(cases):
                what = "%s on %s" % (body.splitlines()[k + 1].strip(), arch)
                np.testing.assert_array_equal(out[k], result(exact, kind, clamp).astype(np.uint32), err_msg=what)
                if clamp:
                    self.assertFalse(np.array_equal(out[k], result(exact, kind, False)), what + ": nothing saturates")

    def test_saturating_byte_pack_and_half_swap(self):
        body = """
  v_mov_b32 v10, v4
  v_sat_pk_u8_i16 v10.h, v1
  v_mov_b32 v11, v4
  v_sat_pk_u8_i16 v11.l, v2
"""
        sat8 = lambda w, hi: np.clip([s16(x) for x in half(w, hi)], 0, 255).astype(np.uint64)
        packed = [sat8(w, 0) | sat8(w, 1) << 8 for w in self.src[:2]]
        keep = self.keep.astype(np.uint64)
        for arch in ARCHS:
            out = self.run_body(arch, body, 2)
            np.testing.assert_array_equal(out[0], keep & 0xFFFF | packed[0] << 16)
            np.testing.assert_array_equal(out[1], keep & 0xFFFF0000 | packed[1])
        # gfx11 only (gfx12 has no v_swap_b16): each register keeps its other half.
        out = self.run_body("gfx1100", "  v_mov_b32 v10, v1\n  v_mov_b32 v11, v2\n  v_swap_b16 v10.h, v11.l\n", 2)
        a, b = self.src[0].astype(np.uint64), self.src[1].astype(np.uint64)
        np.testing.assert_array_equal(out[0], a & 0xFFFF | (b & 0xFFFF) << 16)
        np.testing.assert_array_equal(out[1], b & 0xFFFF0000 | a >> 16)

    def test_gfx9_spellings(self):
        # gfx942 and gfx950 name them v_add_i16, v_add_u16, v_subrev_u16, ... and print the
        # destination's op_sel after the sources' (op_sel:[s0,s1,dst]): a high result keeps the
        # low half. A low result's high half is not checked (gfx9 zeroes it for some opcodes).
        body = """
  v_mov_b32 v10, v4
  v_add_i16 v10, v1, v2 op_sel:[1,0,1] clamp
  v_mov_b32 v11, v4
  v_sub_i16 v11, v1, v2 op_sel:[0,1,1] clamp
  v_add_u16_e64 v12, v1, v2 clamp
  v_sub_u16_e64 v13, v1, v2 clamp
  v_subrev_u16 v14, v1, v2
  v_mov_b32 v15, v4
  v_mad_u16 v15, v1, v2, v3 op_sel:[1,0,1,1] clamp
  v_mad_i32_i16 v16, v1, v2, v6 op_sel:[1,1,0,0] clamp
"""
        a, b, c = self.src
        pair = lambda x, sel: [int(v) >> 16 if sel else int(v) & 0xFFFF for v in x]
        keep = self.keep.astype(np.uint64)
        high = lambda r: keep & 0xFFFF | r << 16
        want = [high(result([s16(x) + s16(y) for x, y in zip(pair(a, 1), pair(b, 0))], "i16", True)),
                high(result([s16(x) - s16(y) for x, y in zip(pair(a, 0), pair(b, 1))], "i16", True)),
                result([x + y for x, y in zip(pair(a, 0), pair(b, 0))], "u16", True),
                result([x - y for x, y in zip(pair(a, 0), pair(b, 0))], "u16", True),
                result([y - x for x, y in zip(pair(a, 0), pair(b, 0))], "u16", False),
                high(result([x * y + z for x, y, z in zip(pair(a, 1), pair(b, 0), pair(c, 1))], "u16", True)),
                result([s16(x) * s16(y) + s32(int(z)) for x, y, z in zip(pair(a, 1), pair(b, 1), self.wide[1])],
                       "i32", True)]
        ops = [line.strip() for line in body.splitlines() if line.strip() and "v_mov_b32" not in line]
        twice = [np.tile(x, 2) for x in self.src + [self.keep] + self.wide]   # a wave of 64
        for arch in ("gfx942", "gfx950"):
            co = asm.assemble(arch, {"k": (loads(arch, 6) + body, list(range(10, 17)))})
            out = emutest.run_asm(arch, co, "k", 7, inp=inputs(arch, *twice))
            for k, w in enumerate(want):
                whole = "op_sel:[" in ops[k] or "v_mad_i32" in ops[k]
                got = out[k][:32] if whole else out[k][:32] & 0xFFFF
                np.testing.assert_array_equal(got, w.astype(np.uint32), err_msg="%s on %s" % (ops[k], arch))
                np.testing.assert_array_equal(out[k][32:], out[k][:32], err_msg="lanes 32-63: " + ops[k])

    def test_packed_with_clamp_and_op_sel(self):
        # (instruction, sources, result type, exact result, op_sel, op_sel_hi, clamp)
        cases = [
            ("v_pk_add_u16", 2, "u16", lambda a, b, c: a + b, (0, 0, 0), (1, 1, 1), True),
            ("v_pk_add_u16", 2, "u16", lambda a, b, c: a + b, (1, 0, 0), (0, 1, 1), False),
            ("v_pk_sub_u16", 2, "u16", lambda a, b, c: a - b, (0, 1, 0), (1, 0, 1), True),
            ("v_pk_add_i16", 2, "i16", lambda a, b, c: s16(a) + s16(b), (0, 0, 0), (1, 1, 1), True),
            ("v_pk_sub_i16", 2, "i16", lambda a, b, c: s16(a) - s16(b), (1, 1, 0), (0, 0, 1), True),
            ("v_pk_sub_i16", 2, "i16", lambda a, b, c: s16(a) - s16(b), (0, 0, 0), (1, 1, 1), False),
            ("v_pk_mad_u16", 3, "u16", lambda a, b, c: a * b + c, (0, 0, 1), (1, 1, 0), True),
            ("v_pk_mad_i16", 3, "i16", lambda a, b, c: s16(a) * s16(b) + s16(c), (0, 0, 0), (1, 1, 1), True),
            ("v_pk_mad_i16", 3, "i16", lambda a, b, c: s16(a) * s16(b) + s16(c), (1, 0, 1), (0, 1, 1), False),
            ("v_pk_mul_lo_u16", 2, "u16", lambda a, b, c: a * b, (1, 0, 0), (1, 1, 1), False),
            ("v_pk_lshlrev_b16", 2, "u16", lambda a, b, c: b << (a & 15), (0, 0, 0), (1, 1, 1), False),
            ("v_pk_ashrrev_i16", 2, "i16", lambda a, b, c: s16(b) >> (a & 15), (0, 1, 0), (1, 0, 1), False),
            ("v_pk_max_i16", 2, "i16", lambda a, b, c: max(s16(a), s16(b)), (0, 0, 0), (1, 1, 1), False),
            ("v_pk_min_u16", 2, "u16", lambda a, b, c: min(a, b), (0, 0, 0), (1, 1, 1), False),
        ]
        body = ""
        for k, (name, ns, _, _, sel, selhi, clamp) in enumerate(cases):
            bits = lambda v: "[%s]" % ",".join(str(x) for x in v[:ns])
            body += "  %s v%d, %s op_sel:%s op_sel_hi:%s%s\n" % (
                name, 10 + k, ", ".join("v%d" % (i + 1) for i in range(ns)), bits(sel), bits(selhi),
                " clamp" if clamp else "")
        for arch in ARCHS:
            out = self.run_body(arch, body, len(cases))
            for k, (name, ns, kind, fn, sel, selhi, clamp) in enumerate(cases):
                want = np.zeros(32, np.uint64)
                for h, pick in enumerate((sel, selhi)):
                    args = [half(self.src[i], pick[i]) for i in range(ns)] + [[0] * 32] * (3 - ns)
                    exact = [fn(*x) for x in zip(*args)]
                    want |= result(exact, kind, clamp) << (16 * h)
                    if clamp:
                        self.assertFalse(np.array_equal(result(exact, kind, clamp), result(exact, kind, False)))
                what = "%s on %s" % (body.splitlines()[k].strip(), arch)
                np.testing.assert_array_equal(out[k], want.astype(np.uint32), err_msg=what)


if __name__ == "__main__":
    emutest.main()
