// Per-lane operand access: DPP and SDWA source selection, hazard checks on the registers read
// and written, and the masked writes of 16-, 32- and 64-bit results.
#include "operands.h"

namespace emu {

// The source lane DPP makes lane `l` read, or -1 when it reads from outside its row or wave.
static int dpp_lane(const Inst& in, int l, int wsize) {
  int row = l & ~15, r = l & 15, n = int(in.dpp_val);
  switch (in.dpp_kind) {
    case D_QUAD: return (l & ~3) | ((in.dpp_val >> (2 * (l & 3))) & 3);
    case D_ROW_SHL: return r + n < 16 ? l + n : -1;
    case D_ROW_SHR: return r - n >= 0 ? l - n : -1;
    case D_ROW_ROR: return row | ((r - n) & 15);
    case D_WAVE_SHL: return l + 1 < wsize ? l + 1 : -1;
    case D_WAVE_SHR: return l - 1;
    case D_WAVE_ROL: return (l + 1) % wsize;
    case D_WAVE_ROR: return (l + wsize - 1) % wsize;
    case D_ROW_MIRROR: return row | (15 - r);
    case D_ROW_HALF_MIRROR: return (l & ~7) | (7 - (l & 7));
    case D_BCAST15: return row > 0 ? row - 1 : -1;
    case D_BCAST31: return l >= 32 ? 31 : -1;
    case D_ROW_SHARE: case D_ROW_NEWBCAST: return row | (n & 15);
    case D_ROW_XMASK: return row | ((r ^ n) & 15);
  }
  return -1;
}

static void dpp_fetch(Wave& w, const Inst& in, const uint32_t* src, uint32_t* out) {
  uint64_t ex = w.exec(), dis = 0;
  int n = w.wsize;
  bool fi = in.flags & F_DPP_FI;
  if (in.flags & F_DPP8) {
    for (int l = 0; l < n; ++l) {
      int s = (l & ~7) | ((in.dpp_val >> (3 * (l & 7))) & 7);
      out[l] = (fi || ((ex >> s) & 1)) ? src[s] : 0;
    }
    w.dpp_mask = ~0ull;
    return;
  }
  bool bc = in.flags & F_DPP_BC;
  for (int l = 0; l < n; ++l) {
    int s = dpp_lane(in, l, n);
    bool valid = s >= 0 && s < n && (fi || ((ex >> s) & 1));
    if (valid) out[l] = src[s];
    else if (bc) out[l] = 0;
    else { out[l] = 0; dis |= 1ull << l; }
    if (!((in.row_mask >> (l >> 4)) & 1) || !((in.bank_mask >> ((l & 15) >> 2)) & 1)) dis |= 1ull << l;
  }
  w.dpp_mask = ~dis;
}

// SDWA source select: BYTE_0..3 = 0..3, WORD_0/1 = 4/5, DWORD = 6.
static inline uint32_t sdwa_sel(uint32_t x, int sel, bool sext) {
  if (sel <= 3) { uint32_t b = (x >> (8 * sel)) & 0xff; return sext ? uint32_t(int32_t(int8_t(b))) : b; }
  if (sel <= 5) { uint32_t h = (x >> (16 * (sel - 4))) & 0xffff; return sext ? uint32_t(int32_t(int16_t(h))) : h; }
  return x;
}

void fetch32(Machine& m, Wave& w, const Inst& in, int i, uint32_t* out) {
  const Opnd& o = in.s[i];
  int n = w.wsize;
  if (o.kind == K_VGPR) {
    if (w.npend) check_vread(m, w, in, o.reg, 1);
    const uint32_t* src = w.vr(o.reg);
    if (i == 0 && (in.flags & (F_DPP | F_DPP8))) dpp_fetch(w, in, src, out);
    else std::memcpy(out, src, size_t(n) * 4);
    if ((in.flags & F_SDWA) && i < 2 && (in.sdwa_src_sel[i] != 6 || (o.mods & M_SEXT)))
      for (int l = 0; l < n; ++l) out[l] = sdwa_sel(out[l], in.sdwa_src_sel[i], o.mods & M_SEXT);
    return;
  }
  uint32_t c;
  if (o.kind == K_SGPR) {
    c = sget(m, w, in, o);
    if ((in.flags & F_SDWA) && i < 2) c = sdwa_sel(c, in.sdwa_src_sel[i], o.mods & M_SEXT);
  } else {
    c = sget(m, w, in, o);
  }
  for (int l = 0; l < n; ++l) out[l] = c;
}

void fetch64(Machine& m, Wave& w, const Inst& in, int i, uint64_t* out, char type) {
  const Opnd& o = in.s[i];
  int n = w.wsize;
  if (o.kind == K_VGPR) {
    if (w.npend) check_vread(m, w, in, o.reg, 2);
    const uint32_t* lo = w.vr(o.reg);
    const uint32_t* hi = w.vr(o.reg + 1);
    if (i == 0 && (in.flags & (F_DPP | F_DPP8))) {
      uint32_t a[LANES], b[LANES];
      dpp_fetch(w, in, lo, a);
      uint64_t keep = w.dpp_mask;
      dpp_fetch(w, in, hi, b);
      w.dpp_mask = keep;
      for (int l = 0; l < n; ++l) out[l] = a[l] | (uint64_t(b[l]) << 32);
      return;
    }
    for (int l = 0; l < n; ++l) out[l] = lo[l] | (uint64_t(hi[l]) << 32);
    return;
  }
  uint64_t c;
  if (o.kind == K_LIT) {
    c = type == 'f' ? uint64_t(o.imm32) << 32 : type == 'i' ? uint64_t(int64_t(int32_t(o.imm32))) : o.imm32;
  } else {
    c = sget64(m, w, in, o);
  }
  for (int l = 0; l < n; ++l) out[l] = c;
}

static inline void vwrite_check(Machine& m, Wave& w, const Inst& in, int reg, int n) {
  if (w.npend) check_vread(m, w, in, reg, n);
}

void write32_reg(Machine& m, Wave& w, const Inst& in, int reg, const uint32_t* r, uint64_t mask) {
  vwrite_check(m, w, in, reg, 1);
  uint32_t* d = w.vr(reg);
  int n = w.wsize;
  if (mask == w.full) { std::memcpy(d, r, size_t(n) * 4); return; }
  for (int l = 0; l < n; ++l) if ((mask >> l) & 1) d[l] = r[l];
}

void write32(Machine& m, Wave& w, const Inst& in, const uint32_t* r) {
  const Opnd& o = in.d[0];
  if (o.kind != K_VGPR) m.fail(w, in, "destination is not a vector register");
  uint64_t mask = wmask(w, in);
  if (in.flags & F_SDWA && (in.sdwa_dst_sel != 6)) {
    vwrite_check(m, w, in, o.reg, 1);
    uint32_t* d = w.vr(o.reg);
    int sel = in.sdwa_dst_sel;
    int sh = sel <= 3 ? 8 * sel : 16 * (sel - 4);
    uint32_t fm = (sel <= 3 ? 0xffu : 0xffffu) << sh;
    int width = sel <= 3 ? 8 : 16;
    for (int l = 0; l < w.wsize; ++l) {
      if (!((mask >> l) & 1)) continue;
      uint32_t v = (r[l] << sh) & fm;
      if (in.sdwa_dst_unused == 2) {                       // UNUSED_PRESERVE
        v |= d[l] & ~fm;
      } else if (in.sdwa_dst_unused == 1 && ((r[l] >> (width - 1)) & 1)) {   // UNUSED_SEXT
        if (sh + width < 32) v |= ~0u << (sh + width);
      }
      d[l] = v;
    }
    return;
  }
  write32_reg(m, w, in, o.reg, r, mask);
}

void write16(Machine& m, Wave& w, const Inst& in, const uint32_t* r) {
  const Opnd& o = in.d[0];
  if (o.kind != K_VGPR) m.fail(w, in, "destination is not a vector register");
  vwrite_check(m, w, in, o.reg, 1);
  uint64_t mask = wmask(w, in);
  uint32_t* d = w.vr(o.reg);
  bool hi = (o.mods & M_HI) || ((in.opsel >> 3) & 1);
  if (in.flags & F_SDWA) { write32(m, w, in, r); return; }
  bool zero_hi = is_gfx9(m.family) && !hi;
  for (int l = 0; l < w.wsize; ++l) {
    if (!((mask >> l) & 1)) continue;
    uint32_t v = r[l] & 0xffff;
    if (hi) d[l] = (d[l] & 0xffff) | (v << 16);
    else d[l] = zero_hi ? v : ((d[l] & 0xffff0000u) | v);
  }
}

void write64(Machine& m, Wave& w, const Inst& in, const uint64_t* r) {
  const Opnd& o = in.d[0];
  if (o.kind != K_VGPR) m.fail(w, in, "destination is not a vector register");
  vwrite_check(m, w, in, o.reg, 2);
  uint64_t mask = wmask(w, in);
  uint32_t* lo = w.vr(o.reg);
  uint32_t* hi = w.vr(o.reg + 1);
  for (int l = 0; l < w.wsize; ++l)
    if ((mask >> l) & 1) { lo[l] = uint32_t(r[l]); hi[l] = uint32_t(r[l] >> 32); }
}

}  // namespace emu
