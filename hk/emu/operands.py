"""Operand text (as llvm-objdump prints it) to the emulator's operand encoding.

Scalar registers use the emulator's own index space (native/emu.h): s0-s105, then vcc, ttmp,
m0, null, exec, flat_scratch, xnack_mask. AGPRs follow the 256 VGPRs.
"""

import re
import struct

# Kinds and modifier bits, as native/emu.h defines them.
K_NONE, K_SGPR, K_VGPR, K_INL, K_LIT, K_SCC, K_OFF, K_SHARED_BASE, K_PRIVATE_BASE, K_EXECZ, K_VCCZ = range(11)
M_NEG, M_ABS, M_HI, M_SEXT, M_FLT = 1, 2, 4, 8, 16
AGPR_BASE = 256

SPECIAL = {
    "vcc_lo": (106, 1), "vcc_hi": (107, 1), "vcc": (106, 2), "m0": (124, 1), "null": (125, 1),
    "exec_lo": (126, 1), "exec_hi": (127, 1), "exec": (126, 2), "flat_scratch_lo": (128, 1),
    "flat_scratch_hi": (129, 1), "flat_scratch": (128, 2), "xnack_mask_lo": (130, 1),
    "xnack_mask_hi": (131, 1), "xnack_mask": (130, 2),
}
OTHER_KINDS = {
    "scc": K_SCC, "src_scc": K_SCC, "off": K_OFF, "src_shared_base": K_SHARED_BASE,
    "src_private_base": K_PRIVATE_BASE, "execz": K_EXECZ, "src_execz": K_EXECZ, "vccz": K_VCCZ,
    "src_vccz": K_VCCZ,
}
_REG = re.compile(r"^(v|s|a|ttmp)(?:(\d+)|\[(\d+):(\d+)\])(\.[lh])?$")
_INV_2PI = 0.15915494309189535


class OperandError(ValueError):
    pass


class Operand:
    __slots__ = ("kind", "mods", "n", "reg", "imm32", "imm16", "imm64")

    def __init__(self, kind=K_NONE, reg=0, n=0, mods=0, imm32=0, imm16=0, imm64=0):
        self.kind, self.reg, self.n, self.mods = kind, reg, n, mods
        self.imm32, self.imm16, self.imm64 = imm32, imm16, imm64

    def row(self):
        imm64 = self.imm64 - (1 << 64) if self.imm64 >= 1 << 63 else self.imm64
        return [self.kind, self.mods, self.n, self.reg, self.imm32, self.imm16, imm64]

    def __repr__(self):
        return "Operand(kind=%d, reg=%d, n=%d, mods=%d, imm32=%#x)" % (self.kind, self.reg, self.n, self.mods, self.imm32)


def _f16_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def _float_const(x):
    if abs(x - _INV_2PI) < 1e-7 or abs(x + _INV_2PI) < 1e-7:
        neg = x < 0
        b32, b16, b64 = 0x3E22F983, 0x3118, 0x3FC45F306DC9C882
        if neg:
            b32, b16, b64 = b32 | 1 << 31, b16 | 1 << 15, b64 | 1 << 63
        return Operand(K_INL, mods=M_FLT, imm32=b32, imm16=b16, imm64=b64)
    return Operand(K_INL, mods=M_FLT, imm32=struct.unpack("<I", struct.pack("<f", x))[0],
                   imm16=_f16_bits(x), imm64=struct.unpack("<Q", struct.pack("<d", x))[0])


def _int_const(v, literal):
    return Operand(K_LIT if literal else K_INL, imm32=v & 0xFFFFFFFF, imm16=v & 0xFFFF,
                   imm64=v & 0xFFFFFFFFFFFFFFFF)


def parse_int(text):
    text = text.strip()
    neg = text.startswith("-")
    body = text[1:] if neg else text
    v = int(body, 16) if body.lower().startswith("0x") else int(body)
    return -v if neg else v


def is_register(text):
    """Whether the text names a register (range), such as a16 or v[4:7]."""
    return _REG.match(text.strip()) is not None


def parse(text):
    """One operand: a register (range), a special register, or a constant, with modifiers."""
    t = text.strip()
    mods = 0
    while True:
        if t.startswith("-") and not re.match(r"^-(\d|0x|\.)", t):
            mods |= M_NEG
            t = t[1:]
        elif t.startswith("|") and t.endswith("|"):
            mods |= M_ABS
            t = t[1:-1]
        elif re.match(r"^(neg|abs|sext|lit|lit64)\(.*\)$", t):
            fn, inner = t.split("(", 1)
            mods |= {"neg": M_NEG, "abs": M_ABS, "sext": M_SEXT}.get(fn, 0)
            t = inner[:-1]
        else:
            break
    m = _REG.match(t)
    if m:
        kind, single, lo, hi, half = m.groups()
        first = int(single) if single is not None else int(lo)
        count = 1 if single is not None else int(hi) - int(lo) + 1
        if half == ".h":
            mods |= M_HI
        if kind == "v":
            return Operand(K_VGPR, first, count, mods)
        if kind == "a":
            return Operand(K_VGPR, AGPR_BASE + first, count, mods)
        if kind == "ttmp":
            return Operand(K_SGPR, 108 + first, count, mods)
        if first + count > 106:
            raise OperandError("SGPR out of range: " + text)
        return Operand(K_SGPR, first, count, mods)
    if t in SPECIAL:
        reg, count = SPECIAL[t]
        return Operand(K_SGPR, reg, count, mods)
    if t in OTHER_KINDS:
        return Operand(OTHER_KINDS[t], mods=mods)
    if re.match(r"^-?0x[0-9a-fA-F]+$", t):
        op = _int_const(parse_int(t), literal=True)
        op.mods |= mods
        return op
    if re.match(r"^-?\d+$", t):
        v = parse_int(t)
        op = _int_const(v, literal=not -16 <= v <= 64)
        op.mods |= mods
        return op
    if re.match(r"^-?\d+\.\d*(e-?\d+)?$", t):
        op = _float_const(float(t))
        op.mods |= mods
        return op
    raise OperandError("unknown operand: " + text)
