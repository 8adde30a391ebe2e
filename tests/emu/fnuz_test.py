"""Known answers from torch's FNUZ dtypes (float8_e4m3fnuz, float8_e5m2fnuz) for gfx942's fp8
instructions, whose fp8 and bf8 are these formats: every one of the 256 bytes decoded by
v_cvt_pk_f32_fp8 / bf8 as torch reads it; v_cvt_pk_fp8_f32 / bf8_f32 encoding edge values (the
largest, 240 and 57344, the ties past them, infinities, NaN, -0, every tie between neighbours) as
torch's .to() does: overflow is the NaN, 0x80, not saturation (the assembler takes no clamp bit
on these for gfx942; hk's conversions saturate in software, tests/semantics/fnuz_test.py); v_mfma_f32_16x16x32_fp8_fp8 / bf8_bf8 on
random bytes (NaN aside) against the float64 product of torch's values."""

import math

import numpy as np
import torch

from tests.emu import asm, emutest

ARCH = "gfx942"
WAVE = 64
FORMATS = {"fp8": (torch.float8_e4m3fnuz, 240.0), "bf8": (torch.float8_e5m2fnuz, 57344.0)}
RNG = np.random.default_rng(23)


def value_of(codes, torch_dtype):
    """torch's reading of bytes, as float64."""
    return torch.from_numpy(np.asarray(codes, np.uint8).copy()).view(torch_dtype).double().numpy()


def same_bits(got, want):
    """float32 bitwise equality, every NaN equal to every NaN."""
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    nan = np.isnan(got) & np.isnan(want)
    return bool((nan | (got.view(np.uint32) == want.view(np.uint32))).all())


class FnuzTest(emutest.EmuTest):

    def test_every_byte_decodes_as_torch_reads_it(self):
        # Lane l holds bytes 4l..4l+3: the low pair converted as it is, the high pair shifted down.
        words = np.arange(256, dtype=np.uint32).reshape(WAVE, 4)
        word = words[:, 0] | words[:, 1] << 8 | words[:, 2] << 16 | words[:, 3] << 24
        for kind, (torch_dtype, _) in FORMATS.items():
            with self.subTest(kind=kind):
                body = """
  v_lshrrev_b32 v2, 16, v1
  v_cvt_pk_f32_%s v[10:11], v1
  v_cvt_pk_f32_%s v[12:13], v2
""" % (kind, kind)
                co = asm.assemble(ARCH, {"dec": (emutest.loads(ARCH, 1) + body, [10, 11, 12, 13])})
                out = emutest.run_asm(ARCH, co, "dec", 4, inp=emutest.inputs(ARCH, word)).view(np.float32)
                got = out.T.reshape(256)  # lane-major: byte 4l + i is result i of lane l
                want = value_of(np.arange(256), torch_dtype).astype(np.float32)
                self.assertTrue(same_bits(got, want), "%s:\n%s\n%s" % (kind, got, want))
                self.assertEqual(int(np.isnan(got).sum()), 1)
                self.assertTrue(np.isnan(got[0x80]))
                self.assertFalse(np.signbit(got[got == 0]).any())  # no -0

    def edges(self, torch_dtype, top):
        finite = np.sort(value_of(np.arange(128), torch_dtype))
        step = top - finite[-2]
        ties = (finite[:-1] + finite[1:]) / 2
        special = [0.0, -0.0, math.inf, -math.inf, math.nan, top, -top, top + step / 2, -(top + step / 2),
                   np.nextafter(np.float32(top + step / 2), np.float32(0)), top + step, 1e20, -3.4e38,
                   -1e-9, finite[1] / 2, -finite[1] / 2, finite[1], -finite[1], 0.75 * finite[1]]
        values = np.concatenate([special, ties, -ties, RNG.uniform(-1.2 * top, 1.2 * top, 64)])
        values = values.astype(np.float32)
        return np.concatenate([values, np.zeros(-len(values) % (2 * WAVE), np.float32)])

    def test_edges_encode_as_torch(self):
        for kind, (torch_dtype, top) in FORMATS.items():
            values = self.edges(torch_dtype, top)
            with self.subTest(kind=kind):
                body = "  v_mov_b32 v10, 0\n  v_cvt_pk_%s_f32 v10, v1, v2\n" % kind
                co = asm.assemble(ARCH, {"enc": (emutest.loads(ARCH, 2) + body, [10])})
                got = []
                for chunk in values.reshape(-1, 2, WAVE):
                    out = emutest.run_asm(ARCH, co, "enc", 1, inp=emutest.inputs(ARCH, chunk[0], chunk[1]))[0]
                    got.append(np.stack([out & 0xFF, (out >> 8) & 0xFF]).reshape(-1))
                got = np.concatenate(got)  # the order of `values`
                want = torch.from_numpy(values).to(torch_dtype).view(torch.uint8).numpy()
                np.testing.assert_array_equal(got, want, err_msg=kind)
                # The edges by name: the largest and the tie past it, the one NaN, no -0.
                self.assertEqual(list(got[:11]), [0, 0, 0x80, 0x80, 0x80, 0x7F, 0xFF, 0x80, 0x80, 0x7F, 0x80])
                self.assertEqual(list(got[13:16]), [0, 0, 0])

    def test_mfma_reads_fnuz(self):
        # v_mfma_f32_16x16x32_{fp8_fp8,bf8_bf8}: lane = row + 16 * (k / 8), 8 bytes per lane
        # (two registers), element k % 8; D is 16 x 16 in four registers, row 4 * (lane / 16) + r.
        for kind, (torch_dtype, _) in FORMATS.items():
            with self.subTest(kind=kind):
                a = RNG.integers(0, 256, (16, 32), dtype=np.uint8)
                b = RNG.integers(0, 256, (32, 16), dtype=np.uint8)
                a[a == 0x80], b[b == 0x80] = 0, 0  # the NaN
                c = RNG.uniform(-2, 2, (16, 16)).astype(np.float32)

                def regs(rows_of_lane):
                    lo, hi = np.zeros(WAVE, np.uint32), np.zeros(WAVE, np.uint32)
                    for lane in range(WAVE):
                        v = rows_of_lane(lane % 16, 8 * (lane // 16)).astype(np.uint32)
                        lo[lane] = v[0] | v[1] << 8 | v[2] << 16 | v[3] << 24
                        hi[lane] = v[4] | v[5] << 8 | v[6] << 16 | v[7] << 24
                    return lo, hi
                a0, a1 = regs(lambda i, k: a[i, k:k + 8])
                b0, b1 = regs(lambda j, k: b[k:k + 8, j])
                cregs = [np.array([c[4 * (lane // 16) + r, lane % 16] for lane in range(WAVE)], np.float32)
                         for r in range(4)]
                # Register tuples start at even registers on gfx942: move v1..v8 to v20..v27.
                body = "".join("  v_mov_b32 v%d, v%d\n" % (20 + i, 1 + i) for i in range(8))
                body += ("  v_mfma_f32_16x16x32_%s_%s v[10:13], v[20:21], v[22:23], v[24:27]\n  s_nop 7\n  s_nop 7\n"
                         % (kind, kind))
                co = asm.assemble(ARCH, {"mm": (emutest.loads(ARCH, 8) + body, [10, 11, 12, 13])})
                out = emutest.run_asm(ARCH, co, "mm", 4, inp=emutest.inputs(ARCH, a0, a1, b0, b1, *cregs))
                d = np.zeros((16, 16))
                for r in range(4):
                    for lane in range(WAVE):
                        d[4 * (lane // 16) + r, lane % 16] = out[r][lane].view(np.float32)
                want = value_of(a, torch_dtype) @ value_of(b, torch_dtype) + c
                np.testing.assert_allclose(d, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
                # The same bytes read as OCP (bias one smaller) are about twice as large.
                ocp = {"fp8": torch.float8_e4m3fn, "bf8": torch.float8_e5m2}[kind]
                wrong = np.nan_to_num(value_of(a, ocp)) @ np.nan_to_num(value_of(b, ocp)) + c
                self.assertFalse(np.allclose(d, wrong, rtol=1e-3))


if __name__ == "__main__":
    emutest.main()
