"""Known answers for cross-lane operations: DPP (row shifts, quad_perm, mirrors, row_share and
row_xmask on gfx11, row_bcast and wave shifts on gfx9), DPP8, bound_ctrl and row masks,
v_permlane16/x16, ds_bpermute, ds_swizzle, v_readlane/readfirstlane/writelane and v_mbcnt."""

import numpy as np

from tests.emu import asm, emutest

L32 = np.arange(32)
L64 = np.arange(64)
OLD = 0xDEAD


def row_op(lanes, f):
    """Applies f(row_base, r) per lane; None means the lane reads out of range."""
    return [f(l & ~15, l & 15) for l in lanes]


GFX11_BODY = """
  v_mov_b32 v10, 0xdead
  v_mov_b32_dpp v10, v0 row_shr:1 row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v11, v0 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
  v_mov_b32_dpp v12, v0 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v13, v0 row_mirror row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v14, v0 row_ror:4 row_mask:0xf bank_mask:0xf
  v_mov_b32 v15, 0xdead
  v_add_nc_u32_dpp v15, v0, v0 row_shl:2 row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v16, v0 dpp8:[7,6,5,4,3,2,1,0]
  v_mov_b32_dpp v17, v0 row_share:5 row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v18, v0 row_xmask:1 row_mask:0xf bank_mask:0xf
  s_mov_b32 s10, 0x89abcdef
  s_mov_b32 s11, 0x01234567
  v_permlane16_b32 v19, v0, s10, s11
  s_mov_b32 s12, 0x76543210
  s_mov_b32 s13, 0xfedcba98
  v_permlanex16_b32 v20, v0, s12, s13
  v_sub_nc_u32 v30, 31, v0
  v_lshlrev_b32 v30, 2, v30
  ds_bpermute_b32 v21, v30, v0
  ds_swizzle_b32 v22, v0 offset:swizzle(SWAP,16)
  ds_swizzle_b32 v23, v0 offset:swizzle(QUAD_PERM,1,0,3,2)
  ds_swizzle_b32 v24, v0 offset:swizzle(BITMASK_PERM,"00p11")
  v_readlane_b32 s14, v0, 5
  v_mov_b32 v25, s14
  s_mov_b32 s20, exec_lo
  s_mov_b32 exec_lo, 0xf0
  v_readfirstlane_b32 s15, v0
  s_mov_b32 exec_lo, s20
  v_mov_b32 v26, s15
  v_mov_b32 v27, v0
  s_movk_i32 s16, 0x63
  v_writelane_b32 v27, s16, 3
  v_mbcnt_lo_u32_b32 v28, -1, 0
  v_mov_b32 v29, 0xdead
  v_mov_b32_dpp v29, v0 row_shr:1 row_mask:0x1 bank_mask:0x5 bound_ctrl:1
  v_lshlrev_b32 v31, 2, v0
  v_xor_b32 v31, 12, v31
  ds_permute_b32 v30, v31, v0
  s_waitcnt lgkmcnt(0)
"""


def gfx11_expected():
    l = L32
    r = l & 15
    base = l & ~15
    perm16 = base + (15 - r)
    return [
        np.where(r >= 1, l - 1, OLD),
        np.where(r >= 1, l - 1, 0),
        (l & ~3) + (3 - (l & 3)),
        base + 15 - r,
        base + ((r - 4) & 15),
        np.where(r + 2 < 16, l + 2 + l, OLD),
        (l & ~7) + (7 - (l & 7)),
        base + 5,
        base + (r ^ 1),
        perm16,
        l ^ 16,
        31 - l,
        l ^ 16,
        (l & ~3) | ((l & 3) ^ 1),
        (l & 4) | 3,
        np.full(32, 5),
        np.full(32, 4),
        np.where(l == 3, 0x63, l),
        l,
        # row_mask 0x1 keeps row 0 only; bank_mask 0x5 keeps banks 0 and 2 (lanes 0-3, 8-11)
        np.where((l < 16) & (((r >> 2) == 0) | ((r >> 2) == 2)), np.where(r >= 1, l - 1, 0), OLD),
        l ^ 3,                                   # ds_permute: lane l sends to lane l ^ 3
    ]


GFX9_BODY = """
  v_mov_b32 v10, 0xdead
  v_mov_b32_dpp v10, v0 row_bcast:15 row_mask:0xa bank_mask:0xf
  v_mov_b32 v11, 0xdead
  v_mov_b32_dpp v11, v0 row_bcast:31 row_mask:0xc bank_mask:0xf
  v_mov_b32 v12, 0xdead
  v_mov_b32_dpp v12, v0 wave_shr:1 row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v13, v0 row_newbcast:3 row_mask:0xf bank_mask:0xf
  v_sub_u32 v30, 63, v0
  v_lshlrev_b32 v30, 2, v30
  ds_bpermute_b32 v14, v30, v0
  v_mbcnt_lo_u32_b32 v15, -1, 0
  v_mbcnt_hi_u32_b32 v15, -1, v15
  v_readlane_b32 s14, v0, 40
  v_mov_b32 v16, s14
  s_waitcnt lgkmcnt(0)
"""


def gfx9_expected():
    l = L64
    row = l >> 4
    return [
        np.where((row == 1) | (row == 3), (row * 16) - 1, OLD),
        np.where(row >= 2, 31, OLD),
        np.where(l >= 1, l - 1, OLD),
        (l & ~15) + 3,
        63 - l,
        l,
        np.full(64, 40),
    ]


class CrossLaneTest(emutest.EmuTest):

    def run_case(self, arch, body, expected):
        n = len(expected)
        co = asm.assemble(arch, {"x": (body, list(range(10, 10 + n)))})
        out = emutest.run_asm(arch, co, "x", n)
        for i, e in enumerate(expected):
            np.testing.assert_array_equal(out[i], np.asarray(e, np.uint32), err_msg="v%d" % (10 + i))

    def test_gfx1100(self):
        self.run_case("gfx1100", GFX11_BODY, gfx11_expected())

    def test_gfx942_wave64(self):
        self.run_case("gfx942", GFX9_BODY, gfx9_expected())


if __name__ == "__main__":
    emutest.main()
