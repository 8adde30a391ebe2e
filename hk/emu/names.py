"""Mnemonics across families: each is mapped to the name the core implements (mostly the gfx11
spelling). gfx9 (CDNA) and gfx12 spell many instructions differently; the semantics are the same
unless noted in the core.
"""

import re

# Whole-name aliases.
ALIASES = {
    # SALU
    "s_and_not1_b32": "s_andn2_b32", "s_and_not1_b64": "s_andn2_b64", "s_or_not1_b32": "s_orn2_b32",
    "s_or_not1_b64": "s_orn2_b64", "s_ctz_i32_b32": "s_ff1_i32_b32", "s_ctz_i32_b64": "s_ff1_i32_b64",
    "s_clz_i32_u32": "s_flbit_i32_b32", "s_clz_i32_u64": "s_flbit_i32_b64", "s_cls_i32": "s_flbit_i32",
    "s_add_co_u32": "s_add_u32", "s_add_co_i32": "s_add_i32", "s_sub_co_u32": "s_sub_u32",
    "s_sub_co_i32": "s_sub_i32", "s_add_co_ci_u32": "s_addc_u32", "s_sub_co_ci_u32": "s_subb_u32",
    "s_and_not1_wrexec_b32": "s_andn2_wrexec_b32", "s_and_not1_wrexec_b64": "s_andn2_wrexec_b64",
    "s_and_not0_wrexec_b32": "s_andn1_wrexec_b32", "s_and_not0_wrexec_b64": "s_andn1_wrexec_b64",
    "s_memrealtime": "s_memtime", "s_addk_co_i32": "s_addk_i32", "s_getreg_b32": "s_getreg_b32",
    # VALU
    "v_add_u32": "v_add_nc_u32", "v_sub_u32": "v_sub_nc_u32", "v_subrev_u32": "v_subrev_nc_u32",
    "v_add_i32": "v_add_nc_i32", "v_sub_i32": "v_sub_nc_i32", "v_add_i16": "v_add_nc_i16",
    "v_sub_i16": "v_sub_nc_i16", "v_mad_legacy_u16": "v_mad_u16", "v_mad_legacy_i16": "v_mad_i16",
    "v_addc_co_u32": "v_add_co_ci_u32", "v_subb_co_u32": "v_sub_co_ci_u32",
    "v_subbrev_co_u32": "v_subrev_co_ci_u32", "v_add_u16": "v_add_nc_u16", "v_sub_u16": "v_sub_nc_u16",
    "v_madmk_f32": "v_mad_f32", "v_madak_f32": "v_mad_f32", "v_fmamk_f32": "v_fma_f32",
    "v_fmaak_f32": "v_fma_f32", "v_fmamk_f16": "v_fma_f16", "v_fmaak_f16": "v_fma_f16",
    "v_mul_dx9_zero_f32": "v_mul_legacy_f32", "v_fma_dx9_zero_f32": "v_fma_legacy_f32",
    "v_max_num_f32": "v_max_f32", "v_min_num_f32": "v_min_f32", "v_max3_num_f32": "v_max3_f32",
    "v_min3_num_f32": "v_min3_f32", "v_med3_num_f32": "v_med3_f32", "v_max_num_f16": "v_max_f16",
    "v_min_num_f16": "v_min_f16", "v_max3_num_f16": "v_max3_f16", "v_min3_num_f16": "v_min3_f16",
    "v_med3_num_f16": "v_med3_f16", "v_maxmin_num_f32": "v_maxmin_f32", "v_minmax_num_f32": "v_minmax_f32",
    "v_maxmin_num_f16": "v_maxmin_f16", "v_minmax_num_f16": "v_minmax_f16", "v_max_num_f64": "v_max_f64", "v_min_num_f64": "v_min_f64",
    "v_pk_max_num_f16": "v_pk_max_f16", "v_pk_min_num_f16": "v_pk_min_f16",
    "v_clz_i32_u32": "v_ffbh_u32", "v_ctz_i32_b32": "v_ffbl_b32", "v_cls_i32": "v_ffbh_i32",
    "v_mad_co_u64_u32": "v_mad_u64_u32", "v_mad_co_i64_i32": "v_mad_i64_i32",
    "v_cvt_floor_i32_f32": "v_cvt_flr_i32_f32", "v_cvt_pk_rtz_f16_f32": "v_cvt_pkrtz_f16_f32", "v_cvt_nearest_i32_f32": "v_cvt_rpi_i32_f32",
    "v_dot2acc_f32_f16": "v_dot2c_f32_f16", "v_dot2acc_f32_bf16": "v_dot2c_f32_bf16",
    "v_mad_legacy_f32": "v_mad_f32", "v_add_co_u32_nc": "v_add_nc_u32",
    "v_exp_legacy_f32": "v_exp_f32", "v_log_legacy_f32": "v_log_f32", "v_mad_u32_u16": "v_mad_u32_u16",
    # DS
    "ds_wrxchg_rtn_b32": "ds_storexchg_rtn_b32", "ds_wrxchg_rtn_b64": "ds_storexchg_rtn_b64",
    "ds_max_num_f32": "ds_max_f32", "ds_min_num_f32": "ds_min_f32", "ds_max_num_rtn_f32": "ds_max_rtn_f32",
    "ds_min_num_rtn_f32": "ds_min_rtn_f32", "ds_cmpst_b32": "ds_cmpstore_b32", "ds_cmpst_rtn_b32": "ds_cmpstore_rtn_b32",
    "ds_cmpst_b64": "ds_cmpstore_b64", "ds_cmpst_rtn_b64": "ds_cmpstore_rtn_b64",
}

_SIZES = {"dword": "b32", "dwordx2": "b64", "dwordx3": "b96", "dwordx4": "b128", "ubyte": "u8",
          "sbyte": "i8", "ushort": "u16", "sshort": "i16", "short_d16": "d16_b16",
          "short_d16_hi": "d16_hi_b16", "ubyte_d16": "d16_u8", "ubyte_d16_hi": "d16_hi_u8",
          "sbyte_d16": "d16_i8", "sbyte_d16_hi": "d16_hi_i8", "byte": "b8", "short": "b16",
          "byte_d16_hi": "d16_hi_b8", "short_d16_hi_st": "d16_hi_b16"}
_SMEM = {"dword": "b32", "dwordx2": "b64", "dwordx3": "b96", "dwordx4": "b128", "dwordx8": "b256",
         "dwordx16": "b512"}
_ATOMIC = {"add": "add_u32", "sub": "sub_u32", "swap": "swap_b32", "cmpswap": "cmpswap_b32",
           "smin": "min_i32", "umin": "min_u32", "smax": "max_i32", "umax": "max_u32", "and": "and_b32",
           "or": "or_b32", "xor": "xor_b32", "inc": "inc_u32", "dec": "dec_u32",
           "max_num_f32": "max_f32", "min_num_f32": "min_f32", "fmin": "min_f32", "fmax": "max_f32"}
_DS_GFX9 = [("ds_read2st64_", "ds_load_2addr_stride64_"), ("ds_write2st64_", "ds_store_2addr_stride64_"),
            ("ds_read2_", "ds_load_2addr_"), ("ds_write2_", "ds_store_2addr_"), ("ds_read_", "ds_load_"),
            ("ds_write_", "ds_store_")]


def canonical(name):
    """The core's name for a mnemonic (without its encoding suffix)."""
    if name in ALIASES:
        return ALIASES[name]
    m = re.match(r"^(global|flat|scratch|buffer)_(load|store)_(lds_)?(.+)$", name)
    if m:
        space, kind, lds, size = m.groups()
        if kind == "store" and size == "short_d16_hi":
            size = "d16_hi_b16"
        size = _SIZES.get(size, size)
        return "%s_%s_%s%s" % (space, kind, lds or "", size)
    m = re.match(r"^(global|flat|scratch|buffer)_atomic_(.+?)(_x2)?$", name)
    if m:
        space, op, x2 = m.groups()
        if x2:
            base = _ATOMIC.get(op, op)
            op = re.sub(r"(u|i|b)32$", r"\g<1>64", base)
        else:
            op = _ATOMIC.get(op, op)
        return "%s_atomic_%s" % (space, op)
    m = re.match(r"^s_(buffer_)?load_(dword\w*)$", name)
    if m:
        return "s_%sload_%s" % (m.group(1) or "", _SMEM.get(m.group(2), m.group(2)))
    for old, new in _DS_GFX9:
        if name.startswith(old):
            return new + name[len(old):]
    m = re.match(r"^s_(and|or|xor|nand|nor|xnor)_not([01])_saveexec_(b32|b64)$", name)
    if m:
        return "s_%sn%s_saveexec_%s" % (m.group(1), "1" if m.group(2) == "0" else "2", m.group(3))
    return name


# ---- matrix instructions ----
ELEM = {"f32": 0, "f16": 1, "bf16": 2, "i8": 3, "u8": 4, "fp8": 5, "bf8": 6, "i4": 7, "u4": 8,
        "iu8": 9, "iu4": 10, "xf32": 11, "f64": 12, "i32": 13, "fp6": 14, "bf6": 15, "fp4": 16}
# gfx950's f8f6f4 MFMAs take each operand's format from a modifier (cbsz for A, blgp for B).
F8F6F4 = ("fp8", "bf8", "fp6", "bf6", "fp4")


def matrix_shape(name, cbsz=0, blgp=0):
    """(M, N, K, blocks, a, b, c) for a v_mfma_*/v_wmma_* mnemonic (an f8f6f4 one's operand formats
    from its cbsz and blgp), or None."""
    m = re.match(r"^v_(mfma|wmma)_(f32|i32|f64|f16|bf16)_(\d+)x(\d+)x(\d+)(?:_(\d+)b)?_?(.*)$", name)
    if not m:
        return None
    _, out, M, N, K, blocks, ins = m.groups()
    ins = ins.replace("_1k", "").replace("_w32", "").replace("_w64", "")
    parts = ins.split("_") if ins else []
    if parts == ["f8f6f4"]:
        if cbsz >= len(F8F6F4) or blgp >= len(F8F6F4):
            return None
        parts = [F8F6F4[cbsz], F8F6F4[blgp]]
    if len(parts) == 1:
        a = b = parts[0]
    elif len(parts) == 2:
        a, b = parts
    else:
        return None
    if a not in ELEM or b not in ELEM:
        return None
    return int(M), int(N), int(K), int(blocks or 1), ELEM[a], ELEM[b], ELEM[out]
