// SALU: SOP1, SOP2, SOPK and SOPC. SCC is set as each instruction's description says; 64-bit
// forms read and write SGPR pairs.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "operands.h"

namespace emu {

static inline int32_t I(uint32_t x) { return int32_t(x); }
#define A0 sget(m, w, in, in.s[0])
#define A1 sget(m, w, in, in.s[1])
#define B0 sget64(m, w, in, in.s[0])
#define B1 sget64(m, w, in, in.s[1])
#define D32(v) sset(m, w, in, in.d[0], (v))
#define D64(v) sset64(m, w, in, in.d[0], (v))

// Two-source 32-bit ops. SCCX: how SCC is set (an expression of a, b, r, or `w.scc` to keep it).
#define S2(NAME, EXPR, SCCX) H(NAME) { uint32_t a = A0, b = A1; uint32_t r = uint32_t(EXPR); \
  w.scc = (SCCX); D32(r); }
#define S2_64(NAME, EXPR, SCCX) H(NAME) { uint64_t a = B0, b = B1; uint64_t r = (EXPR); \
  w.scc = (SCCX); D64(r); }
#define S2_64S(NAME, EXPR, SCCX) H(NAME) { uint64_t a = B0; uint32_t b = A1; uint64_t r = (EXPR); \
  w.scc = (SCCX); D64(r); }

S2(s_add_u32, uint64_t(a) + b, (uint64_t(a) + b) >> 32)
S2(s_sub_u32, a - b, b > a)
S2(s_add_i32, a + b, ((a ^ ~b) & (a ^ r)) >> 31)
S2(s_sub_i32, a - b, ((a ^ b) & (a ^ r)) >> 31)
S2(s_addc_u32, uint64_t(a) + b + w.scc, (uint64_t(a) + b + w.scc) >> 32)
S2(s_subb_u32, uint64_t(a) - b - w.scc, uint64_t(b) + w.scc > a)
S2(s_min_i32, std::min(I(a), I(b)), I(a) < I(b))
S2(s_min_u32, std::min(a, b), a < b)
S2(s_max_i32, std::max(I(a), I(b)), I(a) > I(b))
S2(s_max_u32, std::max(a, b), a > b)
S2(s_and_b32, a & b, r != 0)
S2(s_or_b32, a | b, r != 0)
S2(s_xor_b32, a ^ b, r != 0)
S2(s_andn2_b32, a & ~b, r != 0)
S2(s_orn2_b32, a | ~b, r != 0)
S2(s_nand_b32, ~(a & b), r != 0)
S2(s_nor_b32, ~(a | b), r != 0)
S2(s_xnor_b32, ~(a ^ b), r != 0)
S2(s_lshl_b32, a << (b & 31), r != 0)
S2(s_lshr_b32, a >> (b & 31), r != 0)
S2(s_ashr_i32, I(a) >> (b & 31), r != 0)
S2(s_bfm_b32, ((1u << (a & 31)) - 1) << (b & 31), w.scc)
S2(s_mul_i32, a * b, w.scc)
S2(s_mul_hi_u32, (uint64_t(a) * b) >> 32, w.scc)
S2(s_mul_hi_i32, uint64_t(int64_t(I(a)) * I(b)) >> 32, w.scc)
S2(s_bfe_u32, ((b >> 16) & 0x7f) ? (a >> (b & 31)) & (((b >> 16) & 0x7f) >= 32 ? ~0u : ((1u << ((b >> 16) & 0x7f)) - 1)) : 0, r != 0)
S2(s_bfe_i32, ((b >> 16) & 0x7f) ? uint32_t(I(a << (32 - std::min(32u, (b & 31) + ((b >> 16) & 0x7f)))) >> (32 - std::min(32u, ((b >> 16) & 0x7f)))) : 0, r != 0)
S2(s_absdiff_i32, I(a) > I(b) ? a - b : b - a, r != 0)
S2(s_lshl1_add_u32, (a << 1) + b, ((uint64_t(a) << 1) + b) >> 32)
S2(s_lshl2_add_u32, (a << 2) + b, ((uint64_t(a) << 2) + b) >> 32)
S2(s_lshl3_add_u32, (a << 3) + b, ((uint64_t(a) << 3) + b) >> 32)
S2(s_lshl4_add_u32, (a << 4) + b, ((uint64_t(a) << 4) + b) >> 32)
S2(s_pack_ll_b32_b16, (a & 0xffff) | (b << 16), w.scc)
S2(s_pack_lh_b32_b16, (a & 0xffff) | (b & 0xffff0000u), w.scc)
S2(s_pack_hl_b32_b16, (a >> 16) | (b << 16), w.scc)
S2(s_pack_hh_b32_b16, (a >> 16) | (b & 0xffff0000u), w.scc)
S2(s_cselect_b32, w.scc ? a : b, w.scc)

S2_64(s_and_b64, a & b, r != 0)
S2_64(s_or_b64, a | b, r != 0)
S2_64(s_xor_b64, a ^ b, r != 0)
S2_64(s_andn2_b64, a & ~b, r != 0)
S2_64(s_orn2_b64, a | ~b, r != 0)
S2_64(s_nand_b64, ~(a & b), r != 0)
S2_64(s_nor_b64, ~(a | b), r != 0)
S2_64(s_xnor_b64, ~(a ^ b), r != 0)
S2_64(s_cselect_b64, w.scc ? a : b, w.scc)
S2_64(s_add_nc_u64, a + b, w.scc)
S2_64(s_sub_nc_u64, a - b, w.scc)
S2_64(s_mul_u64, a * b, w.scc)
S2_64S(s_lshl_b64, a << (b & 63), r != 0)
S2_64S(s_lshr_b64, a >> (b & 63), r != 0)
S2_64S(s_ashr_i64, uint64_t(int64_t(a) >> (b & 63)), r != 0)
S2_64S(s_bfm_b64, ((a & 63) == 0 ? 0 : ((1ull << (a & 63)) - 1)) << (b & 63), w.scc)
H(s_bfe_u64) {
  uint64_t a = B0; uint32_t b = A1, off = b & 63, wd = (b >> 16) & 0x7f;
  uint64_t r = wd ? (a >> off) & (wd >= 64 ? ~0ull : ((1ull << wd) - 1)) : 0;
  w.scc = r != 0; D64(r);
}
H(s_bfe_i64) {
  uint64_t a = B0; uint32_t b = A1, off = b & 63, wd = (b >> 16) & 0x7f;
  int64_t r = 0;
  if (wd) { uint32_t top = std::min(64u, off + wd); r = int64_t(a << (64 - top)) >> (64 - std::min(64u, wd)); }
  w.scc = r != 0; D64(uint64_t(r));
}

// ---- SOP1 ----
H(s_mov_b32) { D32(A0); }
H(s_mov_b64) { D64(B0); }
H(s_cmov_b32) { uint32_t a = A0; if (w.scc) D32(a); }
H(s_cmov_b64) { uint64_t a = B0; if (w.scc) D64(a); }
H(s_not_b32) { uint32_t r = ~A0; w.scc = r != 0; D32(r); }
H(s_not_b64) { uint64_t r = ~B0; w.scc = r != 0; D64(r); }
H(s_brev_b32) { D32(bitrev32(A0)); }
H(s_brev_b64) { D64(bitrev64(B0)); }
H(s_bcnt0_i32_b32) { uint32_t r = 32 - __builtin_popcount(A0); w.scc = r != 0; D32(r); }
H(s_bcnt1_i32_b32) { uint32_t r = __builtin_popcount(A0); w.scc = r != 0; D32(r); }
H(s_bcnt0_i32_b64) { uint32_t r = 64 - __builtin_popcountll(B0); w.scc = r != 0; D32(r); }
H(s_bcnt1_i32_b64) { uint32_t r = __builtin_popcountll(B0); w.scc = r != 0; D32(r); }
H(s_ff0_i32_b32) { uint32_t a = ~A0; D32(a ? __builtin_ctz(a) : ~0u); }
H(s_ff1_i32_b32) { uint32_t a = A0; D32(a ? __builtin_ctz(a) : ~0u); }
H(s_ff0_i32_b64) { uint64_t a = ~B0; D32(a ? __builtin_ctzll(a) : ~0u); }
H(s_ff1_i32_b64) { uint64_t a = B0; D32(a ? __builtin_ctzll(a) : ~0u); }
H(s_flbit_i32_b32) { uint32_t a = A0; D32(a ? __builtin_clz(a) : ~0u); }
H(s_flbit_i32_b64) { uint64_t a = B0; D32(a ? __builtin_clzll(a) : ~0u); }
H(s_flbit_i32) {
  int32_t a = I(A0);
  D32((a == 0 || a == -1) ? ~0u : uint32_t(a < 0 ? __builtin_clz(~uint32_t(a)) : __builtin_clz(uint32_t(a))));
}
H(s_sext_i32_i8) { D32(uint32_t(int32_t(int8_t(A0)))); }
H(s_sext_i32_i16) { D32(uint32_t(int32_t(int16_t(A0)))); }
H(s_bitset0_b32) { uint32_t b = A0; if (w.npend) check_sread(m, w, in, in.d[0].reg, 1); w.s[in.d[0].reg] &= ~(1u << (b & 31)); }
H(s_bitset1_b32) { uint32_t b = A0; if (w.npend) check_sread(m, w, in, in.d[0].reg, 1); w.s[in.d[0].reg] |= 1u << (b & 31); }
H(s_abs_i32) { int32_t a = I(A0); uint32_t r = a < 0 ? uint32_t(-int64_t(a)) : uint32_t(a); w.scc = r != 0; D32(r); }
H(s_wqm_b32) {
  uint32_t a = A0, r = 0;
  for (int q = 0; q < 8; ++q) if ((a >> (4 * q)) & 15) r |= 15u << (4 * q);
  w.scc = r != 0; D32(r);
}
H(s_wqm_b64) {
  uint64_t a = B0, r = 0;
  for (int q = 0; q < 16; ++q) if ((a >> (4 * q)) & 15) r |= 15ull << (4 * q);
  w.scc = r != 0; D64(r);
}
H(s_quadmask_b32) { uint32_t a = A0, r = 0; for (int q = 0; q < 8; ++q) if ((a >> (4 * q)) & 15) r |= 1u << q; w.scc = r != 0; D32(r); }
H(s_quadmask_b64) { uint64_t a = B0, r = 0; for (int q = 0; q < 16; ++q) if ((a >> (4 * q)) & 15) r |= 1ull << q; w.scc = r != 0; D64(r); }

// saveexec: D = EXEC; EXEC = op(S0, EXEC); SCC = EXEC != 0. Lane masks are 32 or 64 bits.
template <int OP>
static void saveexec(Machine& m, Wave& w, const Inst& in) {
  uint64_t s = mget(m, w, in, in.s[0]), e = w.exec(), r = 0;
  switch (OP) {
    case 0: r = s & e; break;        // and
    case 1: r = s | e; break;        // or
    case 2: r = s ^ e; break;        // xor
    case 3: r = ~s & e; break;       // andn1 / and_not0
    case 4: r = ~s | e; break;       // orn1 / or_not0
    case 5: r = ~(s & e); break;     // nand
    case 6: r = ~(s | e); break;     // nor
    case 7: r = ~(s ^ e); break;     // xnor
    case 8: r = s & ~e; break;       // andn2 / and_not1
    case 9: r = s | ~e; break;       // orn2 / or_not1
  }
  r &= w.full;
  if (in.nd) mset(m, w, in, in.d[0], e);
  w.set_exec(r);
  w.scc = r != 0;
}
// *_wrexec (andn1/andn2 without saving): EXEC = op(S0, EXEC); D = EXEC.
template <int OP>
static void wrexec(Machine& m, Wave& w, const Inst& in) {
  uint64_t s = mget(m, w, in, in.s[0]), e = w.exec();
  uint64_t r = (OP == 0 ? (~s & e) : (s & ~e)) & w.full;
  w.set_exec(r);
  mset(m, w, in, in.d[0], r);
  w.scc = r != 0;
}

// ---- SOPK: a 16-bit immediate in s[1] (or s[0] for movk) ----
static inline int32_t simm16(const Opnd& o) { return int32_t(int16_t(uint16_t(o.imm32))); }
H(s_movk_i32) { D32(uint32_t(simm16(in.s[0]))); }
H(s_cmovk_i32) { if (w.scc) D32(uint32_t(simm16(in.s[0]))); }
H(s_addk_i32) {
  uint32_t a = sget(m, w, in, in.d[0]), b = uint32_t(simm16(in.s[0])), r = a + b;
  w.scc = ((a ^ ~b) & (a ^ r)) >> 31; D32(r);
}
H(s_mulk_i32) { uint32_t a = sget(m, w, in, in.d[0]); D32(a * uint32_t(simm16(in.s[0]))); }
template <int C, bool U>
static void cmpk(Machine& m, Wave& w, const Inst& in) {
  uint32_t a = A0;
  uint32_t k16 = in.s[1].imm32 & 0xffff;
  int64_t x = U ? int64_t(a) : int64_t(I(a)), y = U ? int64_t(k16) : int64_t(int16_t(k16));
  bool r = C == 0 ? x == y : C == 1 ? x != y : C == 2 ? x > y : C == 3 ? x >= y : C == 4 ? x < y : x <= y;
  w.scc = r;
}
// ---- SOPC ----
template <int C, int T>   // T: 0 i32, 1 u32, 2 u64
static void cmp(Machine& m, Wave& w, const Inst& in) {
  int64_t x, y;
  uint64_t ux = 0, uy = 0;
  if (T == 2) { ux = B0; uy = B1; x = 0; y = 0; }
  else { uint32_t a = A0, b = A1; x = T == 0 ? int64_t(I(a)) : int64_t(a); y = T == 0 ? int64_t(I(b)) : int64_t(b); }
  if (T == 2) w.scc = C == 0 ? ux == uy : ux != uy;
  else w.scc = C == 0 ? x == y : C == 1 ? x != y : C == 2 ? x > y : C == 3 ? x >= y : C == 4 ? x < y : x <= y;
}
H(s_bitcmp0_b32) { w.scc = !((A0 >> (A1 & 31)) & 1); }
H(s_bitcmp1_b32) { w.scc = (A0 >> (A1 & 31)) & 1; }
H(s_bitcmp0_b64) { w.scc = !((B0 >> (A1 & 63)) & 1); }
H(s_bitcmp1_b64) { w.scc = (B0 >> (A1 & 63)) & 1; }

// ---- gfx12 SALU float: IEEE round to nearest even, the f32 denormal mode of the kernel
// descriptor as the VALU applies it; f16 forms read the low half of an SGPR (s_cvt_hi_f32_f16:
// the high half) and write the result zero-extended. ----
static inline float sf32(const Machine& m, uint32_t x) {
  if (m.ftz32_in && !(x & 0x7f800000u)) x &= 0x80000000u;
  return bf(x);
}
static inline float sf16(uint32_t x) { return h2f(uint16_t(x)); }
// An f16 source: a constant is its f16 encoding (inline 0.5 is 0x3800, not f32 0.5's low half).
static inline uint32_t h16(Machine& m, Wave& w, const Inst& in, const Opnd& o) {
  return o.kind == K_INL || o.kind == K_LIT ? o.imm16 : sget(m, w, in, o);
}
#define A0H h16(m, w, in, in.s[0])
#define A1H h16(m, w, in, in.s[1])
#define SF2(NAME, EXPR) H(NAME) { float a = sf32(m, A0), b = sf32(m, A1); D32(fo(m, (EXPR))); }
#define SF1(NAME, EXPR) H(NAME) { [[maybe_unused]] float a = sf32(m, A0); D32(EXPR); }
#define SH2(NAME, EXPR) H(NAME) { float a = sf16(A0H), b = sf16(A1H); D32(f2h(EXPR)); }
#define SH1(NAME, EXPR) H(NAME) { [[maybe_unused]] uint32_t x = A0H; [[maybe_unused]] float a = sf16(x); D32(EXPR); }
SF2(s_add_f32, a + b)
SF2(s_sub_f32, a - b)
SF2(s_mul_f32, a * b)
SF2(s_max_num_f32, std::fmax(a, b))
SF2(s_min_num_f32, std::fmin(a, b))
SF2(s_maximum_f32, fmaximum(a, b))
SF2(s_minimum_f32, fminimum(a, b))
SH2(s_add_f16, a + b)
SH2(s_sub_f16, a - b)
SH2(s_mul_f16, a * b)
SH2(s_max_num_f16, std::fmax(a, b))
SH2(s_min_num_f16, std::fmin(a, b))
SH2(s_maximum_f16, fmaximum(a, b))
SH2(s_minimum_f16, fminimum(a, b))
// D = S0 * S1 + S2: s_fmaak_f32 (the literal last) and s_fmamk_f32 (the literal second) decode
// to three sources in that order; s_fmac_* accumulate into D.
H(s_fma_f32) {
  float a = sf32(m, A0), b = sf32(m, A1), c = sf32(m, sget(m, w, in, in.s[2]));
  D32(fo(m, std::fma(a, b, c)));
}
H(s_fmac_f32) {
  float a = sf32(m, A0), b = sf32(m, A1), c = sf32(m, sget(m, w, in, in.d[0]));
  D32(fo(m, std::fma(a, b, c)));
}
H(s_fmac_f16) {
  float a = sf16(A0H), b = sf16(A1H), c = sf16(sget(m, w, in, in.d[0]));
  D32(f2h(fmah(a, b, c)));
}
SF1(s_cvt_f32_i32, fo(m, float(I(A0))))
SF1(s_cvt_f32_u32, fo(m, float(A0)))
SF1(s_cvt_i32_f32, uint32_t(cvt_i32(a)))
SF1(s_cvt_u32_f32, cvt_u32(a))
SF1(s_cvt_f16_f32, f2h(a))
SF1(s_ceil_f32, fo(m, std::ceil(a)))
SF1(s_floor_f32, fo(m, std::floor(a)))
SF1(s_trunc_f32, fo(m, std::trunc(a)))
SF1(s_rndne_f32, fo(m, std::nearbyint(a)))
SH1(s_cvt_f32_f16, fo(m, a))
SH1(s_cvt_hi_f32_f16, fo(m, sf16(x >> 16)))
SH1(s_ceil_f16, f2h(std::ceil(a)))
SH1(s_floor_f16, f2h(std::floor(a)))
SH1(s_trunc_f16, f2h(std::trunc(a)))
SH1(s_rndne_f16, f2h(std::nearbyint(a)))
H(s_cvt_pk_rtz_f16_f32) {
  float a = sf32(m, A0), b = sf32(m, A1);
  D32(f2h_rtz(a) | (uint32_t(f2h_rtz(b)) << 16));
}
// C: lt eq le gt lg ge o u, then the negations nge nlg ngt nle neq nlt (true when unordered).
template <int C, bool F16> static void cmpf(Machine& m, Wave& w, const Inst& in) {
  float a = F16 ? sf16(A0H) : sf32(m, A0), b = F16 ? sf16(A1H) : sf32(m, A1);
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (C) {
    case 0: w.scc = a < b; break;
    case 1: w.scc = a == b; break;
    case 2: w.scc = a <= b; break;
    case 3: w.scc = a > b; break;
    case 4: w.scc = !unordered && a != b; break;
    case 5: w.scc = a >= b; break;
    case 6: w.scc = !unordered; break;
    case 7: w.scc = unordered; break;
    case 8: w.scc = !(a >= b); break;
    case 9: w.scc = unordered || a == b; break;
    case 10: w.scc = !(a > b); break;
    case 11: w.scc = !(a <= b); break;
    case 12: w.scc = !(a == b); break;
    default: w.scc = !(a < b); break;
  }
}
#undef SF1
#undef SF2
#undef SH1
#undef SH2
#undef A0H
#undef A1H

void register_salu(Registry& r) {
#define R(name) r.add(#name, name);
  R(s_add_u32) R(s_sub_u32) R(s_add_i32) R(s_sub_i32) R(s_addc_u32) R(s_subb_u32) R(s_min_i32)
  R(s_min_u32) R(s_max_i32) R(s_max_u32) R(s_and_b32) R(s_or_b32) R(s_xor_b32) R(s_andn2_b32)
  R(s_orn2_b32) R(s_nand_b32) R(s_nor_b32) R(s_xnor_b32) R(s_lshl_b32) R(s_lshr_b32) R(s_ashr_i32)
  R(s_bfm_b32) R(s_mul_i32) R(s_mul_hi_u32) R(s_mul_hi_i32) R(s_bfe_u32) R(s_bfe_i32) R(s_absdiff_i32)
  R(s_lshl1_add_u32) R(s_lshl2_add_u32) R(s_lshl3_add_u32) R(s_lshl4_add_u32) R(s_pack_ll_b32_b16)
  R(s_pack_lh_b32_b16) R(s_pack_hl_b32_b16) R(s_pack_hh_b32_b16) R(s_cselect_b32)
  R(s_and_b64) R(s_or_b64) R(s_xor_b64) R(s_andn2_b64) R(s_orn2_b64) R(s_nand_b64) R(s_nor_b64)
  R(s_xnor_b64) R(s_cselect_b64) R(s_add_nc_u64) R(s_sub_nc_u64) R(s_mul_u64) R(s_lshl_b64)
  R(s_lshr_b64) R(s_ashr_i64) R(s_bfm_b64) R(s_bfe_u64) R(s_bfe_i64)
  R(s_mov_b32) R(s_mov_b64) R(s_cmov_b32) R(s_cmov_b64) R(s_not_b32) R(s_not_b64) R(s_brev_b32)
  R(s_brev_b64) R(s_bcnt0_i32_b32) R(s_bcnt1_i32_b32) R(s_bcnt0_i32_b64) R(s_bcnt1_i32_b64)
  R(s_ff0_i32_b32) R(s_ff1_i32_b32) R(s_ff0_i32_b64) R(s_ff1_i32_b64) R(s_flbit_i32_b32)
  R(s_flbit_i32_b64) R(s_flbit_i32) R(s_sext_i32_i8) R(s_sext_i32_i16) R(s_bitset0_b32)
  R(s_bitset1_b32) R(s_abs_i32) R(s_wqm_b32) R(s_wqm_b64) R(s_quadmask_b32) R(s_quadmask_b64)
  R(s_movk_i32) R(s_cmovk_i32) R(s_addk_i32) R(s_mulk_i32)
  R(s_bitcmp0_b32) R(s_bitcmp1_b32) R(s_bitcmp0_b64) R(s_bitcmp1_b64)
#undef R
  const char* ops[] = {"and", "or", "xor", "andn1", "orn1", "nand", "nor", "xnor", "andn2", "orn2"};
  Handler s32[] = {saveexec<0>, saveexec<1>, saveexec<2>, saveexec<3>, saveexec<4>, saveexec<5>,
                   saveexec<6>, saveexec<7>, saveexec<8>, saveexec<9>};
  for (int i = 0; i < 10; ++i) {
    r.add((std::string("s_") + ops[i] + "_saveexec_b32").c_str(), s32[i]);
    r.add((std::string("s_") + ops[i] + "_saveexec_b64").c_str(), s32[i]);
  }
  r.add("s_andn1_wrexec_b32", wrexec<0>); r.add("s_andn1_wrexec_b64", wrexec<0>);
  r.add("s_andn2_wrexec_b32", wrexec<1>); r.add("s_andn2_wrexec_b64", wrexec<1>);
  const char* cn[] = {"eq", "lg", "gt", "ge", "lt", "le"};
  Handler ci[] = {cmp<0, 0>, cmp<1, 0>, cmp<2, 0>, cmp<3, 0>, cmp<4, 0>, cmp<5, 0>};
  Handler cu[] = {cmp<0, 1>, cmp<1, 1>, cmp<2, 1>, cmp<3, 1>, cmp<4, 1>, cmp<5, 1>};
  Handler ki[] = {cmpk<0, false>, cmpk<1, false>, cmpk<2, false>, cmpk<3, false>, cmpk<4, false>, cmpk<5, false>};
  Handler ku[] = {cmpk<0, true>, cmpk<1, true>, cmpk<2, true>, cmpk<3, true>, cmpk<4, true>, cmpk<5, true>};
  for (int i = 0; i < 6; ++i) {
    r.add((std::string("s_cmp_") + cn[i] + "_i32").c_str(), ci[i]);
    r.add((std::string("s_cmp_") + cn[i] + "_u32").c_str(), cu[i]);
    r.add((std::string("s_cmpk_") + cn[i] + "_i32").c_str(), ki[i]);
    r.add((std::string("s_cmpk_") + cn[i] + "_u32").c_str(), ku[i]);
  }
#define R(name) r.add(#name, name);
  R(s_add_f32) R(s_sub_f32) R(s_mul_f32) R(s_max_num_f32) R(s_min_num_f32) R(s_maximum_f32)
  R(s_minimum_f32) R(s_add_f16) R(s_sub_f16) R(s_mul_f16) R(s_max_num_f16) R(s_min_num_f16)
  R(s_maximum_f16) R(s_minimum_f16) R(s_fmac_f32) R(s_fmac_f16) R(s_cvt_f32_i32) R(s_cvt_f32_u32)
  R(s_cvt_i32_f32) R(s_cvt_u32_f32) R(s_cvt_f16_f32) R(s_cvt_f32_f16) R(s_cvt_hi_f32_f16)
  R(s_cvt_pk_rtz_f16_f32) R(s_ceil_f32) R(s_floor_f32) R(s_trunc_f32) R(s_rndne_f32) R(s_ceil_f16)
  R(s_floor_f16) R(s_trunc_f16) R(s_rndne_f16)
#undef R
  r.add("s_fmaak_f32", s_fma_f32);
  r.add("s_fmamk_f32", s_fma_f32);
  const char* fcn[] = {"lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt"};
  Handler f32c[] = {cmpf<0, false>, cmpf<1, false>, cmpf<2, false>, cmpf<3, false>, cmpf<4, false>,
                    cmpf<5, false>, cmpf<6, false>, cmpf<7, false>, cmpf<8, false>, cmpf<9, false>,
                    cmpf<10, false>, cmpf<11, false>, cmpf<12, false>, cmpf<13, false>};
  Handler f16c[] = {cmpf<0, true>, cmpf<1, true>, cmpf<2, true>, cmpf<3, true>, cmpf<4, true>,
                    cmpf<5, true>, cmpf<6, true>, cmpf<7, true>, cmpf<8, true>, cmpf<9, true>,
                    cmpf<10, true>, cmpf<11, true>, cmpf<12, true>, cmpf<13, true>};
  for (int i = 0; i < 14; ++i) {
    r.add((std::string("s_cmp_") + fcn[i] + "_f32").c_str(), f32c[i]);
    r.add((std::string("s_cmp_") + fcn[i] + "_f16").c_str(), f16c[i]);
  }
  r.add("s_cmp_eq_u64", cmp<0, 2>);
  r.add("s_cmp_lg_u64", cmp<1, 2>);
}

}  // namespace emu
