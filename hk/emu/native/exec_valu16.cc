// VALU: 16-bit float operations (true16 halves and op_sel), packed VOP3P float math,
// mixed-precision FMA, dot products, and the conversions between f32, f16, bf16, fp8 and the
// integers. The 16-bit integer operations are in exec_int16.cc.
#include <algorithm>
#include <cmath>

#include "operands.h"

namespace emu {

#define LOOP for (int l = 0; l < w.wsize; ++l)
static inline float H2F(uint32_t x) { return h2f(uint16_t(x)); }

// f16 ops: a, b, c are floats converted from f16 with modifiers; EXPR is float, rounded once.
#define VH1(NAME, EXPR) H(NAME) { uint32_t A[LANES], R[LANES]; fetch16(m, w, in, 0, A, true); \
  LOOP { [[maybe_unused]] float a = H2F(A[l]); R[l] = f2h(fpost(in, (EXPR))); } write16(m, w, in, R); }
#define VH2(NAME, EXPR) H(NAME) { uint32_t A[LANES], B[LANES], R[LANES]; fetch16(m, w, in, 0, A, true); \
  fetch16(m, w, in, 1, B, true); LOOP { [[maybe_unused]] float a = H2F(A[l]), b = H2F(B[l]); R[l] = f2h(fpost(in, (EXPR))); } \
  write16(m, w, in, R); }
#define VH3(NAME, EXPR) H(NAME) { uint32_t A[LANES], B[LANES], C[LANES], R[LANES]; \
  fetch16(m, w, in, 0, A, true); fetch16(m, w, in, 1, B, true); fetch16(m, w, in, 2, C, true); \
  LOOP { float a = H2F(A[l]), b = H2F(B[l]), c = H2F(C[l]); R[l] = f2h(fpost(in, (EXPR))); } write16(m, w, in, R); }

static inline int16_t S16(uint32_t x) { return int16_t(uint16_t(x)); }
static inline float med3(float a, float b, float c) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c)) return std::fmin(std::fmin(a, b), c);
  return std::fmax(std::fmin(a, b), std::fmin(std::fmax(a, b), c));
}

VH2(v_add_f16, a + b)
VH2(v_sub_f16, a - b)
VH2(v_subrev_f16, b - a)
VH2(v_mul_f16, a * b)
VH2(v_max_f16, std::fmax(a, b))
VH2(v_min_f16, std::fmin(a, b))
VH2(v_ldexp_f16, std::ldexp(a, std::max(-64, std::min(64, int(S16(B[l]))))))
VH3(v_fma_f16, fmah(a, b, c))
VH3(v_max3_f16, std::fmax(std::fmax(a, b), c))
VH3(v_min3_f16, std::fmin(std::fmin(a, b), c))
VH3(v_med3_f16, med3(a, b, c))
VH3(v_maxmin_f16, std::fmin(std::fmax(a, b), c))
VH3(v_minmax_f16, std::fmax(std::fmin(a, b), c))
VH1(v_exp_f16, std::exp2(a))
VH1(v_log_f16, std::log2(a))
VH1(v_rcp_f16, 1.0f / a)
VH1(v_rsq_f16, 1.0f / std::sqrt(a))
VH1(v_sqrt_f16, std::sqrt(a))
VH1(v_sin_f16, float(std::sin(double(a) * 2.0 * M_PI)))
VH1(v_cos_f16, float(std::cos(double(a) * 2.0 * M_PI)))
VH1(v_floor_f16, std::floor(a))
VH1(v_ceil_f16, std::ceil(a))
VH1(v_trunc_f16, std::trunc(a))
VH1(v_rndne_f16, std::nearbyint(a))
VH1(v_fract_f16, std::isinf(a) ? NAN : std::fmin(a - std::floor(a), 0x1.ffcp-1f))
VH1(v_cvt_f16_i16, float(S16(A[l])))
VH1(v_cvt_f16_u16, float(A[l] & 0xffff))
H(v_fmac_f16) {
  uint32_t A[LANES], B[LANES], R[LANES];
  fetch16(m, w, in, 0, A, true); fetch16(m, w, in, 1, B, true);
  const uint32_t* D = w.vr(in.d[0].reg);
  bool hi = (in.d[0].mods & M_HI) || ((in.opsel >> 3) & 1);
  LOOP R[l] = f2h(fpost(in, fmah(H2F(A[l]), H2F(B[l]), H2F(hi ? D[l] >> 16 : D[l]))));
  write16(m, w, in, R);
}

static inline int32_t sat_i16(float f) { return std::isnan(f) ? 0 : int32_t(std::max(-32768.0f, std::min(32767.0f, std::trunc(f)))); }
static inline int32_t sat_u16(float f) { return std::isnan(f) ? 0 : int32_t(std::max(0.0f, std::min(65535.0f, std::trunc(f)))); }
H(v_cvt_i16_f16) { uint32_t A[LANES], R[LANES]; fetch16(m, w, in, 0, A, true); LOOP R[l] = uint32_t(sat_i16(H2F(A[l]))); write16(m, w, in, R); }
H(v_cvt_u16_f16) { uint32_t A[LANES], R[LANES]; fetch16(m, w, in, 0, A, true); LOOP R[l] = uint32_t(sat_u16(H2F(A[l]))); write16(m, w, in, R); }
H(v_cvt_f16_f32) { uint32_t A[LANES], R[LANES]; f32src(m, w, in, 0, A); LOOP R[l] = f2h(fpost(in, bf(A[l]))); write16(m, w, in, R); }
H(v_cvt_f32_f16) { uint32_t A[LANES], R[LANES]; fetch16(m, w, in, 0, A, true); LOOP R[l] = fo(m, fpost(in, H2F(A[l]))); write32(m, w, in, R); }
H(v_cvt_f32_bf16) {
  uint32_t A[LANES], R[LANES]; fetch16(m, w, in, 0, A, true);
  LOOP R[l] = fo(m, fpost(in, bf2f(uint16_t(A[l]))));
  write32(m, w, in, R);
}
H(v_cvt_pkrtz_f16_f32) {
  uint32_t A[LANES], B[LANES], R[LANES];
  f32src(m, w, in, 0, A); f32src(m, w, in, 1, B);
  LOOP R[l] = f2h_rtz(bf(A[l])) | (uint32_t(f2h_rtz(bf(B[l]))) << 16);
  write32(m, w, in, R);
}
H(v_cvt_pk_f16_f32) {
  uint32_t A[LANES], B[LANES], R[LANES];
  f32src(m, w, in, 0, A); f32src(m, w, in, 1, B);
  LOOP R[l] = f2h(fpost(in, bf(A[l]))) | (uint32_t(f2h(fpost(in, bf(B[l])))) << 16);
  write32(m, w, in, R);
}
// 16 to 32 bits: the source half (vN.h or op_sel) zero- or sign-extended into the whole VGPR.
H(v_cvt_u32_u16) { uint32_t A[LANES]; fetch16(m, w, in, 0, A, false); write32(m, w, in, A); }
H(v_cvt_i32_i16) {
  uint32_t A[LANES];
  fetch16(m, w, in, 0, A, false);
  LOOP A[l] = uint32_t(int32_t(S16(A[l])));
  write32(m, w, in, A);
}
H(v_cvt_pk_bf16_f32) {
  uint32_t A[LANES], B[LANES], R[LANES];
  f32src(m, w, in, 0, A); f32src(m, w, in, 1, B);
  LOOP R[l] = f2bf(bf(A[l])) | (uint32_t(f2bf(bf(B[l]))) << 16);
  write32(m, w, in, R);
}
H(v_pack_b32_f16) {
  uint32_t A[LANES], B[LANES], R[LANES];
  fetch16(m, w, in, 0, A, true); fetch16(m, w, in, 1, B, true);
  LOOP R[l] = (A[l] & 0xffff) | (B[l] << 16);
  write32(m, w, in, R);
}
H(v_cvt_pk_u16_u32) {
  uint32_t A[LANES], B[LANES], R[LANES];
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, B);
  LOOP R[l] = std::min(A[l], 0xffffu) | (std::min(B[l], 0xffffu) << 16);
  write32(m, w, in, R);
}
H(v_cvt_pk_i16_i32) {
  uint32_t A[LANES], B[LANES], R[LANES];
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, B);
  auto s = [](uint32_t x) { return uint32_t(std::max(-32768, std::min(32767, int32_t(x)))) & 0xffff; };
  LOOP R[l] = s(A[l]) | (s(B[l]) << 16);
  write32(m, w, in, R);
}

// ---- fp8 / bf8 ----
static F8Format fmt8(const Machine& m, bool bf8) {
  if (m.family == CDNA3) return bf8 ? E5M2_FNUZ : E4M3_FNUZ;
  return bf8 ? E5M2_OCP : E4M3_OCP;
}
template <bool BF8>
static void cvt_f32_f8(Machine& m, Wave& w, const Inst& in) {
  uint32_t A[LANES], R[LANES];
  fetch32(m, w, in, 0, A);                       // SDWA selects the byte on gfx9
  int byte = (in.flags & F_SDWA) ? 0 : (in.opsel & 3);
  F8Format f = fmt8(m, BF8);
  LOOP R[l] = fb(f8_to_f32(uint8_t(A[l] >> (8 * byte)), f));
  write32(m, w, in, R);
}
H(v_cvt_f32_fp8) { cvt_f32_f8<false>(m, w, in); }
H(v_cvt_f32_bf8) { cvt_f32_f8<true>(m, w, in); }
template <bool BF8>
static void cvt_pk_f32_f8(Machine& m, Wave& w, const Inst& in) {
  uint32_t A[LANES];
  uint64_t R[LANES];
  fetch32(m, w, in, 0, A);
  bool hi = (in.flags & F_SDWA) ? in.sdwa_src_sel[0] == 5 : (in.opsel & 1);
  F8Format f = fmt8(m, BF8);
  LOOP {
    uint32_t x = hi ? A[l] >> 16 : A[l];
    R[l] = fb(f8_to_f32(uint8_t(x), f)) | (uint64_t(fb(f8_to_f32(uint8_t(x >> 8), f))) << 32);
  }
  write64(m, w, in, R);
}
H(v_cvt_pk_f32_fp8) { cvt_pk_f32_f8<false>(m, w, in); }
H(v_cvt_pk_f32_bf8) { cvt_pk_f32_f8<true>(m, w, in); }
// Two f32 to two fp8 in the low or (op_sel[3]) high word of the destination, the other word kept.
template <bool BF8>
static void cvt_pk_f8_f32(Machine& m, Wave& w, const Inst& in) {
  uint32_t A[LANES], B[LANES], R[LANES];
  f32src(m, w, in, 0, A); f32src(m, w, in, 1, B);
  const uint32_t* D = w.vr(in.d[0].reg);
  bool hi = (in.opsel >> 3) & 1;
  F8Format f = fmt8(m, BF8);
  bool sat = in.flags & F_CLAMP;
  LOOP {
    uint32_t p = f32_to_f8(bf(A[l]), f, sat) | (uint32_t(f32_to_f8(bf(B[l]), f, sat)) << 8);
    R[l] = hi ? ((D[l] & 0xffff) | (p << 16)) : ((D[l] & 0xffff0000u) | p);
  }
  write32(m, w, in, R);
}
H(v_cvt_pk_fp8_f32) { cvt_pk_f8_f32<false>(m, w, in); }
H(v_cvt_pk_bf8_f32) { cvt_pk_f8_f32<true>(m, w, in); }

// ---- packed (VOP3P) f16 (operands.h: pkh, pkraw) ----
#define PKF(NAME, NS, EXPR) H(NAME) { uint32_t S[3][LANES], R[LANES]; \
  for (int i = 0; i < NS; ++i) pkraw(m, w, in, i, S[i]); \
  LOOP { uint32_t r = 0; for (int h = 0; h < 2; ++h) { \
    float a = H2F(pkh(in, 0, S[0][l], h, true)); \
    float b = NS > 1 ? H2F(pkh(in, 1, S[1][l], h, true)) : 0.0f; \
    float c = NS > 2 ? H2F(pkh(in, 2, S[2][l], h, true)) : 0.0f; (void)b; (void)c; \
    r |= uint32_t(f2h(fpost(in, (EXPR)))) << (16 * h); } R[l] = r; } write32(m, w, in, R); }
PKF(v_pk_add_f16, 2, a + b)
PKF(v_pk_mul_f16, 2, a * b)
PKF(v_pk_fma_f16, 3, fmah(a, b, c))
PKF(v_pk_max_f16, 2, std::fmax(a, b))
PKF(v_pk_min_f16, 2, std::fmin(a, b))

// Packed f32 (gfx90a+): 64-bit register pairs; op_sel / op_sel_hi pick the dword per half.
#define PKF32(NAME, NS, EXPR) H(NAME) { uint64_t S[3][LANES], R[LANES]; \
  for (int i = 0; i < NS; ++i) fetch64(m, w, in, i, S[i], 'f'); \
  LOOP { uint64_t r = 0; for (int h = 0; h < 2; ++h) { float v[3]; \
    for (int i = 0; i < NS; ++i) { bool sel = h ? ((in.opsel_hi >> i) & 1) : ((in.opsel >> i) & 1); \
      const Opnd& o = in.s[i]; uint32_t x = (o.kind == K_INL || o.kind == K_LIT) ? o.imm32 : uint32_t(S[i][l] >> (sel ? 32 : 0)); \
      if (((h ? in.neg_hi : in.neg_lo) >> i) & 1) { x ^= 0x80000000u; } v[i] = bf(x); } \
    float a = v[0], b = NS > 1 ? v[1] : 0.0f, c = NS > 2 ? v[2] : 0.0f; (void)b; (void)c; \
    r |= uint64_t(fo(m, fpost(in, (EXPR)))) << (32 * h); } R[l] = r; } write64(m, w, in, R); }
PKF32(v_pk_add_f32, 2, a + b)
PKF32(v_pk_mul_f32, 2, a * b)
PKF32(v_pk_fma_f32, 3, std::fma(a, b, c))
H(v_pk_mov_b32) {
  uint64_t A[LANES], B[LANES], R[LANES];
  fetch64(m, w, in, 0, A, 'u'); fetch64(m, w, in, 1, B, 'u');
  LOOP {
    uint32_t lo = uint32_t(A[l] >> ((in.opsel & 1) ? 32 : 0));
    uint32_t hi = uint32_t(B[l] >> ((in.opsel & 2) ? 32 : 0));
    R[l] = lo | (uint64_t(hi) << 32);
  }
  write64(m, w, in, R);
}

// Mixed precision: op_sel_hi[i] says source i is f16 (op_sel[i] picks its half). The encoding's
// neg_lo bit is negate and neg_hi absolute value; the disassembler prints them as -x and |x|.
static void mix_src(Machine& m, Wave& w, const Inst& in, int i, float* out) {
  uint32_t x[LANES];
  const Opnd& o = in.s[i];
  bool f16 = (in.opsel_hi >> i) & 1, hi = (in.opsel >> i) & 1;
  bool ab = (o.mods & M_ABS) || ((in.neg_hi >> i) & 1), ng = (o.mods & M_NEG) || ((in.neg_lo >> i) & 1);
  if (o.kind == K_INL) { LOOP x[l] = f16 ? o.imm16 : o.imm32; }
  else fetch32(m, w, in, i, x);
  LOOP {
    float v = f16 ? H2F(hi ? x[l] >> 16 : x[l]) : bf(x[l]);
    if (ab) v = std::fabs(v);
    if (ng) v = -v;
    out[l] = v;
  }
}
template <int OUT>   // 0: f32, 1: f16 low half, 2: f16 high half
static void fma_mix(Machine& m, Wave& w, const Inst& in) {
  float A[LANES], B[LANES], C[LANES];
  uint32_t R[LANES];
  mix_src(m, w, in, 0, A); mix_src(m, w, in, 1, B); mix_src(m, w, in, 2, C);
  const uint32_t* D = w.vr(in.d[0].reg);
  LOOP {
    float r = fpost(in, float(std::fma(double(A[l]), double(B[l]), double(C[l]))));
    if (OUT == 0) R[l] = fo(m, fpost(in, std::fma(A[l], B[l], C[l])));
    else if (OUT == 1) R[l] = (D[l] & 0xffff0000u) | f2h(r);
    else R[l] = (D[l] & 0xffff) | (uint32_t(f2h(r)) << 16);
  }
  write32(m, w, in, R);
}
H(v_fma_mix_f32) { fma_mix<0>(m, w, in); }
H(v_fma_mixlo_f16) { fma_mix<1>(m, w, in); }
H(v_fma_mixhi_f16) { fma_mix<2>(m, w, in); }

// ---- dot products ----
template <bool BF16>
static void dot2_f32(Machine& m, Wave& w, const Inst& in, bool acc_dst) {
  uint32_t S[2][LANES], C[LANES], R[LANES];
  pkraw(m, w, in, 0, S[0]); pkraw(m, w, in, 1, S[1]);
  if (acc_dst) std::memcpy(C, w.vr(in.d[0].reg), sizeof(C));
  else f32src(m, w, in, 2, C);
  // the f32 addend of a VOP3P op: neg_hi[2] is its absolute value, neg_lo[2] its negation
  uint32_t cabs = (in.neg_hi >> 2) & 1 ? 0x7fffffffu : ~0u, cneg = (in.neg_lo >> 2) & 1 ? 0x80000000u : 0;
  if (!acc_dst) LOOP C[l] = (C[l] & cabs) ^ cneg;
  auto cv = [](uint32_t x) { return BF16 ? bf2f(uint16_t(x)) : H2F(x); };
  LOOP {
    double s = bf(C[l]);
    for (int h = 0; h < 2; ++h)
      s += double(cv(pkh(in, 0, S[0][l], h, true))) * double(cv(pkh(in, 1, S[1][l], h, true)));
    R[l] = fo(m, fpost(in, float(s)));
  }
  write32(m, w, in, R);
}
H(v_dot2_f32_f16) { dot2_f32<false>(m, w, in, false); }
H(v_dot2_f32_bf16) { dot2_f32<true>(m, w, in, false); }
H(v_dot2c_f32_f16) { dot2_f32<false>(m, w, in, true); }
H(v_dot2c_f32_bf16) { dot2_f32<true>(m, w, in, true); }
// Four 8-bit products: signedness per source from neg_lo on gfx11 (iu8), fixed otherwise.
static void dot4(Machine& m, Wave& w, const Inst& in, bool sa, bool sb, bool acc_dst) {
  uint32_t A[LANES], B[LANES], C[LANES], R[LANES];
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, B);
  if (acc_dst) std::memcpy(C, w.vr(in.d[0].reg), sizeof(C));
  else fetch32(m, w, in, 2, C);
  LOOP {
    int64_t s = int32_t(C[l]);
    for (int k = 0; k < 4; ++k) {
      uint32_t a = (A[l] >> (8 * k)) & 0xff, b = (B[l] >> (8 * k)) & 0xff;
      s += int64_t(sa ? int8_t(a) : int32_t(a)) * (sb ? int8_t(b) : int32_t(b));
    }
    R[l] = uint32_t(s);
  }
  write32(m, w, in, R);
}
H(v_dot4_i32_iu8) { dot4(m, w, in, in.neg_lo & 1, in.neg_lo & 2, false); }
H(v_dot4_i32_i8) { dot4(m, w, in, true, true, false); }
H(v_dot4_u32_u8) { dot4(m, w, in, false, false, false); }
H(v_dot4c_i32_i8) { dot4(m, w, in, true, true, true); }

void register_valu16(Registry& r) {
#define R(name) r.add(#name, name);
  R(v_add_f16) R(v_sub_f16) R(v_subrev_f16) R(v_mul_f16) R(v_max_f16) R(v_min_f16) R(v_ldexp_f16)
  R(v_fma_f16) R(v_max3_f16) R(v_min3_f16) R(v_med3_f16) R(v_maxmin_f16) R(v_minmax_f16) R(v_exp_f16)
  R(v_log_f16) R(v_rcp_f16) R(v_rsq_f16) R(v_sqrt_f16) R(v_sin_f16) R(v_cos_f16) R(v_floor_f16) R(v_ceil_f16) R(v_trunc_f16)
  R(v_rndne_f16) R(v_fract_f16) R(v_cvt_f16_i16) R(v_cvt_f16_u16) R(v_fmac_f16)
  R(v_cvt_i16_f16) R(v_cvt_u16_f16) R(v_cvt_f16_f32) R(v_cvt_f32_f16) R(v_cvt_f32_bf16)
  R(v_cvt_pkrtz_f16_f32) R(v_cvt_pk_f16_f32) R(v_cvt_u32_u16) R(v_cvt_i32_i16) R(v_cvt_pk_bf16_f32)
  R(v_pack_b32_f16) R(v_cvt_pk_u16_u32) R(v_cvt_pk_i16_i32)
  R(v_cvt_f32_fp8) R(v_cvt_f32_bf8) R(v_cvt_pk_f32_fp8) R(v_cvt_pk_f32_bf8) R(v_cvt_pk_fp8_f32)
  R(v_cvt_pk_bf8_f32)
  R(v_pk_add_f16) R(v_pk_mul_f16) R(v_pk_fma_f16) R(v_pk_max_f16) R(v_pk_min_f16)
  R(v_pk_add_f32) R(v_pk_mul_f32) R(v_pk_fma_f32) R(v_pk_mov_b32)
  R(v_fma_mix_f32) R(v_fma_mixlo_f16) R(v_fma_mixhi_f16)
  R(v_dot2_f32_f16) R(v_dot2_f32_bf16) R(v_dot2c_f32_f16) R(v_dot2c_f32_bf16) R(v_dot4_i32_iu8)
  R(v_dot4_i32_i8) R(v_dot4_u32_u8) R(v_dot4c_i32_i8)
#undef R
}

}  // namespace emu
