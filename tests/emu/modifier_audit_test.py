"""The source-modifier audit, instruction by instruction: every VOP3 and VOP3P instruction that
takes float source modifiers must give, with a modifier on a source, bit for bit what it gives
on that source with the modifier applied beforehand by integer ops on its sign bits. A path that
drops or misplaces a modifier fails here, whatever the instruction computes. Inputs include
zeros of both signs, infinities, NaNs and denormals.
"""

import numpy as np

from tests.emu import asm, emutest
from tests.emu.emutest import inputs, loads

RNG = np.random.default_rng(31)
SPECIAL32 = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 0.5], np.float32)


def _f32_words(n):
    x = RNG.uniform(-4, 4, n).astype(np.float32)
    x[:len(SPECIAL32)] = SPECIAL32
    return np.roll(x, RNG.integers(n)).view(np.uint32)


def _f16_words(n):
    h = RNG.uniform(-4, 4, 2 * n).astype(np.float16)
    h[:8] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e-6, -3e-6, 0.5], np.float16)
    return np.roll(h, RNG.integers(2 * n)).view(np.uint32)


# Sign masks: the bits a modifier changes, per kind of source.
MASKS = {"f32": (0x80000000,), "f16l": (0x8000,), "f16h": (0x80000000,), "f64": (0, 0x80000000),
         "mix": (0x80008000,)}
# The modifiers as the disassembler prints them, and what each does to the sign bits.
MODS = {"neg": ("-%s", "xor"), "abs": ("|%s|", "andn"), "negabs": ("-|%s|", "or")}
_OP = {"xor": "v_xor_b32 v%d, 0x%x, v%d", "or": "v_or_b32 v%d, 0x%x, v%d", "andn": "v_and_b32 v%d, 0x%x, v%d"}

# Sources live in v1-v8: f32 and f16 in v1, v2, v3; f64 in v[2:3], v[4:5], v[6:7].
SRC = {"f32": ("v1", "v2", "v3"), "f16l": ("v1.l", "v2.l", "v3.l"), "f16h": ("v1.h", "v2.h", "v3.h"),
       "f64": ("v[2:3]", "v[4:5]", "v[6:7]"), "mix": ("v1", "v2", "v3")}
REG = {"f32": (1, 2, 3), "f16l": (1, 2, 3), "f16h": (1, 2, 3), "f64": (2, 4, 6), "mix": (1, 2, 3)}
TEMP = {"f32": ("v90", "v91", "v92"), "f16l": ("v90.l", "v91.l", "v92.l"), "f16h": ("v90.h", "v91.h", "v92.h"),
        "f64": ("v[90:91]", "v[92:93]", "v[94:95]"), "mix": ("v90", "v91", "v92")}
TREG = {"f32": (90, 91, 92), "f16l": (90, 91, 92), "f16h": (90, 91, 92), "f64": (90, 92, 94), "mix": (90, 91, 92)}


def _value(how, mask):
    return ~mask & 0xFFFFFFFF if how == "andn" else mask


def _case(template, kind, nsrc, i, mod, dst_a, dst_b):
    """Asm computing the instruction twice: with `mod` on source i (into dst_a), and with source
    i modified beforehand (into dst_b)."""
    text, how = MODS[mod]
    srcs = list(SRC[kind][:nsrc])
    a = template.format(*[text % s if k == i else s for k, s in enumerate(srcs)], d=dst_a)
    pre = []
    r, t = REG[kind][i], TREG[kind][i]
    masks = MASKS[kind]
    if kind == "mix":                  # f16 where op_sel_hi says so, else f32
        hi = template.split("op_sel_hi:[")[1].split("]")[0].split(",")
        masks = (0x80008000,) if hi[i].strip() == "1" else (0x80000000,)
    for w, mask in enumerate(masks):
        if mask:
            pre.append(_OP[how] % (t + w, _value(how, mask), r + w))
        else:
            pre.append("v_mov_b32 v%d, v%d" % (t + w, r + w))
    if kind in ("f16l", "f16h"):
        pre = [_OP[how] % (t, _value(how, MASKS[kind][0]), r)]
    b = template.format(*[TEMP[kind][i] if k == i else s for k, s in enumerate(srcs)], d=dst_b)
    return "  " + a + "\n" + "".join("  %s\n" % p for p in pre) + "  " + b + "\n"


# gfx1100: (template, source kind, number of sources, sources taking modifiers, destination width)
RDNA3 = [
    ("v_add_f32_e64 {d}, {0}, {1}", "f32", 2), ("v_sub_f32_e64 {d}, {0}, {1}", "f32", 2),
    ("v_subrev_f32_e64 {d}, {0}, {1}", "f32", 2), ("v_mul_f32_e64 {d}, {0}, {1}", "f32", 2),
    ("v_min_f32_e64 {d}, {0}, {1}", "f32", 2), ("v_max_f32_e64 {d}, {0}, {1}", "f32", 2),
    ("v_mul_dx9_zero_f32_e64 {d}, {0}, {1}", "f32", 2), ("v_fma_f32 {d}, {0}, {1}, {2}", "f32", 3),
    ("v_fma_dx9_zero_f32 {d}, {0}, {1}, {2}", "f32", 3), ("v_min3_f32 {d}, {0}, {1}, {2}", "f32", 3),
    ("v_max3_f32 {d}, {0}, {1}, {2}", "f32", 3), ("v_med3_f32 {d}, {0}, {1}, {2}", "f32", 3),
    ("v_maxmin_f32 {d}, {0}, {1}, {2}", "f32", 3), ("v_minmax_f32 {d}, {0}, {1}, {2}", "f32", 3),
    ("v_div_fixup_f32 {d}, {0}, {1}, {2}", "f32", 3), ("v_ldexp_f32 {d}, {0}, v9", "f32", 1),
    ("v_cvt_pk_rtz_f16_f32_e64 {d}, {0}, {1}", "f32", 2), ("v_cndmask_b32_e64 {d}, {0}, {1}, s20", "f32", 2),
    ("v_cvt_f16_f32_e64 {d}, {0}", "f32", 1), ("v_cvt_f64_f32_e64 {d64}, {0}", "f32", 1),
    ("v_fma_mix_f32 {d}, {0}, {1}, {2} op_sel_hi:[1,0,1]", "mix", 3),
    ("v_fma_mixlo_f16 {d}, {0}, {1}, {2} op_sel:[1,0,0] op_sel_hi:[1,1,0]", "mix", 3),
    ("v_fma_mixhi_f16 {d}, {0}, {1}, {2} op_sel_hi:[0,1,1]", "mix", 3),
    ("v_add_f16_e64 {d16}, {0}, {1}", "f16l", 2), ("v_mul_f16_e64 {d16}, {0}, {1}", "f16h", 2),
    ("v_sub_f16_e64 {d16}, {0}, {1}", "f16h", 2), ("v_max_f16_e64 {d16}, {0}, {1}", "f16l", 2),
    ("v_min_f16_e64 {d16}, {0}, {1}", "f16h", 2), ("v_fma_f16 {d16}, {0}, {1}, {2}", "f16l", 3),
    ("v_med3_f16 {d16}, {0}, {1}, {2}", "f16h", 3), ("v_max3_f16 {d16}, {0}, {1}, {2}", "f16l", 3),
    ("v_div_fixup_f16 {d16}, {0}, {1}, {2}", "f16l", 3), ("v_cvt_f32_f16_e64 {d}, {0}", "f16h", 1),
    ("v_cndmask_b16 {d16}, {0}, {1}, s20", "f16l", 2),
    ("v_add_f64 {d64}, {0}, {1}", "f64", 2), ("v_mul_f64 {d64}, {0}, {1}", "f64", 2),
    ("v_fma_f64 {d64}, {0}, {1}, {2}", "f64", 3), ("v_max_f64 {d64}, {0}, {1}", "f64", 2),
    ("v_div_fixup_f64 {d64}, {0}, {1}, {2}", "f64", 3), ("v_ldexp_f64 {d64}, {0}, v9", "f64", 1),
    ("v_cvt_f32_f64_e64 {d}, {0}", "f64", 1), ("v_cvt_i32_f64_e64 {d}, {0}", "f64", 1),
]
for _u in ("trunc", "ceil", "floor", "rndne", "fract", "exp", "log", "rcp", "rsq", "sqrt", "sin", "cos", "frexp_mant"):
    RDNA3.append(("v_%s_f32_e64 {d}, {0}" % _u, "f32", 1))
for _u in ("trunc", "ceil", "floor", "rndne", "fract", "exp", "log", "rcp", "rsq", "sqrt", "sin", "cos"):
    RDNA3.append(("v_%s_f16_e64 {d16}, {0}" % _u, "f16h" if len(_u) % 2 else "f16l", 1))
for _u in ("v_cvt_i32_f32", "v_cvt_u32_f32", "v_frexp_exp_i32_f32", "v_cvt_floor_i32_f32", "v_cvt_nearest_i32_f32"):
    RDNA3.append((_u + "_e64 {d}, {0}", "f32", 1))
for _u in ("rcp", "rsq", "sqrt", "trunc", "ceil", "floor", "rndne", "fract", "frexp_mant"):
    RDNA3.append(("v_%s_f64_e64 {d64}, {0}" % _u, "f64", 1))

# gfx942: the VOP3P forms with float operands, and the f32 VOP3 ones under their gfx9 names.
CDNA3 = [
    ("v_fma_mix_f32 {d}, {0}, {1}, {2} op_sel:[0,1,0] op_sel_hi:[1,1,0]", "mix", 3),
    ("v_fma_mixlo_f16 {d}, {0}, {1}, {2} op_sel_hi:[1,0,1]", "mix", 3),
    ("v_add_f32_e64 {d}, {0}, {1}", "f32", 2), ("v_mul_legacy_f32_e64 {d}, {0}, {1}", "f32", 2),
    ("v_fma_f32 {d}, {0}, {1}, {2}", "f32", 3), ("v_max3_f32 {d}, {0}, {1}, {2}", "f32", 3),
    ("v_cvt_pkrtz_f16_f32 {d}, {0}, {1}", "f32", 2), ("v_cvt_pk_fp8_f32 {d}, {0}, {1}", "f32", 2),
    ("v_fma_f64 {d64}, {0}, {1}, {2}", "f64", 3),
]


# Sources whose sign the result does not depend on (cos is even, frexp_exp and div_fixup's
# numerator take the magnitude only).
SIGNLESS = [("cos", (0,)), ("frexp_exp", (0,)), ("div_fixup", (0,))]


def _kernels(table):
    """One kernel per instruction and source: result rows in pairs (with the modifier, and with
    the source modified beforehand), one pair per modifier."""
    out = {}
    for n, (template, kind, nsrc) in enumerate(table):
        wide = "{d64}" in template
        for i in range(nsrc):
            body, results = ["  s_mov_b32 s20, 0x5a5a33cc\n  v_mov_b32 v9, v4\n"], []
            # first the instruction without modifiers, to show each modifier changes its result
            plain = "v[10:11]" if wide else "v10"
            t = template.replace("{d64}", "{d}").replace("{d16}", "{d}")
            body.append("  " + t.format(*SRC[kind][:nsrc], d=plain + (".l" if "{d16}" in template else "")) + "\n")
            results += [10, 11] if wide else [10]
            for mod in MODS:
                r = 10 + len(results)
                if wide:
                    da, db = "v[%d:%d]" % (r, r + 1), "v[%d:%d]" % (r + 2, r + 3)
                    results += [r, r + 1, r + 2, r + 3]
                else:
                    da, db = "v%d" % r, "v%d" % (r + 1)
                    results += [r, r + 1]
                t = template.replace("{d64}", "{d}").replace("{d16}", "{d}")
                if "{d16}" in template:
                    da, db = da + ".l", db + ".l"
                body.append(_case(t, kind, nsrc, i, mod, da, db))
            out["k%d_%d" % (n, i)] = ("".join(body), results, template, kind, i, wide)
    return out


class ModifierAuditTest(emutest.EmuTest):

    def audit(self, arch, table):
        wave = asm.WAVE[arch]
        kernels = _kernels(table)
        co = asm.assemble(arch, {k: (loads(arch, 8) + v[0], v[1]) for k, v in kernels.items()})
        ins = (_f32_words(wave), _f32_words(wave), _f32_words(wave), RNG.integers(-20, 20, wave).astype(np.uint32),
               _f32_words(wave), _f32_words(wave), _f32_words(wave), _f32_words(wave))
        f16ins = (_f16_words(wave), _f16_words(wave), _f16_words(wave)) + ins[3:]
        for name, (body, results, template, kind, i, wide) in kernels.items():
            data = f16ins if kind in ("f16l", "f16h", "mix") else ins
            out = emutest.run_asm(arch, co, name, len(results), inp=inputs(arch, *data))
            step = 4 if wide else 2
            plain, out = out[:step // 2], out[step // 2:]
            for c, mod in enumerate(MODS):
                got, want = out[c * step:c * step + step // 2], out[c * step + step // 2:(c + 1) * step]
                what = "%s: %s on source %d (%s)" % (template.split()[0], mod, i, arch)
                np.testing.assert_array_equal(got, want, err_msg=what)
                if not any(name in template and i in srcs for name, srcs in SIGNLESS):
                    self.assertFalse(np.array_equal(got, plain), what + " changes nothing")

    def test_rdna3(self):
        self.audit("gfx1100", RDNA3)

    def test_cdna3(self):
        self.audit("gfx942", CDNA3)


if __name__ == "__main__":
    emutest.main()
