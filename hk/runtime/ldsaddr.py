"""Where a kernel's LDS accesses and global->LDS copies land, for the wait gate's barrier rule.

The wait gate follows the values of a wave's registers through the code as far as they are
known. A value is a sum of symbols with integer factors plus a number per thread of the
workgroup, modulo 2^32. The numbers are exact for every thread: v0 holds the work-item id
(0 .. the kernel's largest workgroup size - 1, when the kernel descriptor has the hardware put
the x id only there), so the lane and the wave of each thread follow, and a scalar register
holds one number per wave (v_readfirstlane_b32 takes the first lane of each wave). A symbol is
a value the same in every wave of a workgroup that the walk cannot compute: the SGPRs the
hardware sets up at entry (kernel argument pointer, workgroup ids), a scalar load from an
address the same in every wave, and what an operation the walk cannot express as a sum (a
bitwise operation, a multiplication of two symbols) makes of such values. Additions,
subtractions, multiplications by a number and left shifts by a number keep the sum; the other
integer operations of SALU and VALU are computed per thread when no symbol is involved. What
is loaded from memory, floating point, sub-dword and DPP/SDWA forms, and anything else leave
the register unknown.

Two addresses can then be compared exactly when their symbols cancel: a copy whose M0 is
`base + 0x4000 + 1024 * wave` and a read at `base + 16 * lane` are told apart whatever `base`
is. Addresses that do not cancel, or an unknown register, cannot be: the gate says so and
leaves the decision to the emulator, which watches the bytes on a run.

Lanes: the walk knows whether every lane of the workgroup may be on (EXEC as at entry, or
restored from a copy saved then); where it is not, a range is where the access or the copy
may land, not where it must. The workgroup is taken at the kernel's largest size
(.max_flat_workgroup_size), every wave present.
"""

import dataclasses
import re
import struct

import numpy as np

MASK = 0xFFFFFFFF
_U64 = np.uint64
_M = _U64(MASK)
# A global->LDS copy takes its LDS address from M0's low 18 bits (hk.emu does the same).
M0_LDS_BITS = 0x3FFFF


@dataclasses.dataclass(frozen=True)
class Workgroup:
    """The threads the walk follows: `size` work-items in waves of `wave` lanes; `flat_v0`: v0
    holds the x id alone (else v0 is unknown)."""

    size: int = 1024
    wave: int = 64
    flat_v0: bool = True

    @property
    def waves(self):
        return max(1, -(-self.size // self.wave))

    @property
    def threads(self):
        return self.waves * self.wave

    def tid(self):
        return np.arange(self.threads, dtype=_U64)

    def wave_of(self):
        return np.arange(self.threads) // self.wave

    def lane(self):
        return np.arange(self.threads, dtype=_U64) % _U64(self.wave)


class Value:
    """sum(coefficient * symbol) + num, mod 2^32; num is an int (the same in every thread) or a
    uint64 array with one entry per thread. Immutable."""

    __slots__ = ("atoms", "num", "_key")

    def __init__(self, num, atoms=()):
        if not isinstance(num, int) and np.ndim(num) == 0:
            num = int(num)
        if not isinstance(num, int):
            num = np.asarray(num).astype(_U64) & _M
            if num.size and bool((num == num[0]).all()):
                num = int(num[0])
        if isinstance(num, int):
            num &= MASK
        self.num = num
        self.atoms = atoms
        self._key = None

    @property
    def uniform(self):
        """The same in every thread of the workgroup."""
        return isinstance(self.num, int)

    def key(self):
        if self._key is None:
            self._key = (self.atoms, self.num if isinstance(self.num, int) else self.num.tobytes())
        return self._key

    def __eq__(self, other):
        return isinstance(other, Value) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def per_thread(self, wg):
        return np.full(wg.threads, self.num, dtype=_U64) if isinstance(self.num, int) else self.num

    def __repr__(self):
        terms = ["%d*%s" % (c, a) for a, c in self.atoms]
        num = "%#x" % self.num if isinstance(self.num, int) else "[%#x..%#x]" % (self.num.min(), self.num.max())
        return "Value(%s)" % " + ".join(terms + [num])


def const(n):
    return Value(int(n) & MASK)


# The saved copy of an EXEC with every lane on (s_and_saveexec_b64 and its kind save it).
EXEC_SAVED = Value(0, (("exec at entry", 1),))


def _atoms(*pairs):
    """Coefficients of symbols of several (atoms, factor) pairs summed; zero terms dropped."""
    acc = {}
    for atoms, k in pairs:
        for a, c in atoms:
            acc[a] = (acc.get(a, 0) + c * k) & MASK
    return tuple(sorted((a, c) for a, c in acc.items() if c))


def add(*vals):
    if any(v is None for v in vals):
        return None
    num = 0
    for v in vals:
        num = num + v.num
    return Value(num, _atoms(*[(v.atoms, 1) for v in vals]))


def neg(v):
    if v is None:
        return None
    num = (-v.num) & MASK if isinstance(v.num, int) else (_U64(1 << 32) - v.num)
    return Value(num, _atoms((v.atoms, -1)))


def sub(a, b):
    return add(a, neg(b))


def scale(v, k):
    if v is None:
        return None
    k &= MASK
    return Value(v.num * k if isinstance(v.num, int) else v.num * _U64(k), _atoms((v.atoms, k)))


def _signed(x):
    if isinstance(x, int):
        return x - (1 << 32) if x & 0x80000000 else x
    return x.astype(np.int64) - np.where(x >= _U64(0x80000000), np.int64(1 << 32), np.int64(0))


def _unsigned(x):
    if isinstance(x, int):
        return x & MASK
    return x.astype(_U64) & _M


def _bits(x, k):
    return x & ((1 << k) - 1) if isinstance(x, int) else x & _U64((1 << k) - 1)


class Symbols:
    """Names for the symbols an instruction defines: '<address>' or '<address>.<dword>'."""

    def __init__(self, inst):
        self.inst = inst
        self.defined = set()

    def new(self, dword=0):
        name = "%x" % self.inst.addr if not dword else "%x.%d" % (self.inst.addr, dword)
        self.defined.add(name)
        return Value(0, ((name, 1),))


def numeric(fn, vals, symbols, dword=0):
    """fn of the numbers when no symbol is involved; a new symbol when every operand is the same
    in every thread; else unknown."""
    if any(v is None for v in vals):
        return None
    if all(not v.atoms for v in vals):
        return Value(fn(*[v.num for v in vals]))
    if all(v.uniform for v in vals):
        return symbols.new(dword)
    return None


def mul(a, b, symbols):
    if a is None or b is None:
        return None
    if not a.atoms and a.uniform:
        return scale(b, a.num)
    if not b.atoms and b.uniform:
        return scale(a, b.num)
    return numeric(lambda x, y: x * y, (a, b), symbols)


def shl(a, b, symbols):
    if a is None or b is None:
        return None
    if not b.atoms and b.uniform:
        return scale(a, 1 << (b.num & 31))
    return numeric(lambda x, y: x << (y & _U64(31) if not isinstance(y, int) else y & 31), (a, b), symbols)


def _shr(x, s):
    return x >> (s & 31 if isinstance(s, int) else s & _U64(31))


def _ashr(x, s):
    return _unsigned(_signed(x) >> (s & 31 if isinstance(s, int) else (s & _U64(31)).astype(np.int64)))


def _signed_bits(field, width):
    """A width-bit field sign-extended (an int, or an int64 array)."""
    top = 1 << (width - 1)
    if isinstance(field, int):
        return field - (1 << width) if field & top else field
    f = field.astype(np.int64)
    return np.where(f & top, f - (1 << width), f)


def _bfe(x, off, width, signed):
    """Bits off .. off + width - 1 of x (width a number 0..32), zero- or sign-extended."""
    if width == 0:
        return x & 0 if isinstance(x, int) else x & _U64(0)
    if width >= 32:
        return _ashr(x, off) if signed else _shr(x, off)
    field = _bits(_shr(x, off), width)
    return _unsigned(_signed_bits(field, width)) if signed else field


def _bitop3(a, b, c, table):
    r = 0
    full = MASK
    for i in range(8):
        if not (table >> i) & 1:
            continue
        r = r | ((a if i & 4 else full ^ a) & (b if i & 2 else full ^ b) & (c if i & 1 else full ^ c))
    return r


_FLOATS = {"0.5": 0x3F000000, "-0.5": 0xBF000000, "1.0": 0x3F800000, "-1.0": 0xBF800000,
           "2.0": 0x40000000, "-2.0": 0xC0000000, "4.0": 0x40800000, "-4.0": 0xC0800000,
           "0.15915494": 0x3E22F983}
_REG = re.compile(r"^(v|s|a)(?:(\d+)|\[(\d+):(\d+)\])$")
_SPECIAL = {"vcc": ("vcc_lo", "vcc_hi"), "exec": ("exec_lo", "exec_hi"), "m0": ("m0",),
            "vcc_lo": ("vcc_lo",), "vcc_hi": ("vcc_hi",), "exec_lo": ("exec_lo",), "exec_hi": ("exec_hi",)}


def reg_names(text):
    """The 32-bit registers an operand names, in order ([] for a constant or anything else)."""
    t = text.strip()
    m = _REG.match(t)
    if m:
        kind, one, lo, hi = m.groups()
        if one is not None:
            return ["%s%s" % (kind, one)]
        return ["%s%d" % (kind, i) for i in range(int(lo), int(hi) + 1)]
    return list(_SPECIAL.get(t, ()))


def constant(text):
    """The 32-bit pattern of an integer or inline float constant, else None."""
    t = text.strip()
    if t.startswith("lit(") and t.endswith(")"):
        t = t[4:-1]
    try:
        if re.match(r"^-?0x[0-9a-fA-F]+$", t):
            v = int(t[1:], 16) * -1 if t.startswith("-") else int(t, 16)
            return v & MASK
        if re.match(r"^-?\d+$", t):
            return int(t) & MASK
    except ValueError:
        return None
    if t in _FLOATS:
        return _FLOATS[t]
    if re.match(r"^-?\d+\.\d*(e-?\d+)?$", t):
        return struct.unpack("<I", struct.pack("<f", float(t)))[0]
    return None


def split_operands(text):
    """(operands, modifiers) of an instruction's operand text: modifiers are the space-separated
    words after the last operand, `name:value` as {name: value} and bare words as {word: True}."""
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    mods = {}
    if parts:
        words = parts[-1].split()
        parts[-1] = words[0] if words else ""
        for w in words[1:]:
            name, sep, value = w.partition(":")
            if sep:
                v = constant(value)
                mods[name] = v if v is not None else value
            else:
                mods[w] = True
    return parts, mods


# Values of registers the walk has not seen written: the SGPRs set up at entry are symbols
# (the same in every wave of a workgroup); anything else is unknown.
def entry_value(name):
    if name.startswith("s") and name[1:].isdigit():
        return Value(0, (("entry " + name, 1),))
    return None


# Mnemonics that write no register operand (their first operand, if any, is read).
_NO_DEST = ("s_cmp", "s_bitcmp", "s_cbranch", "s_branch", "s_waitcnt", "s_wait_", "s_barrier", "s_nop",
            "s_setprio", "s_sleep", "s_endpgm", "s_code_end", "s_sendmsg", "s_setreg", "s_trap",
            "s_icache", "s_dcache", "s_ttrace", "s_delay_alu", "s_clause", "s_store", "s_buffer_store",
            "s_setpc", "s_sethalt", "s_set_inst_prefetch", "s_inst_prefetch", "s_denorm_mode",
            "s_round_mode", "s_scratch_store", "s_incperflevel", "s_decperflevel", "s_prefetch",
            "s_singleuse_vdst", "s_version", "s_set_gpr_idx")
# SALU instructions that leave SCC as it was (every other one may write it).
_KEEPS_SCC = ("s_mov_", "s_movk_", "s_cmov", "s_cselect", "s_nop", "s_waitcnt", "s_wait_", "s_barrier",
              "s_setprio", "s_branch", "s_cbranch", "s_load", "s_buffer_load", "s_getpc", "s_setpc",
              "s_swappc", "s_sleep", "s_delay_alu", "s_clause", "s_sendmsg", "s_endpgm", "s_code_end",
              "s_store", "s_dcache", "s_icache", "s_set_gpr_idx", "s_trap", "s_sethalt", "s_setreg",
              "s_getreg", "s_ttrace")


def _base(mnemonic):
    for suffix in ("_e32", "_e64"):
        if mnemonic.endswith(suffix):
            return mnemonic[:-len(suffix)]
    return mnemonic


class Regs:
    """A wave's register values: name -> Value (None: unknown); a name absent holds its
    entry_value. `exec_full`: every lane of the workgroup may be on (EXEC as at entry)."""

    __slots__ = ("values", "exec_full")

    def __init__(self, values=None, exec_full=True):
        self.values = values if values is not None else {}
        self.exec_full = exec_full

    @classmethod
    def at_entry(cls, wg):
        regs = cls()
        if wg.flat_v0:
            regs.values["v0"] = Value(wg.tid())
        return regs

    def copy(self):
        return Regs(dict(self.values), self.exec_full)

    def get(self, name):
        if name in ("exec_lo", "exec_hi"):
            return EXEC_SAVED if self.exec_full else None
        if name in self.values:
            return self.values[name]
        return entry_value(name)

    def set(self, name, value):
        if value is None and entry_value(name) is None:
            self.values.pop(name, None)
        else:
            self.values[name] = value

    def forget(self, symbol):
        """Every value built on `symbol` becomes unknown (the instruction defining it ran again)."""
        for name, v in list(self.values.items()):
            if v is not None and any(a == symbol for a, _ in v.atoms):
                self.set(name, None)

    def merge(self, other):
        """What holds on either path: a value both paths agree on, else unknown."""
        out = Regs({}, self.exec_full and other.exec_full)
        for name in set(self.values) | set(other.values):
            a, b = self.get(name), other.get(name)
            out.set(name, a if a == b else None)
        return out

    def signature(self):
        return (self.exec_full,) + tuple(sorted((k, v.key() if v is not None else None)
                                                for k, v in self.values.items()))


def _src(regs, text):
    """The 32-bit value of a source operand (the first register of a range), or None."""
    c = constant(text)
    if c is not None:
        return const(c)
    names = reg_names(text)
    if names and names[0] not in ("exec_lo", "exec_hi"):
        return regs.get(names[0])
    return None


def _pair(regs, text):
    """The two dwords of a 64-bit source operand."""
    names = reg_names(text)
    if len(names) == 2:
        return regs.get(names[0]), regs.get(names[1])
    c = constant(text)
    if c is not None:  # a 64-bit inline constant is sign-extended
        return const(c), const(MASK if -16 <= _signed(c) < 0 else 0)
    return None, None


def _dests(mnemonic, ops):
    """The registers an instruction writes as far as its operands say: its first operand's, and
    its second's for the forms with two results (the carry, VCC)."""
    if not ops or mnemonic.startswith(_NO_DEST):
        return []
    out = list(reg_names(ops[0]))
    if len(ops) > 1 and _base(mnemonic) in (
            "v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32", "v_subb_co_u32",
            "v_subbrev_co_u32", "v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32",
            "v_div_scale_f32", "v_div_scale_f64", "v_mad_u64_u32", "v_mad_i64_i32"):
        out += reg_names(ops[1])
    return out


def _not(x):
    return x ^ MASK if isinstance(x, int) else x ^ _M


def _both_ints(f_int, f_arr):
    return lambda a, b: f_int(a, b) if isinstance(a, int) and isinstance(b, int) else f_arr(a, b)


# name: (first source operand, function of the sources' Values and Symbols). Sources are the
# operands from the first one on; a form with a carry result has its sources after it.
def _SHL(x, s):
    return x << (s & 31 if isinstance(s, int) else s & _U64(31))


_OPS = {
    "s_mov_b32": (1, lambda sy, a: a),
    "v_mov_b32": (1, lambda sy, a: a),
    "s_add_u32": (1, lambda sy, a, b: add(a, b)),
    "s_add_i32": (1, lambda sy, a, b: add(a, b)),
    "v_add_u32": (1, lambda sy, a, b: add(a, b)),
    "v_add_nc_u32": (1, lambda sy, a, b: add(a, b)),
    "v_add_i32": (1, lambda sy, a, b: add(a, b)),
    "v_add_co_u32": (2, lambda sy, a, b: add(a, b)),
    "s_sub_u32": (1, lambda sy, a, b: sub(a, b)),
    "s_sub_i32": (1, lambda sy, a, b: sub(a, b)),
    "v_sub_u32": (1, lambda sy, a, b: sub(a, b)),
    "v_sub_nc_u32": (1, lambda sy, a, b: sub(a, b)),
    "v_sub_i32": (1, lambda sy, a, b: sub(a, b)),
    "v_sub_co_u32": (2, lambda sy, a, b: sub(a, b)),
    "v_subrev_u32": (1, lambda sy, a, b: sub(b, a)),
    "v_subrev_nc_u32": (1, lambda sy, a, b: sub(b, a)),
    "v_subrev_co_u32": (2, lambda sy, a, b: sub(b, a)),
    "v_add3_u32": (1, lambda sy, a, b, c: add(a, b, c)),
    "s_mul_i32": (1, lambda sy, a, b: mul(a, b, sy)),
    "v_mul_lo_u32": (1, lambda sy, a, b: mul(a, b, sy)),
    "v_mul_lo_i32": (1, lambda sy, a, b: mul(a, b, sy)),
    "v_mul_u32_u24": (1, lambda sy, a, b: numeric(lambda x, y: _bits(x, 24) * _bits(y, 24), (a, b), sy)),
    "v_mad_u32_u24": (1, lambda sy, a, b, c: add(numeric(lambda x, y: _bits(x, 24) * _bits(y, 24), (a, b), sy), c)),
    "s_lshl_b32": (1, lambda sy, a, s: shl(a, s, sy)),
    "v_lshlrev_b32": (1, lambda sy, s, a: shl(a, s, sy)),
    "s_lshl1_add_u32": (1, lambda sy, a, b: add(shl(a, const(1), sy), b)),
    "s_lshl2_add_u32": (1, lambda sy, a, b: add(shl(a, const(2), sy), b)),
    "s_lshl3_add_u32": (1, lambda sy, a, b: add(shl(a, const(3), sy), b)),
    "s_lshl4_add_u32": (1, lambda sy, a, b: add(shl(a, const(4), sy), b)),
    "v_lshl_add_u32": (1, lambda sy, a, s, c: add(shl(a, s, sy), c)),
    "v_add_lshl_u32": (1, lambda sy, a, b, s: shl(add(a, b), s, sy)),
    "v_lshl_or_b32": (1, lambda sy, a, s, c: numeric(lambda x, y, z: _SHL(x, y) | z, (a, s, c), sy)),
    "s_lshr_b32": (1, lambda sy, a, s: numeric(_shr, (a, s), sy)),
    "v_lshrrev_b32": (1, lambda sy, s, a: numeric(_shr, (a, s), sy)),
    "s_ashr_i32": (1, lambda sy, a, s: numeric(_ashr, (a, s), sy)),
    "v_ashrrev_i32": (1, lambda sy, s, a: numeric(_ashr, (a, s), sy)),
    "s_and_b32": (1, lambda sy, a, b: numeric(lambda x, y: x & y, (a, b), sy)),
    "v_and_b32": (1, lambda sy, a, b: numeric(lambda x, y: x & y, (a, b), sy)),
    "s_or_b32": (1, lambda sy, a, b: numeric(lambda x, y: x | y, (a, b), sy)),
    "v_or_b32": (1, lambda sy, a, b: numeric(lambda x, y: x | y, (a, b), sy)),
    "s_xor_b32": (1, lambda sy, a, b: numeric(lambda x, y: x ^ y, (a, b), sy)),
    "v_xor_b32": (1, lambda sy, a, b: numeric(lambda x, y: x ^ y, (a, b), sy)),
    "s_andn2_b32": (1, lambda sy, a, b: numeric(lambda x, y: x & _not(y), (a, b), sy)),
    "s_orn2_b32": (1, lambda sy, a, b: numeric(lambda x, y: x | _not(y), (a, b), sy)),
    "s_not_b32": (1, lambda sy, a: numeric(_not, (a,), sy)),
    "v_not_b32": (1, lambda sy, a: numeric(_not, (a,), sy)),
    "v_and_or_b32": (1, lambda sy, a, b, c: numeric(lambda x, y, z: (x & y) | z, (a, b, c), sy)),
    "v_or3_b32": (1, lambda sy, a, b, c: numeric(lambda x, y, z: x | y | z, (a, b, c), sy)),
    "v_xad_u32": (1, lambda sy, a, b, c: numeric(lambda x, y, z: (x ^ y) + z, (a, b, c), sy)),
    "s_min_u32": (1, lambda sy, a, b: numeric(_both_ints(min, np.minimum), (a, b), sy)),
    "v_min_u32": (1, lambda sy, a, b: numeric(_both_ints(min, np.minimum), (a, b), sy)),
    "s_max_u32": (1, lambda sy, a, b: numeric(_both_ints(max, np.maximum), (a, b), sy)),
    "v_max_u32": (1, lambda sy, a, b: numeric(_both_ints(max, np.maximum), (a, b), sy)),
    "s_min_i32": (1, lambda sy, a, b: numeric(
        lambda x, y: _unsigned(_both_ints(min, np.minimum)(_signed(x), _signed(y))), (a, b), sy)),
    "v_min_i32": (1, lambda sy, a, b: numeric(
        lambda x, y: _unsigned(_both_ints(min, np.minimum)(_signed(x), _signed(y))), (a, b), sy)),
    "s_max_i32": (1, lambda sy, a, b: numeric(
        lambda x, y: _unsigned(_both_ints(max, np.maximum)(_signed(x), _signed(y))), (a, b), sy)),
    "v_max_i32": (1, lambda sy, a, b: numeric(
        lambda x, y: _unsigned(_both_ints(max, np.maximum)(_signed(x), _signed(y))), (a, b), sy)),
    "s_mul_hi_u32": (1, lambda sy, a, b: numeric(_mul_hi, (a, b), sy)),
    "v_mul_hi_u32": (1, lambda sy, a, b: numeric(_mul_hi, (a, b), sy)),
    "s_abs_i32": (1, lambda sy, a: numeric(lambda x: _unsigned(abs(_signed(x)) if isinstance(x, int)
                                                               else np.abs(_signed(x))), (a,), sy)),
}


def _mul_hi(a, b):
    """The high dword of the 64-bit product of two dwords."""
    if isinstance(a, int) and isinstance(b, int):
        return (a * b) >> 32
    a = _U64(a) if isinstance(a, int) else a
    b = _U64(b) if isinstance(b, int) else b
    lo_a, lo_b, hi_a, hi_b = a & _U64(0xFFFF), b & _U64(0xFFFF), a >> _U64(16), b >> _U64(16)
    mid = hi_a * lo_b + ((lo_a * lo_b) >> _U64(16))
    mid2 = lo_a * hi_b + (mid & _U64(0xFFFF))
    return hi_a * hi_b + (mid >> _U64(16)) + (mid2 >> _U64(16))


def _select(cond, x, y):
    """x where SCC is 1, y where 0 (SCC a number per wave)."""
    if cond is not None and cond.uniform and not cond.atoms:
        return x if cond.num else y
    if x == y:
        return x
    if cond is None or cond.atoms or x is None or y is None or x.atoms != y.atoms:
        return None
    return Value(np.where(cond.num.astype(bool), x.num, y.num).astype(_U64), x.atoms)


_CMP = {"eq": lambda a, b: a == b, "lg": lambda a, b: a != b, "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}


def _truth(res):
    if isinstance(res, (bool, np.bool_)):
        return const(int(res))
    return Value(np.asarray(res).astype(_U64))


def _compare(m, ops, regs):
    """SCC after a scalar compare (a number per wave), or None."""
    parts = m.split("_")
    if len(parts) < 4 or parts[2] not in _CMP or len(ops) < 2:
        return None
    op, ty = parts[2], parts[3]
    if ty == "u64":
        a, b = _pair(regs, ops[0]), _pair(regs, ops[1])
        if any(v is None or v.atoms for v in a + b) or op not in ("eq", "lg"):
            return None
        eq = (a[0].num == b[0].num) & (a[1].num == b[1].num)
        return _truth(eq if op == "eq" else ~eq if not isinstance(eq, bool) else not eq)
    x = _src(regs, ops[0])
    if m.startswith("s_cmpk_"):
        c = constant(ops[1])
        y = None if c is None else const(_signed_bits(c & 0xFFFF, 16) if ty == "i32" else c & 0xFFFF)
    else:
        y = _src(regs, ops[1])
    if x is None or y is None:
        return None
    if x.atoms or y.atoms:
        if x.atoms != y.atoms or op not in ("eq", "lg"):
            return None
    if ty == "i32":
        return _truth(_CMP[op](_signed(x.num), _signed(y.num)))
    return _truth(_CMP[op](x.num, y.num))


def evaluate(inst, regs, wg, memory_kind=None):
    """The effect of one instruction on a wave's registers: (symbols, commit). `memory_kind` is
    the wait gate's (counter, kind) of a memory instruction, or None. `symbols` are the ones the
    instruction defines anew: the caller forgets their older meaning (everything built on it)
    and then calls commit() to write the results into `regs`. Operand text the walk cannot read
    leaves what the instruction may write unknown."""
    try:
        return _evaluate(inst, regs, wg, memory_kind)
    except (ValueError, IndexError, TypeError, OverflowError):
        ops, _ = split_operands(inst.operands)
        writes = [(d, None) for d in (reg_names(ops[0]) if ops else [])] + [("m0", None)]
        exec_full = False if "exec" in inst.operands or inst.mnemonic.startswith("v_cmpx") else None
        return set(), _commit(regs, writes, Symbols(inst), None, exec_full)


def _evaluate(inst, regs, wg, memory_kind):
    m = _base(inst.mnemonic)
    ops, mods = split_operands(inst.operands)
    sy = Symbols(inst)
    writes = []            # (register, Value or None)
    scc = "keep"
    exec_full = None       # None: EXEC unchanged; else whether every lane is on after

    if memory_kind is not None:
        counter, kind = memory_kind
        if kind == "load" and ops:
            dests = reg_names(ops[0])
            same = False
            if counter == "smem" and len(ops) > 1:
                # A scalar load through a pointer the hardware set up (the kernel arguments, the
                # dispatch packet) at a fixed offset reads the same dwords in every wave; memory
                # the kernel may write is another matter.
                srcs = [regs.get(n) for n in reg_names(ops[1])] + \
                    ([_src(regs, ops[2])] if len(ops) > 2 else [])
                same = bool(srcs) and all(v is not None and v.uniform and
                                          all(a.startswith("entry ") for a, _ in v.atoms) for v in srcs)
            writes = [(d, sy.new(i) if same else None) for i, d in enumerate(dests)]
        return sy.defined, _commit(regs, writes, sy, scc, exec_full)

    dests = _dests(inst.mnemonic, ops)
    plain = all(k == "bitop3" for k in mods) and not m.endswith(("_sdwa", "_dpp", "_dpp8"))
    result = None

    def src(i):
        return _src(regs, ops[i]) if i < len(ops) else None

    if not plain:
        pass
    elif m in _OPS:
        first, fn = _OPS[m]
        n = fn.__code__.co_argcount - 1
        if len(ops) >= first + n:
            result = fn(sy, *[src(first + i) for i in range(n)])
    elif m == "s_movk_i32":
        c = constant(ops[1]) if len(ops) > 1 else None
        result = None if c is None else const(_signed_bits(c & 0xFFFF, 16))
    elif m in ("s_addk_i32", "s_mulk_i32"):
        c = constant(ops[1]) if len(ops) > 1 else None
        if c is not None:
            k = _signed_bits(c & 0xFFFF, 16)
            result = add(src(0), const(k)) if m == "s_addk_i32" else scale(src(0), k)
    elif m == "v_readfirstlane_b32":
        v = src(1)
        if v is not None and not v.uniform:
            lanes = v.num.reshape(wg.waves, wg.wave)
            if regs.exec_full:
                v = Value(np.repeat(lanes[:, 0], wg.wave), v.atoms)
            elif not bool((lanes == lanes[:, :1]).all()):
                v = None  # the first lane that is on is not known
        result = v
    elif m == "v_bitop3_b32" and isinstance(mods.get("bitop3"), int):
        table = mods["bitop3"]
        result = numeric(lambda a, b, c: _bitop3(a, b, c, table), (src(1), src(2), src(3)), sy)
    elif m in ("v_bfe_u32", "v_bfe_i32", "s_bfe_u32", "s_bfe_i32"):
        if m.startswith("v_"):
            off, width = src(2), src(3)
        else:
            packed = src(2)
            off = width = None
            if packed is not None and packed.uniform and not packed.atoms:
                off, width = const(packed.num & 31), const((packed.num >> 16) & 0x7F)
        if width is not None and width.uniform and not width.atoms:
            w = min(width.num if m.startswith("s_") else width.num & 31, 32)
            signed = m.endswith("i32")
            result = numeric(lambda x, o: _bfe(x, o, w, signed), (src(1), off), sy)
    elif m in ("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32"):
        if src(1) == const(MASK):
            lane = wg.lane().astype(np.int64)
            below = np.minimum(lane, 32) if "_lo_" in m else np.maximum(lane - 32, 0)
            result = add(Value(below.astype(_U64)), src(2))
    elif m in ("s_cselect_b32", "s_cselect_b64", "s_mov_b64", "s_cmov_b32"):
        cond = regs.get("scc")
        if m == "s_cselect_b32":
            vals = [_select(cond, src(1), src(2))]
        elif m == "s_cselect_b64":
            vals = [_select(cond, x, y) for x, y in zip(_pair(regs, ops[1]), _pair(regs, ops[2]))]
        elif m == "s_cmov_b32":
            vals = [_select(cond, src(1), src(0))]
        else:
            vals = list(_pair(regs, ops[1]))
        if dests[:2] == ["exec_lo", "exec_hi"]:
            exec_full = tuple(vals) in ((EXEC_SAVED, EXEC_SAVED), (const(MASK), const(MASK)))
            dests = []
        else:
            writes += list(zip(dests, vals))
            dests = dests[len(vals):]
    elif m.startswith(("s_cmp_", "s_cmpk_")):
        scc = _compare(m, ops, regs)
    elif "saveexec" in m:
        writes += [(d, EXEC_SAVED if regs.exec_full else None) for d in dests]
        dests = []
        exec_full = m.startswith("s_or_saveexec") and _pair(regs, ops[1]) == (const(MASK), const(MASK))
    elif m in ("s_or_b64", "s_and_b64") and dests[:2] == ["exec_lo", "exec_hi"]:
        restored = (EXEC_SAVED, EXEC_SAVED) in (_pair(regs, ops[1]), _pair(regs, ops[2]))
        exec_full = (restored or regs.exec_full) if m == "s_or_b64" else (restored and regs.exec_full)
        dests = []
        scc = None

    writes += [(d, result if i == 0 else None) for i, d in enumerate(dests)]
    if m.startswith("v_cmpx") or any(d in ("exec_lo", "exec_hi") for d, _ in writes):
        exec_full = False
        writes = [(d, v) for d, v in writes if d not in ("exec_lo", "exec_hi")]
    if m.startswith("s_set_gpr_idx"):
        writes.append(("m0", None))
    if m.startswith("s_") and scc == "keep" and not m.startswith(_KEEPS_SCC):
        scc = None
    return sy.defined, _commit(regs, writes, sy, scc, exec_full)


def _commit(regs, writes, sy, scc, exec_full):
    def commit():
        for d, v in writes:
            regs.set(d, v)
        if scc != "keep":
            regs.set("scc", scc)
        if exec_full is not None:
            regs.exec_full = bool(exec_full)
    return commit


# --- where copies and accesses land ------------------------------------------------------------

_WIDTH = re.compile(r"(?:dword|[biuf])(8|16|32|64|96|128)?(x[234])?")


def copy_bytes(mnemonic):
    """Bytes per lane of a global->LDS copy."""
    m = mnemonic
    for names, n in ((("ubyte", "sbyte", "_u8", "_i8"), 1), (("ushort", "sshort", "_u16", "_i16"), 2),
                     (("dwordx4", "_b128"), 16), (("dwordx3", "_b96"), 12), (("dwordx2", "_b64"), 8)):
        if any(x in m for x in names):
            return n
    return 4


def access_bytes(mnemonic):
    """Bytes per lane (per element for the two-address forms) of an LDS instruction."""
    if "_pk_" in mnemonic:
        return 4
    widths = [int(w) for w in re.findall(r"_[biuf](8|16|32|64|96|128)", mnemonic)]
    if not widths:
        return 16
    head = re.match(r"ds_(?:read|write|load|store)2?(?:st64)?_[biuf](8|16|32|64|96|128)", mnemonic)
    return (int(head.group(1)) if head else max(widths)) // 8


@dataclasses.dataclass(frozen=True)
class Dest:
    """Where a copy may land: wave w writes [bases[w], bases[w] + span) + the symbols; `exact`:
    every lane of every wave is on. bases is None when the destination is unknown."""

    atoms: tuple = ()
    bases: tuple = None
    span: int = 0
    exact: bool = False

    @property
    def known(self):
        return self.bases is not None


UNKNOWN_DEST = Dest()


def copy_destination(inst, regs, wg):
    m0 = regs.get("m0")
    if m0 is None:
        return UNKNOWN_DEST
    ops, mods = split_operands(inst.operands)
    offset = mods.get("offset", 0) if inst.mnemonic.startswith("buffer_") else 0
    if not isinstance(offset, int):
        return UNKNOWN_DEST
    num = m0.per_thread(wg).reshape(wg.waves, wg.wave)
    if not bool((num == num[:, :1]).all()):
        return UNKNOWN_DEST
    base = num[:, 0]
    if not m0.atoms:
        base = base & _U64(M0_LDS_BITS)
    bases = tuple(int(b) + offset for b in base)
    return Dest(m0.atoms, bases, wg.wave * copy_bytes(inst.mnemonic), regs.exec_full)


@dataclasses.dataclass(frozen=True)
class Access:
    """The bytes an LDS instruction touches: per thread [addr + off, addr + off + size) for
    each (off, size) in `parts`; `addr` None when unknown."""

    atoms: tuple
    addr: object
    parts: tuple
    exact: bool


_NO_ADDRESS = ("ds_bpermute", "ds_permute", "ds_swizzle", "ds_nop", "ds_gws", "ds_ordered_count")


def lds_access(inst, regs, wg):
    """The Access of an LDS instruction that reads or writes LDS bytes, else None."""
    m = inst.mnemonic
    if not m.startswith("ds_") or m.startswith(_NO_ADDRESS):
        return None
    ops, mods = split_operands(inst.operands)
    unknown = Access((), None, ((0, access_bytes(m)),), False)
    if "addtid" in m or m.startswith(("ds_append", "ds_consume")) or not ops:
        return unknown
    returns = m.startswith(("ds_read", "ds_load")) or "_rtn" in m
    index = 1 if returns else 0
    if index >= len(ops):
        return unknown
    names = reg_names(ops[index])
    addr = regs.get(names[0]) if names and names[0].startswith("v") else None
    size = access_bytes(m)
    offsets = [mods.get(k, 0) for k in ("offset0", "offset1", "offset")]
    if not all(isinstance(o, int) for o in offsets):
        return unknown
    if "offset0" in mods or "offset1" in mods:
        stride = size * (64 if "st64" in m else 1)
        parts = (offsets[0] * stride, size), (offsets[1] * stride, size)
    else:
        parts = ((offsets[2], size),)
    if addr is None:
        return Access((), None, parts, False)
    return Access(addr.atoms, addr.per_thread(wg), parts, regs.exec_full)


DISJOINT, OVERLAP, MAYBE = "disjoint", "overlap", "maybe"


def overlap(dest, access, wg, other_waves_only=False):
    """(verdict, why): whether the access touches bytes the copy writes. DISJOINT: it cannot;
    OVERLAP: it does (every lane on at both); MAYBE: the walk cannot tell, `why` says why.
    other_waves_only: only another wave's access counts (the copy's own wave has waited)."""
    if not dest.known:
        return MAYBE, "the copy's LDS address (M0) is not known"
    if access.addr is None:
        return MAYBE, "the LDS address of the access is not known"
    if dest.atoms != access.atoms:
        return MAYBE, "the two addresses differ by values not known here"
    # Where each thread's bytes start relative to each wave's copy, modulo 2^32 and signed (a
    # sum with symbols may wrap): the bytes meet when -size < delta < span.
    addr = access.addr.astype(np.int64)
    bases = np.array(dest.bases, dtype=np.int64)[:, None]
    wave_of = wg.wave_of()
    others = wave_of[None, :] != np.arange(len(dest.bases))[:, None]
    valid = np.arange(wg.threads) < wg.size
    hit = False
    for off, size in access.parts:
        delta = (addr[None, :] + off - bases) & MASK
        delta = np.where(delta >= 1 << 31, delta - (1 << 32), delta)
        touch = (delta < dest.span) & (delta + size > 0) & valid[None, :]
        if other_waves_only:
            touch &= others
        if touch.any():
            hit = True
            break
    if not hit:
        return DISJOINT, ""
    if dest.exact and access.exact:
        return OVERLAP, ""
    return MAYBE, "part of the lanes may be off, so the bytes may be missed"
