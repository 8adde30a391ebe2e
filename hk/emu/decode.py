"""From llvm-objdump's text to the core's instruction rows: one row of integers per instruction
(the layout is _native.INST_FIELDS), decoded once per code object.

An instruction the core does not implement decodes to `__unknown` with a note saying why (a
mnemonic the core lacks, operands it cannot read, a word llvm-objdump could not decode); it
raises, naming the instruction and its address, only if executed.
"""

import re

import numpy as np

from hk.emu import _native, names
from hk.emu import operands as ops
from hk.emu.operands import Operand, OperandError

OPS = {name: i for i, name in enumerate(_native.OPS)}
FIELDS = {name: i for i, name in enumerate(_native.INST_FIELDS)}
UNKNOWN = OPS["__unknown"]

# Flag bits (native/emu.h).
F_DPP, F_DPP8, F_SDWA, F_CLAMP, F_VOPD, F_GLC, F_SLC, F_OFFEN, F_IDXEN, F_LDS, F_DPP_BC, F_DPP_FI, F_E64, F_NT = (
    1 << i for i in range(14))
DPP_KINDS = {"quad_perm": 0, "row_shl": 1, "row_shr": 2, "row_ror": 3, "wave_shl": 4, "wave_rol": 5,
             "wave_shr": 6, "wave_ror": 7, "row_mirror": 8, "row_half_mirror": 9, "row_share": 12,
             "row_xmask": 13, "row_newbcast": 14}
SDWA_SEL = {"BYTE_0": 0, "BYTE_1": 1, "BYTE_2": 2, "BYTE_3": 3, "WORD_0": 4, "WORD_1": 5, "DWORD": 6}
SDWA_UNUSED = {"UNUSED_PAD": 0, "UNUSED_SEXT": 1, "UNUSED_PRESERVE": 2}
HWREGS = {"HW_REG_MODE": 1, "HW_REG_STATUS": 2, "HW_REG_HW_ID": 3, "HW_REG_HW_ID1": 3, "HW_REG_WAVE_HW_ID1": 3,
          "HW_REG_GPR_ALLOC": 4, "HW_REG_LDS_ALLOC": 5, "HW_REG_SH_MEM_BASES": 6, "HW_REG_XCC_ID": 7}
BARE_MODS = {"glc", "slc", "dlc", "nt", "sc0", "sc1", "offen", "idxen", "lds", "gds", "clamp", "tfe",
             "row_mirror", "row_half_mirror", "addr64", "lwe", "unorm", "r128", "a16", "d16", "nv"}
# Mnemonics whose operands carry nothing the core needs.
NO_OPERANDS = {"s_delay_alu", "s_clause", "s_sendmsg", "s_sendmsghalt", "s_setprio", "s_sethalt", "s_nop",
               "s_icache_inv", "s_wait_alu", "s_ttracedata", "s_setreg_b32", "s_setreg_imm32_b32",
               "s_denorm_mode", "s_round_mode", "s_wait_idle", "s_inst_prefetch", "s_set_inst_prefetch_distance",
               "s_singleuse_vdst", "s_wait_event", "s_sleep", "s_trap", "s_endpgm", "s_code_end", "s_barrier",
               "s_barrier_signal", "s_barrier_wait", "s_version", "s_prefetch_inst",
               "s_waitcnt_depctr"}
BRANCHES = {"s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz",
            "s_cbranch_execz", "s_cbranch_execnz", "s_call_b64"}
TWO_DSTS = {"v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_add_co_ci_u32", "v_sub_co_ci_u32",
            "v_subrev_co_ci_u32", "v_div_scale_f32", "v_div_scale_f64", "v_mad_u64_u32", "v_mad_i64_i32"}


def split_top(text, sep):
    """Splits at `sep` outside brackets and parentheses."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last or out:
        out.append(last)
    return [p for p in out if p != ""]


def _is_modifier(tok):
    if ops.is_register(tok):             # a16 is an AGPR operand here, not the image modifier
        return False
    return tok in BARE_MODS or re.match(r"^[a-z_0-9]+:", tok) is not None or \
        re.match(r"^(vmcnt|expcnt|lgkmcnt|vscnt)\(", tok) is not None


def split_operands(rest):
    parts = split_top(rest, ",")
    if not parts:
        return [], []
    tail = split_top(parts[-1], " ")
    if tail and not _is_modifier(tail[0]):
        return parts[:-1] + [tail[0]], tail[1:]
    return parts[:-1], tail


def _bits_list(text):
    return sum(int(b) << i for i, b in enumerate(text.strip("[]").split(",")))


def _swizzle(text):
    """The 16-bit ds_swizzle offset of a swizzle(...) macro."""
    inner = text[text.index("(") + 1:text.rindex(")")]
    args = [a.strip().strip('"') for a in inner.split(",")]
    mode = args[0]
    if mode == "QUAD_PERM":
        return 0x8000 | sum(int(a) << (2 * i) for i, a in enumerate(args[1:5]))
    if mode == "BITMASK_PERM":
        andm = orm = xorm = 0
        for i, ch in enumerate(reversed(args[1])):
            if ch == "1":
                orm |= 1 << i
            elif ch == "p":
                andm |= 1 << i
            elif ch == "i":
                andm |= 1 << i
                xorm |= 1 << i
        return andm | orm << 5 | xorm << 10
    if mode == "SWAP":
        return 0x1F | int(args[1]) << 10
    if mode == "REVERSE":
        return 0x1F | (int(args[1]) - 1) << 10
    if mode == "BROADCAST":
        size, lane = int(args[1]), int(args[2])
        return (0x1F & ~(size - 1)) | lane << 5
    raise OperandError("unknown swizzle " + text)


class Decoded:
    """One instruction as a dict of fields, before it becomes a row."""

    def __init__(self):
        self.f = {"op": UNKNOWN, "flags": 0, "pc": 0, "size": 0, "target": -1, "nd": 0, "ns": 0,
                  "row_mask": 15, "bank_mask": 15, "sdwa_dst_sel": 6, "sdwa_src0_sel": 6,
                  "sdwa_src1_sel": 6, "aux0": -1, "aux1": -1, "aux2": -1, "aux3": -1}
        self.dst, self.src = [], []
        self.note = ""
        self.opsel_len = 0                       # entries of the printed op_sel list
        self.matrix_mods = {}                    # cbsz, abid, blgp of an MFMA

    def row(self):
        r = [0] * len(FIELDS)
        for k, v in self.f.items():
            r[FIELDS[k]] = v
        self.f["nd"], self.f["ns"] = len(self.dst), len(self.src)
        r[FIELDS["nd"]], r[FIELDS["ns"]] = len(self.dst), len(self.src)
        for prefix, lst in (("d", self.dst), ("s", self.src)):
            for i, o in enumerate(lst):
                vals = o.row()
                for name, v in zip(("kind", "mods", "n", "reg", "imm32", "imm16", "imm64"), vals):
                    r[FIELDS["%s%d_%s" % (prefix, i, name)]] = v
        return r


def _apply_modifier(d, tok, family):
    f = d.f
    if tok in ("glc", "sc0"):
        f["flags"] |= F_GLC
    elif tok in ("slc", "sc1", "nt", "dlc"):
        f["flags"] |= F_SLC
    elif tok == "offen":
        f["flags"] |= F_OFFEN
    elif tok == "idxen":
        f["flags"] |= F_IDXEN
    elif tok == "lds":
        f["flags"] |= F_LDS
    elif tok == "clamp":
        f["flags"] |= F_CLAMP
    elif tok in ("row_mirror", "row_half_mirror"):
        f["flags"] |= F_DPP
        f["dpp_kind"] = DPP_KINDS[tok]
    elif tok in BARE_MODS:
        pass
    else:
        key, _, val = tok.partition(":")
        if key == "offset" and val.startswith("swizzle("):
            f["offset"] = _swizzle(val)
        elif key in ("offset", "offset0"):
            f["offset"] = ops.parse_int(val)
        elif key == "offset1":
            f["offset1"] = ops.parse_int(val)
        elif key == "op_sel":
            f["opsel"] = _bits_list(val)
            d.opsel_len = len(val.strip("[]").split(","))
        elif key == "op_sel_hi":
            f["opsel_hi"] = _bits_list(val)
        elif key in ("neg_lo", "neg"):                     # neg: the MFMA f64 spelling
            f["neg_lo"] = _bits_list(val)
        elif key == "neg_hi":
            f["neg_hi"] = _bits_list(val)
        elif key == "mul":
            f["omod"] = {"2": 1, "4": 2}[val]
        elif key == "div":
            f["omod"] = 3
        elif key == "quad_perm":
            f["flags"] |= F_DPP
            f["dpp_kind"] = 0
            f["dpp_val"] = sum(int(x) << (2 * i) for i, x in enumerate(val.strip("[]").split(",")))
        elif key in ("row_shl", "row_shr", "row_ror", "wave_shl", "wave_rol", "wave_shr", "wave_ror",
                     "row_share", "row_xmask", "row_newbcast"):
            f["flags"] |= F_DPP
            f["dpp_kind"] = DPP_KINDS[key]
            f["dpp_val"] = ops.parse_int(val)
        elif key == "row_bcast":
            f["flags"] |= F_DPP
            f["dpp_kind"] = 10 if val == "15" else 11
        elif key == "row_mask":
            f["row_mask"] = ops.parse_int(val)
        elif key == "bank_mask":
            f["bank_mask"] = ops.parse_int(val)
        elif key == "bound_ctrl":
            f["flags"] |= F_DPP_BC
        elif key == "fi":
            if ops.parse_int(val):
                f["flags"] |= F_DPP_FI
        elif key == "dpp8":
            f["flags"] |= F_DPP8
            f["dpp_val"] = sum(int(x) << (3 * i) for i, x in enumerate(val.strip("[]").split(",")))
        elif key == "dst_sel":
            f["flags"] |= F_SDWA
            f["sdwa_dst_sel"] = SDWA_SEL[val]
        elif key == "dst_unused":
            f["sdwa_dst_unused"] = SDWA_UNUSED[val]
        elif key in ("src0_sel", "src1_sel"):
            f["flags"] |= F_SDWA
            f["sdwa_%s" % key] = SDWA_SEL[val]
        elif key in ("cbsz", "abid", "blgp"):
            d.matrix_mods[key] = ops.parse_int(val)
        elif key == "bitop3":
            f["aux0"] = ops.parse_int(val)
        elif key == "th":
            if "RETURN" in val:
                f["flags"] |= F_GLC
        elif key in ("scope", "format", "byte_sel", "index_key", "matrix_a_fmt", "matrix_b_fmt"):
            if key in ("index_key", "matrix_a_fmt", "matrix_b_fmt", "byte_sel"):
                raise OperandError("unsupported modifier " + tok)
        else:
            raise OperandError("unknown modifier " + tok)


def _ndst(name, nops, family, flags):
    if name.startswith("v_cmpx_"):
        return max(0, nops - 2)
    if name.startswith("v_cmp_"):
        return 1
    if name in TWO_DSTS:
        return 2
    if re.match(r"^s_(cmp|cmpk|bitcmp)", name) or name in ("s_setpc_b64", "s_waitcnt_vscnt", "s_waitcnt_vmcnt",
                                                            "s_waitcnt_lgkmcnt", "s_waitcnt_expcnt"):
        return 0
    if name.startswith("s_wait_") or name in BRANCHES - {"s_call_b64"} or name in NO_OPERANDS:
        return 0
    if name.startswith("ds_"):
        if name.startswith("ds_load") or "_rtn_" in name or name in ("ds_bpermute_b32", "ds_permute_b32",
                                                                      "ds_swizzle_b32"):
            return 1
        return 0
    m = re.match(r"^(global|flat|scratch|buffer)_(load|store|atomic)", name)
    if m:
        if m.group(2) == "load":
            return 0 if "_lds_" in name else 1
        if m.group(2) == "store":
            return 0
        if m.group(1) == "buffer":
            return 0                                  # returning buffer atomics: see below
        return 1 if flags & F_GLC else 0
    return 1


def _destination_op_sel(d):
    """VOP3 prints the destination's op_sel bit after the sources' (op_sel:[s0,s1,dst] with two
    sources); the encoding, and the core, have it at bit 3 whatever the number of sources."""
    n = len(d.src)
    if 0 < n < 3 and d.opsel_len == n + 1:
        bits = d.f["opsel"]
        d.f["opsel"] = bits & ((1 << n) - 1) | (bits >> n & 1) << 3


def decode_one(pc, size, mnemonic, rest, family, is_gfx9):
    """A Decoded for one (non-VOPD) instruction; op UNKNOWN when the core lacks it."""
    d = Decoded()
    d.f["pc"], d.f["size"] = pc, size
    raw = mnemonic
    if raw.endswith("_dpp"):
        d.f["flags"] |= F_DPP
        raw = raw[:-4]
    if raw.endswith("_sdwa"):
        d.f["flags"] |= F_SDWA
        raw = raw[:-5]
    if raw.endswith("_e64"):
        d.f["flags"] |= F_E64
        raw = raw[:-4]
    elif raw.endswith("_e32"):
        raw = raw[:-4]
    name = names.canonical(raw)
    if name in NO_OPERANDS:
        d.f["op"] = OPS.get(name, UNKNOWN)
        return d
    if name == "s_waitcnt":
        for i, ctr in enumerate(("vmcnt", "lgkmcnt", "expcnt")):
            m = re.search(ctr + r"\((\d+)\)", rest)
            if m:
                d.f["aux%d" % i] = int(m.group(1))
        if re.match(r"^(0x[0-9a-fA-F]+|\d+)$", rest.strip()):
            if ops.parse_int(rest) == 0:
                d.f["aux0"] = d.f["aux1"] = d.f["aux2"] = 0
        d.f["op"] = OPS["s_waitcnt"]
        return d
    if name in ("s_getreg_b32",):
        m = re.match(r"^(\S+),\s*hwreg\(([^)]*)\)", rest)
        if not m:
            return d
        d.dst.append(ops.parse(m.group(1)))
        args = [a.strip() for a in m.group(2).split(",")]
        d.f["aux0"] = HWREGS.get(args[0], 8)
        if len(args) == 3:
            d.f["aux1"], d.f["aux2"] = ops.parse_int(args[1]), ops.parse_int(args[2])
        d.f["op"] = OPS[name]
        return d
    operand_text, mods = split_operands(rest)
    if re.match(r"^v_(pk_|dot)", name):
        d.f["opsel_hi"] = 7                     # VOP3P: op_sel_hi defaults to all ones
    for tok in mods:
        _apply_modifier(d, tok, family)
    parsed = [ops.parse(t) for t in operand_text]
    if name in BRANCHES:
        imm = parsed[-1].imm32 & 0xFFFF
        simm = imm - 0x10000 if imm & 0x8000 else imm
        d.f["aux0"] = pc + 4 + 4 * simm                      # resolved to an index later
        parsed = parsed[:-1]
    if name.startswith("buffer_") and d.f["flags"] & F_LDS and "_load_" in name:
        name = name.replace("buffer_load_", "buffer_load_lds_")
    mm = d.matrix_mods
    f8f6f4 = name.endswith("_f8f6f4")
    shape = names.matrix_shape(name, mm.get("cbsz", 0), mm.get("blgp", 0)) if f8f6f4 else names.matrix_shape(name)
    if f8f6f4 and not shape:
        raise OperandError("cbsz:%d blgp:%d name no f8f6f4 operand formats (0-4: %s)"
                           % (mm.get("cbsz", 0), mm.get("blgp", 0), ", ".join(names.F8F6F4)))
    if shape:
        M, N, K, blocks, a, b, c = shape
        # cbsz/abid broadcast A and blgp swizzles B, except that an f8f6f4 MFMA's cbsz and blgp
        # choose the formats instead.
        unsupported = mm.get("abid", 0) or (not f8f6f4 and (mm.get("cbsz", 0) or mm.get("blgp", 0)))
        d.f["aux0"], d.f["aux1"], d.f["aux2"] = M, N, K | blocks << 16
        d.f["aux3"] = a | b << 5 | c << 10 | (1 << 15 if unsupported else 0)
        name = "v_mfma" if name.startswith("v_mfma") else "v_wmma"
    nd = _ndst(name, len(parsed), family, d.f["flags"])
    d.dst, d.src = parsed[:nd], parsed[nd:]
    if name.startswith("buffer_atomic") and d.f["flags"] & F_GLC:
        d.dst = [d.src[0]]                                   # the data register gets the old value
    if name.startswith("ds_cmpst") and raw.startswith("ds_cmpst_") and len(d.src) == 3:
        d.src[1], d.src[2] = d.src[2], d.src[1]              # gfx9 order: address, compare, new
    if len(d.dst) > 2 or len(d.src) > 4:
        raise OperandError("too many operands")
    _destination_op_sel(d)
    d.f["op"] = OPS.get(name, UNKNOWN)
    if d.f["op"] == UNKNOWN:
        d.note = "the emulator does not implement %s" % raw
    return d


def _undecodable(line, note):
    d = Decoded()
    d.f["pc"], d.f["size"] = line.address, line.size
    d.note = note
    return d


def decode(lines, family, is_gfx9, text_range):
    """(_native.Program, {pc: instruction index}, [(pc, text, why)] of the instructions that
    decoded to __unknown, [(pc, text, the core's name of the operation)] per instruction index)
    for the disassembled lines of one code object."""
    rows, texts, notes, index_of_pc, branch_rows = [], [], [], {}, []
    for line in lines:
        halves = line.text.split(" :: ")
        try:
            if line.mnemonic.startswith("."):
                decoded = [_undecodable(line, "llvm-objdump cannot decode this word as an instruction of the "
                                              "code object's target (data, or another target's encoding)")]
            elif len(halves) == 2:
                parts = []
                for h in halves:
                    mn, _, rest = h.strip().partition(" ")
                    mn = mn.replace("v_dual_", "v_", 1)
                    dd = decode_one(line.address, line.size, mn, rest.strip(), family, is_gfx9)
                    if mn == "v_cndmask_b32":
                        dd.src.append(Operand(ops.K_SGPR, 106, 1))     # VOPD cndmask reads vcc_lo
                        dd.f["op"] = OPS["v_cndmask_b32"]
                    parts.append(dd)
                parts[0].f["flags"] |= F_VOPD
                parts[1].f["size"] = 0
                decoded = parts
            else:
                decoded = [decode_one(line.address, line.size, line.mnemonic, line.operands, family, is_gfx9)]
        except (OperandError, KeyError, ValueError, IndexError) as e:
            decoded = [_undecodable(line, "the emulator cannot read the operands of %s: %s" % (line.mnemonic, e))]
        index_of_pc[line.address] = len(rows)
        for d in decoded:
            if d.f["op"] in BRANCH_OPS:
                branch_rows.append((len(rows), d.f["aux0"]))
            rows.append(d.row())
            texts.append(line.text)
            notes.append(d.note)
    arr = np.array(rows, dtype=np.int64).reshape(len(rows), len(FIELDS))
    for i, target in branch_rows:
        arr[i, FIELDS["target"]] = index_of_pc.get(target, -1)
    base, size = text_range
    pc_index = [-1] * ((size + 3) // 4)
    for pc, idx in index_of_pc.items():
        if base <= pc < base + size:
            pc_index[(pc - base) // 4] = idx
    unknown = [(r[FIELDS["pc"]], t, n) for r, t, n in zip(rows, texts, notes) if n]
    listing = [(int(r[FIELDS["pc"]]), t, _native.OPS[r[FIELDS["op"]]]) for r, t in zip(rows, texts)]
    return _native.Program(arr, texts, notes, base, base + size, pc_index), index_of_pc, unknown, listing


BRANCH_OPS = {OPS[n] for n in BRANCHES}
