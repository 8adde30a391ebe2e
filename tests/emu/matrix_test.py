"""Known answers for the matrix instructions, with operands laid out in registers as the ISA
documents them: WMMA on gfx1100 (f16, bf16, f16 accumulator, signed int8) and gfx1201 (f16,
fp8), MFMA on gfx942 (16x16x16 f16 into AGPRs, 32x32x8 bf16, 16x16x4 f32, 16x16x32 i8) and gfx950
(16x16x32 bf16, 32x32x16 f16, 16x16x64 i8, 16x16x32 OCP fp8, and the f8f6f4 MFMAs with every
pairing of operand formats cbsz/blgp select, fp8/bf8 read by torch's float8 dtypes). Results are
compared with float64 products (accumulation order is the only difference)."""

import numpy as np
import torch

from tests.emu import asm, emutest

RNG = np.random.default_rng(11)


def loads(arch, first, count):
    op = "global_load_dword" if arch.startswith("gfx9") else "global_load_b32"
    w = asm.WAVE[arch]
    text = "  s_add_u32 s8, s6, 0x1000\n  s_addc_u32 s9, s7, 0\n"      # a second base past 4 KiB
    for i in range(count):
        off = (first - 20 + i) * w * 4
        text += "  %s v%d, v100, %s offset:%d\n" % (op, first + i, "s[6:7]" if off < 4096 else "s[8:9]", off % 4096)
    return text


def bf16_bits(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_val(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def e4m3_ocp(b):
    b = b.astype(np.int64)
    s, e, m = b >> 7, (b >> 3) & 15, b & 7
    v = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7))
    v = np.where((e == 15) & (m == 7), np.nan, v)
    return np.where(s == 1, -v, v)


def elements(regs, lane, count, bits):
    """Element e of a lane, packed little-endian across consecutive registers."""
    out = []
    for e in range(count):
        bit = e * bits
        word = regs[bit // 32][lane]
        out.append((int(word) >> (bit % 32)) & ((1 << bits) - 1))
    return out


class MatrixTest(emutest.EmuTest):

    def execute(self, arch, body, words, nout):
        w = asm.WAVE[arch]
        inp = np.zeros(1024 * 4, np.uint32)
        inp[:words.size] = words.reshape(-1)
        wait = "  s_wait_loadcnt 0x0\n" if arch.startswith("gfx12") else "  s_waitcnt vmcnt(0)\n"
        src = loads(arch, 20, words.shape[0]) + wait + body
        co = asm.assemble(arch, {"mm": (src, list(range(10, 10 + nout)))})
        return emutest.run_asm(arch, co, "mm", nout, inp=inp[:1024] if words.size <= 1024 else inp)

    # ---- gfx1100 ----
    def wmma11(self, ab, acc, instr, mods=""):
        kbits = {"f16": 16, "bf16": 16, "iu8": 8}[ab]
        areg = 16 * kbits // 32
        a_words = RNG.integers(0, 2**32, (areg, 16), dtype=np.uint64).astype(np.uint32)
        b_words = RNG.integers(0, 2**32, (areg, 16), dtype=np.uint64).astype(np.uint32)
        if ab in ("f16", "bf16"):
            # keep values finite and modest: random halves in [-2, 2]
            def make(n):
                if ab == "f16":
                    h = RNG.uniform(-2, 2, (n, 16, 2)).astype(np.float16).view(np.uint16)
                else:
                    h = bf16_bits(RNG.uniform(-2, 2, (n, 16, 2)))
                return (h[..., 0].astype(np.uint32) | h[..., 1].astype(np.uint32) << 16)
            a_words, b_words = make(areg), make(areg)
        a_full = np.concatenate([a_words, a_words], axis=1)          # lanes 16-31 replicate 0-15
        b_full = np.concatenate([b_words, b_words], axis=1)
        if acc == "f32":
            c_words = RNG.uniform(-2, 2, (8, 32)).astype(np.float32).view(np.uint32)
        elif acc == "f16":
            c_words = RNG.uniform(-2, 2, (8, 32)).astype(np.float16).view(np.uint16).astype(np.uint32)
        else:
            c_words = RNG.integers(-1000, 1000, (8, 32)).astype(np.int32).view(np.uint32)
        words = np.concatenate([a_full, b_full, c_words])
        a0, b0, c0 = 20, 20 + areg, 20 + 2 * areg
        body = "  %s v[10:17], v[%d:%d], v[%d:%d], v[%d:%d]%s\n" % (instr, a0, a0 + areg - 1, b0, b0 + areg - 1,
                                                                  c0, c0 + 7, mods)
        out = self.execute("gfx1100", body, words, 8)

        def dec(v):
            if ab == "f16":
                return np.array(v, np.uint16).view(np.float16).astype(np.float64)
            if ab == "bf16":
                return bf16_val(np.array(v, np.uint16)).astype(np.float64)
            return np.array(v, np.uint8).view(np.int8).astype(np.float64)
        A = np.array([dec(elements(a_full, i, 16, kbits)) for i in range(16)])          # A[i][k]
        B = np.array([dec(elements(b_full, j, 16, kbits)) for j in range(16)]).T        # B[k][j]
        C = np.zeros((16, 16))
        D = np.zeros((16, 16))
        for i in range(16):
            for j in range(16):
                lane, reg = j + 16 * (i % 2), i // 2
                if acc == "f32":
                    C[i, j] = c_words[reg][lane].view(np.float32)
                    D[i, j] = out[reg][lane].view(np.float32)
                elif acc == "f16":
                    C[i, j] = np.uint16(c_words[reg][lane] & 0xFFFF).view(np.float16)
                    D[i, j] = np.uint16(out[reg][lane] & 0xFFFF).view(np.float16)
                else:
                    C[i, j] = np.int32(c_words[reg][lane].view(np.int32))
                    D[i, j] = np.int32(out[reg][lane].view(np.int32))
        ref = A @ B + C
        if acc == "i32":
            np.testing.assert_array_equal(D, ref)
        else:
            np.testing.assert_allclose(D, ref, rtol=2e-3 if acc == "f16" else 1e-5, atol=2e-3 if acc == "f16" else 1e-5)

    def test_wmma_gfx1100_f16(self):
        self.wmma11("f16", "f32", "v_wmma_f32_16x16x16_f16")

    def test_wmma_gfx1100_bf16(self):
        self.wmma11("bf16", "f32", "v_wmma_f32_16x16x16_bf16")

    def test_wmma_gfx1100_f16_accumulator(self):
        self.wmma11("f16", "f16", "v_wmma_f16_16x16x16_f16")

    def test_wmma_gfx1100_int8(self):
        self.wmma11("iu8", "i32", "v_wmma_i32_16x16x16_iu8", " neg_lo:[1,1,0]")

    # ---- gfx1201: lane group g = lane / 16 holds K values 8g..8g+7 ----
    def wmma12(self, ab, instr, areg):
        bits = 16 if ab == "f16" else 8
        if ab == "f16":
            h = RNG.uniform(-2, 2, (2 * areg, 32, 2)).astype(np.float16).view(np.uint16)
            ab_words = h[..., 0].astype(np.uint32) | h[..., 1].astype(np.uint32) << 16
        else:
            ab_words = RNG.integers(0, 2**32, (2 * areg, 32), dtype=np.uint64).astype(np.uint32)
            ab_words &= 0x77777777                                     # no NaN encodings
        a_words, b_words = ab_words[:areg], ab_words[areg:]
        c_words = RNG.uniform(-2, 2, (8, 32)).astype(np.float32).view(np.uint32)
        words = np.concatenate([a_words, b_words, c_words])
        a0, b0, c0 = 20, 20 + areg, 20 + 2 * areg
        body = "  %s v[10:17], v[%d:%d], v[%d:%d], v[%d:%d]\n" % (instr, a0, a0 + areg - 1, b0, b0 + areg - 1,
                                                                c0, c0 + 7)
        out = self.execute("gfx1201", body, words, 8)
        dec = (lambda v: np.array(v, np.uint16).view(np.float16).astype(np.float64)) if ab == "f16" else \
            (lambda v: e4m3_ocp(np.array(v)))
        A = np.zeros((16, 16))
        B = np.zeros((16, 16))
        for i in range(16):
            for g in range(2):
                A[i, 8 * g:8 * g + 8] = dec(elements(a_words, i + 16 * g, 8, bits))
                B[8 * g:8 * g + 8, i] = dec(elements(b_words, i + 16 * g, 8, bits))
        C = np.zeros((16, 16))
        D = np.zeros((16, 16))
        for i in range(16):
            for j in range(16):
                lane, reg = j + 16 * (i // 8), i % 8
                C[i, j] = c_words[reg][lane].view(np.float32)
                D[i, j] = out[reg][lane].view(np.float32)
        np.testing.assert_allclose(D, A @ B + C, rtol=1e-5, atol=1e-5)

    def test_wmma_gfx1201_f16(self):
        self.wmma12("f16", "v_wmma_f32_16x16x16_f16", 4)

    def test_wmma_gfx1201_fp8(self):
        self.wmma12("fp8", "v_wmma_f32_16x16x16_fp8_fp8", 2)

    # ---- MFMA: lane = row + M * (k / kpl), element k % kpl ----
    def mfma(self, arch, instr, M, K, ab, dst_agpr, nreg_ab):
        N = M
        bits = {"f16": 16, "bf16": 16, "f32": 32, "i8": 8, "fp8": 8}[ab]
        kpl = K * M // 64
        if ab == "f16":
            h = RNG.uniform(-2, 2, (2 * nreg_ab, 64, 2)).astype(np.float16).view(np.uint16)
            ab_words = h[..., 0].astype(np.uint32) | h[..., 1].astype(np.uint32) << 16
        elif ab == "bf16":
            h = bf16_bits(RNG.uniform(-2, 2, (2 * nreg_ab, 64, 2)))
            ab_words = h[..., 0].astype(np.uint32) | h[..., 1].astype(np.uint32) << 16
        elif ab == "f32":
            ab_words = RNG.uniform(-2, 2, (2 * nreg_ab, 64)).astype(np.float32).view(np.uint32)
        else:
            ab_words = RNG.integers(0, 2**32, (2 * nreg_ab, 64), dtype=np.uint64).astype(np.uint32)
            if ab == "fp8":
                ab_words &= 0x77777777                                 # no NaN encodings
        a_words, b_words = ab_words[:nreg_ab], ab_words[nreg_ab:]
        ncreg = M * N // 64
        integer = ab == "i8"
        if integer:
            c_words = RNG.integers(-1000, 1000, (ncreg, 64)).astype(np.int32).view(np.uint32)
        else:
            c_words = RNG.uniform(-2, 2, (ncreg, 64)).astype(np.float32).view(np.uint32)
        words = np.concatenate([a_words, b_words, c_words])
        a0, b0, c0 = 20, 20 + nreg_ab, 20 + 2 * nreg_ab
        c0 += c0 % 2
        if c0 != 20 + 2 * nreg_ab:
            words = np.concatenate([a_words, b_words, np.zeros((1, 64), np.uint32), c_words])
        if dst_agpr:
            body = "".join("  v_accvgpr_write_b32 a%d, v%d\n" % (r, c0 + r) for r in range(ncreg))
            body += "  %s a[0:%d], v[%d:%d], v[%d:%d], a[0:%d]\n" % (instr, ncreg - 1, a0, a0 + nreg_ab - 1, b0,
                                                                   b0 + nreg_ab - 1, ncreg - 1)
            body += "  s_nop 7\n  s_nop 7\n"
            body += "".join("  v_accvgpr_read_b32 v%d, a%d\n" % (10 + r, r) for r in range(ncreg))
        else:
            body = "  %s v[%d:%d], v[%d:%d], v[%d:%d], v[%d:%d]\n  s_nop 7\n  s_nop 7\n" % (
                instr, c0, c0 + ncreg - 1, a0, a0 + nreg_ab - 1, b0, b0 + nreg_ab - 1, c0, c0 + ncreg - 1)
            body += "".join("  v_mov_b32 v%d, v%d\n" % (10 + r, c0 + r) for r in range(ncreg))
        out = self.execute(arch, body, words, ncreg)

        def dec(v):
            v = np.array(v)
            if ab == "f16":
                return v.astype(np.uint16).view(np.float16).astype(np.float64)
            if ab == "bf16":
                return bf16_val(v.astype(np.uint16)).astype(np.float64)
            if ab == "f32":
                return v.astype(np.uint32).view(np.float32).astype(np.float64)
            if ab == "fp8":
                return e4m3_ocp(v)
            return v.astype(np.uint8).view(np.int8).astype(np.float64)
        A = np.zeros((M, K))
        B = np.zeros((K, N))
        for i in range(M):
            for g in range(K // kpl):
                A[i, g * kpl:(g + 1) * kpl] = dec(elements(a_words, i + M * g, kpl, bits))
                B[g * kpl:(g + 1) * kpl, i] = dec(elements(b_words, i + N * g, kpl, bits))

        def slot(i, j):
            if M == 16:
                return i % 4, j + 16 * (i // 4)
            return 4 * (i // 8) + i % 4, j + 32 * ((i // 4) % 2)
        C = np.zeros((M, N))
        D = np.zeros((M, N))
        view = np.int32 if integer else np.float32
        for i in range(M):
            for j in range(N):
                reg, lane = slot(i, j)
                C[i, j] = c_words[reg][lane].view(view)
                D[i, j] = out[reg][lane].view(view)
        if integer:
            np.testing.assert_array_equal(D, A @ B + C)
        else:
            np.testing.assert_allclose(D, A @ B + C, rtol=1e-5, atol=1e-5)

    def test_mfma_gfx942_f16_agpr(self):
        self.mfma("gfx942", "v_mfma_f32_16x16x16_f16", 16, 16, "f16", True, 2)

    def test_mfma_gfx942_bf16_32x32(self):
        self.mfma("gfx942", "v_mfma_f32_32x32x8_bf16", 32, 8, "bf16", False, 2)

    def test_mfma_gfx942_f32(self):
        self.mfma("gfx942", "v_mfma_f32_16x16x4_f32", 16, 4, "f32", False, 1)

    def test_mfma_gfx942_i8(self):
        self.mfma("gfx942", "v_mfma_i32_16x16x32_i8", 16, 32, "i8", False, 2)

    def test_mfma_gfx950_bf16(self):
        self.mfma("gfx950", "v_mfma_f32_16x16x32_bf16", 16, 32, "bf16", True, 4)

    # The 8-bit MFMAs hk.mma runs on gfx950: int8 with K = 64 (16 bytes per lane), OCP fp8.
    def test_mfma_gfx950_i8_k64(self):
        self.mfma("gfx950", "v_mfma_i32_16x16x64_i8", 16, 64, "i8", False, 4)

    def test_mfma_gfx950_fp8_ocp(self):
        self.mfma("gfx950", "v_mfma_f32_16x16x32_fp8_fp8", 16, 32, "fp8", False, 2)

    def test_mfma_gfx950_f16_32x32(self):
        self.mfma("gfx950", "v_mfma_f32_32x32x16_f16", 32, 16, "f16", False, 4)

    # ---- gfx950 f8f6f4: 32 elements per lane (8, 6 or 4 bits, packed little-endian across the
    # lane's registers), lane = row + M * (k / 32) ----
    def f8f6f4(self, M, K, fa, fb):
        N, kpl = M, 32
        nreg = {"fp8": 8, "bf8": 8, "fp6": 6, "bf6": 6, "fp4": 4}
        na, nb, ncreg = nreg[fa], nreg[fb], M * N // 64
        a_codes, b_codes = (RNG.integers(0, 1 << F8F6F4_BITS[f], (64, kpl)) for f in (fa, fb))
        for codes, f in ((a_codes, fa), (b_codes, fb)):
            if f == "fp8":
                codes[(codes & 0x7F) == 0x7F] ^= 1               # no NaN
            elif f == "bf8":
                codes[(codes & 0x7C) == 0x7C] ^= 0x04            # no infinity or NaN
        a_words, b_words = pack_lanes(a_codes, F8F6F4_BITS[fa], na), pack_lanes(b_codes, F8F6F4_BITS[fb], nb)
        c_words = RNG.uniform(-2, 2, (ncreg, 64)).astype(np.float32).view(np.uint32)
        words = np.concatenate([a_words, b_words, c_words])
        a0, b0, c0 = 20, 20 + na, 20 + na + nb
        mods = "".join(" %s:%d" % (k, v) for k, v in (("cbsz", F8F6F4.index(fa)), ("blgp", F8F6F4.index(fb))) if v)
        body = "  v_mfma_f32_%dx%dx%d_f8f6f4 v[%d:%d], v[%d:%d], v[%d:%d], v[%d:%d]%s\n  s_nop 7\n  s_nop 7\n" % (
            M, N, K, c0, c0 + ncreg - 1, a0, a0 + na - 1, b0, b0 + nb - 1, c0, c0 + ncreg - 1, mods)
        body += "".join("  v_mov_b32 v%d, v%d\n" % (10 + r, c0 + r) for r in range(ncreg))
        out = self.execute("gfx950", body, words, ncreg)
        A, B = np.zeros((M, K)), np.zeros((K, N))
        av, bv = f8f6f4_values(a_codes, fa), f8f6f4_values(b_codes, fb)
        for i in range(M):
            for g in range(K // kpl):
                A[i, g * kpl:(g + 1) * kpl] = av[i + M * g]
                B[g * kpl:(g + 1) * kpl, i] = bv[i + N * g]
        C, D = np.zeros((M, N)), np.zeros((M, N))
        for i in range(M):
            for j in range(N):
                reg, lane = (i % 4, j + 16 * (i // 4)) if M == 16 else (4 * (i // 8) + i % 4, j + 32 * ((i // 4) % 2))
                C[i, j] = c_words[reg][lane].view(np.float32)
                D[i, j] = out[reg][lane].view(np.float32)
        ref = A @ B + C
        np.testing.assert_allclose(D, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())

    def test_mfma_gfx950_f8f6f4_fp8_bf8(self):
        # Triton's fp8 dots: e4m3 and e5m2 in either position, both shapes.
        for fa, fb in (("fp8", "fp8"), ("bf8", "fp8"), ("fp8", "bf8"), ("bf8", "bf8")):
            with self.subTest(a=fa, b=fb):
                self.f8f6f4(16, 128, fa, fb)
                self.f8f6f4(32, 64, fa, fb)

    def test_mfma_gfx950_f8f6f4_fp6_fp4(self):
        for fa, fb in (("fp6", "fp4"), ("bf6", "fp8"), ("fp4", "fp4"), ("fp8", "bf6"), ("fp6", "bf6")):
            with self.subTest(a=fa, b=fb):
                self.f8f6f4(16, 128, fa, fb)
                self.f8f6f4(32, 64, fa, fb)

    def test_f8f6f4_reference_formats(self):
        # The test's own decoding against the OCP MX specification's anchors.
        self.assertEqual(f8f6f4_values(np.array([0x1F, 0x01, 0x3F]), "fp6").tolist(), [7.5, 0.125, -7.5])
        self.assertEqual(f8f6f4_values(np.array([0x1F, 0x01, 0x3F]), "bf6").tolist(), [28.0, 0.0625, -28.0])
        self.assertEqual(f8f6f4_values(np.arange(16), "fp4").tolist(),
                         [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


F8F6F4 = ["fp8", "bf8", "fp6", "bf6", "fp4"]
F8F6F4_BITS = {"fp8": 8, "bf8": 8, "fp6": 6, "bf6": 6, "fp4": 4}


def f8f6f4_values(codes, fmt):
    """float64 values of f8f6f4 codes: torch's float8 dtypes for fp8/bf8; the OCP MX rule (no
    infinities or NaN) for the 6- and 4-bit formats."""
    codes = np.asarray(codes)
    if fmt in ("fp8", "bf8"):
        dtype = torch.float8_e4m3fn if fmt == "fp8" else torch.float8_e5m2
        return torch.from_numpy(codes.astype(np.uint8)).view(dtype).double().numpy()
    ebits, man, bias = {"fp6": (2, 3, 1), "bf6": (3, 2, 3), "fp4": (2, 1, 1)}[fmt]
    sign = (codes >> (ebits + man)) & 1
    e, m = (codes >> man) & ((1 << ebits) - 1), codes & ((1 << man) - 1)
    mag = np.where(e == 0, m * 2.0 ** (1 - bias - man), (1 + m / 2 ** man) * 2.0 ** (e - bias))
    return np.where(sign == 1, -mag, mag)


def pack_lanes(codes, bits, nreg):
    """[nreg][64] register words holding each lane's codes back to back, element 0 lowest."""
    words = np.zeros((nreg, 64), np.uint32)
    for lane in range(64):
        stream = 0
        for e, c in enumerate(codes[lane]):
            stream |= int(c) << (e * bits)
        for r in range(nreg):
            words[r, lane] = (stream >> (32 * r)) & 0xFFFFFFFF
    return words


if __name__ == "__main__":
    emutest.main()
