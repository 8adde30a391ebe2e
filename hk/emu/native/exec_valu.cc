// VALU: 32-bit float and integer arithmetic (VOP1, VOP2, VOP3 forms), carries, and the 64-bit
// integer and f64 operations. Semantics follow the RDNA3/RDNA4/CDNA3 ISA descriptions.
#include <algorithm>
#include <cmath>

#include "operands.h"

namespace emu {

#define LOOP for (int l = 0; l < w.wsize; ++l)
#define ARR(...) uint32_t __VA_ARGS__
// Float ops: a, b, c are floats with input modifiers applied; EXPR is the float result.
// The transcendental units have no denormals whatever the mode: v_exp_f32 gives 0 where 2^a is
// below 2^-126, v_log_f32 takes a denormal input as 0 (which is why the compiler's accurate
// exp2 and log2 scale around them).
static inline float exp2_hw(float a) {
  const float r = std::exp2(a);
  return r < 0x1p-126f ? 0.0f : r;
}
static inline float log2_hw(float a) {
  return std::fabs(a) < 0x1p-126f ? -INFINITY : std::log2(a);
}

#define VF1(NAME, EXPR) H(NAME) { ARR(A[LANES], R[LANES]); f32src(m, w, in, 0, A); \
  LOOP { float a = bf(A[l]); (void)a; R[l] = fo(m, fpost(in, (EXPR))); } write32(m, w, in, R); }
#define VF2(NAME, EXPR) H(NAME) { ARR(A[LANES], B[LANES], R[LANES]); f32src(m, w, in, 0, A); \
  f32src(m, w, in, 1, B); LOOP { float a = bf(A[l]), b = bf(B[l]); (void)a; (void)b; R[l] = fo(m, fpost(in, (EXPR))); } \
  write32(m, w, in, R); }
#define VF3(NAME, EXPR) H(NAME) { ARR(A[LANES], B[LANES], C[LANES], R[LANES]); f32src(m, w, in, 0, A); \
  f32src(m, w, in, 1, B); f32src(m, w, in, 2, C); \
  LOOP { float a = bf(A[l]), b = bf(B[l]), c = bf(C[l]); R[l] = fo(m, fpost(in, (EXPR))); } write32(m, w, in, R); }
// Integer ops on raw 32-bit lanes.
#define VI1(NAME, EXPR) H(NAME) { ARR(A[LANES], R[LANES]); fetch32(m, w, in, 0, A); \
  LOOP { uint32_t a = A[l]; R[l] = uint32_t(EXPR); } write32(m, w, in, R); }
#define VI2(NAME, EXPR) H(NAME) { ARR(A[LANES], B[LANES], R[LANES]); fetch32(m, w, in, 0, A); \
  fetch32(m, w, in, 1, B); LOOP { uint32_t a = A[l], b = B[l]; R[l] = uint32_t(EXPR); } write32(m, w, in, R); }
#define VI3(NAME, EXPR) H(NAME) { ARR(A[LANES], B[LANES], C[LANES], R[LANES]); fetch32(m, w, in, 0, A); \
  fetch32(m, w, in, 1, B); fetch32(m, w, in, 2, C); \
  LOOP { uint32_t a = A[l], b = B[l], c = C[l]; R[l] = uint32_t(EXPR); } write32(m, w, in, R); }

static inline int32_t I(uint32_t x) { return int32_t(x); }
static inline float fmax_ieee(float a, float b) { return std::fmax(a, b); }
static inline float fmin_ieee(float a, float b) { return std::fmin(a, b); }
static inline float med3f(float a, float b, float c) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c)) return std::fmin(std::fmin(a, b), c);
  float mx = std::fmax(std::fmax(a, b), c);
  if (mx == a) return std::fmax(b, c);
  if (mx == b) return std::fmax(a, c);
  return std::fmax(a, b);
}
template <class T> static inline T med3(T a, T b, T c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }
static inline uint32_t bfe(uint32_t x, uint32_t off, uint32_t w) {
  off &= 31; w &= 31;
  if (!w) return 0;
  return (x >> off) & (w >= 32 ? ~0u : ((1u << w) - 1));
}
static inline int32_t bfe_i(uint32_t x, uint32_t off, uint32_t w) {
  off &= 31; w &= 31;
  if (!w) return 0;
  uint32_t v = bfe(x, off, w);
  return (off + w < 32) ? int32_t(v << (32 - w)) >> (32 - w) : int32_t(int32_t(x) >> off);
}
static inline uint32_t perm_byte(uint64_t v, uint32_t sel) {
  if (sel <= 7) return (v >> (8 * sel)) & 0xff;
  switch (sel) {
    case 8: return (v >> 15) & 1 ? 0xff : 0;
    case 9: return (v >> 31) & 1 ? 0xff : 0;
    case 10: return (v >> 47) & 1 ? 0xff : 0;
    case 11: return (v >> 63) & 1 ? 0xff : 0;
    case 12: return 0;
    default: return 0xff;
  }
}
static inline uint32_t perm(uint32_t s0, uint32_t s1, uint32_t sel) {
  uint64_t v = (uint64_t(s0) << 32) | s1;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= perm_byte(v, (sel >> (8 * i)) & 0xff) << (8 * i);
  return r;
}
static inline uint32_t clz32(uint32_t x) { return x ? __builtin_clz(x) : 0xffffffffu; }
static inline uint32_t ctz32(uint32_t x) { return x ? __builtin_ctz(x) : 0xffffffffu; }
static inline uint32_t cls32(uint32_t x) {
  int32_t v = int32_t(x);
  if (v == 0 || v == -1) return 0xffffffffu;
  return v < 0 ? __builtin_clz(~x) : __builtin_clz(x);
}
static inline float fract(float x) {
  if (std::isinf(x)) return NAN;
  float r = x - std::floor(x);
  return std::fmin(r, 0x1.fffffep-1f);
}
static inline float ldexp32(float a, int32_t e) { return std::ldexp(a, std::max(-300, std::min(300, e))); }
static inline uint32_t frexp_exp(float a) {
  if (std::isnan(a) || std::isinf(a)) return 0;
  int e; std::frexp(a, &e); return uint32_t(e);
}
static inline float frexp_mant(float a) {
  if (std::isnan(a) || std::isinf(a)) return a;
  int e; return std::frexp(a, &e);
}
// Transcendentals: the hardware is accurate to about 1 ulp; the host's float functions are
// within that. sin/cos take the angle in revolutions.
static inline float vrcp(float a) { return 1.0f / a; }
static inline float vrsq(float a) { return float(1.0 / std::sqrt(double(a))); }
static inline float vsin(float a) { return std::isinf(a) ? NAN : float(std::sin(double(a) * 2.0 * M_PI)); }
static inline float vcos(float a) { return std::isinf(a) ? NAN : float(std::cos(double(a) * 2.0 * M_PI)); }
static inline float mul_legacy(float a, float b) { return (a == 0.0f || b == 0.0f) ? 0.0f : a * b; }

// ---- float ----
VF2(v_add_f32, a + b)
VF2(v_sub_f32, a - b)
VF2(v_subrev_f32, b - a)
VF2(v_mul_f32, a * b)
VF2(v_mul_legacy_f32, mul_legacy(a, b))
VF2(v_min_f32, fmin_ieee(a, b))
VF2(v_max_f32, fmax_ieee(a, b))
VF2(v_minimum_f32, fminimum(a, b))
VF2(v_maximum_f32, fmaximum(a, b))
VF3(v_fma_f32, std::fma(a, b, c))
VF3(v_mad_f32, a * b + c)
VF3(v_fma_legacy_f32, (a == 0.0f || b == 0.0f) ? c : std::fma(a, b, c))
VF3(v_min3_f32, fmin_ieee(fmin_ieee(a, b), c))
VF3(v_max3_f32, fmax_ieee(fmax_ieee(a, b), c))
VF3(v_med3_f32, med3f(a, b, c))
VF3(v_minimum3_f32, fminimum(fminimum(a, b), c))
VF3(v_maximum3_f32, fmaximum(fmaximum(a, b), c))
VF3(v_maxmin_f32, fmin_ieee(fmax_ieee(a, b), c))           // clamps: min(max(s0, s1), s2)
VF3(v_minmax_f32, fmax_ieee(fmin_ieee(a, b), c))
VF3(v_maximumminimum_f32, fminimum(fmaximum(a, b), c))
VF3(v_minimummaximum_f32, fmaximum(fminimum(a, b), c))
VF1(v_trunc_f32, std::trunc(a))
VF1(v_ceil_f32, std::ceil(a))
VF1(v_floor_f32, std::floor(a))
VF1(v_rndne_f32, std::nearbyint(a))
VF1(v_fract_f32, fract(a))
VF1(v_exp_f32, exp2_hw(a))
VF1(v_log_f32, log2_hw(a))
VF1(v_rcp_f32, vrcp(a))
VF1(v_rcp_iflag_f32, vrcp(a))
VF1(v_rsq_f32, vrsq(a))
VF1(v_sqrt_f32, std::sqrt(a))
VF1(v_sin_f32, vsin(a))
VF1(v_cos_f32, vcos(a))
VF1(v_frexp_mant_f32, frexp_mant(a))
VF1(v_cvt_f32_i32, float(I(A[l])))
VF1(v_cvt_f32_u32, float(A[l]))
VF1(v_cvt_f32_ubyte0, float(A[l] & 0xff))
VF1(v_cvt_f32_ubyte1, float((A[l] >> 8) & 0xff))
VF1(v_cvt_f32_ubyte2, float((A[l] >> 16) & 0xff))
VF1(v_cvt_f32_ubyte3, float(A[l] >> 24))

// Conversions from float to integer read modifiers but write integers.
#define VFI(NAME, EXPR) H(NAME) { ARR(A[LANES], R[LANES]); f32src(m, w, in, 0, A); \
  LOOP { float a = bf(A[l]); (void)a; R[l] = uint32_t(EXPR); } write32(m, w, in, R); }
VFI(v_cvt_i32_f32, cvt_i32(a))
VFI(v_cvt_u32_f32, cvt_u32(a))
VFI(v_cvt_rpi_i32_f32, cvt_i32(std::floor(a + 0.5f)))
VFI(v_cvt_flr_i32_f32, cvt_i32(std::floor(a)))
VFI(v_frexp_exp_i32_f32, frexp_exp(a))

// ldexp: the exponent is an integer operand, never flushed as a float would be.
H(v_ldexp_f32) {
  ARR(A[LANES], B[LANES], R[LANES]);
  f32src(m, w, in, 0, A); fetch32(m, w, in, 1, B);
  LOOP R[l] = fo(m, fpost(in, ldexp32(bf(A[l]), I(B[l]))));
  write32(m, w, in, R);
}

// fmac / mac: the destination is the addend. fmamk/fmaak: the printed operand order is s0*s1+s2.
H(v_fmac_f32) {
  ARR(A[LANES], B[LANES], C[LANES], R[LANES]);
  f32src(m, w, in, 0, A); f32src(m, w, in, 1, B);
  std::memcpy(C, w.vr(in.d[0].reg), sizeof(C));
  LOOP R[l] = fo(m, fpost(in, std::fma(bf(A[l]), bf(B[l]), bf(C[l]))));
  write32(m, w, in, R);
}
H(v_mac_f32) {
  ARR(A[LANES], B[LANES], C[LANES], R[LANES]);
  f32src(m, w, in, 0, A); f32src(m, w, in, 1, B);
  std::memcpy(C, w.vr(in.d[0].reg), sizeof(C));
  LOOP R[l] = fo(m, fpost(in, bf(A[l]) * bf(B[l]) + bf(C[l])));
  write32(m, w, in, R);
}

// gfx12 transcendentals on an SGPR (VOP3, so the float modifiers apply): v_s_exp_f32 s1, s2.
static inline float sfsrc(Machine& m, Wave& w, const Inst& in) {
  uint32_t x = sget(m, w, in, in.s[0]);
  uint8_t md = in.s[0].mods;
  if (md & M_ABS) x &= 0x7fffffffu;
  if (md & M_NEG) x ^= 0x80000000u;
  return bf(x);
}
#define VS_F32(NAME, EXPR) H(NAME) { float a = sfsrc(m, w, in); sset(m, w, in, in.d[0], fo(m, fpost(in, (EXPR)))); }
VS_F32(v_s_exp_f32, exp2_hw(a))
VS_F32(v_s_log_f32, log2_hw(a))
VS_F32(v_s_rcp_f32, vrcp(a))
VS_F32(v_s_rsq_f32, vrsq(a))
VS_F32(v_s_sqrt_f32, std::sqrt(a))
#undef VS_F32

// ---- integer ----
VI1(v_mov_b32, a)
VI1(v_not_b32, ~a)
VI1(v_bfrev_b32, bitrev32(a))
VI1(v_ffbh_u32, clz32(a))
VI1(v_ffbl_b32, ctz32(a))
VI1(v_ffbh_i32, cls32(a))
// clamp saturates the unsigned result (clang folds `x < y ? y - x : 0` into v_sub_nc_u32 clamp).
static inline bool clamped(const Inst& in) { return in.flags & F_CLAMP; }
VI2(v_add_nc_u32, clamped(in) && uint64_t(a) + b > 0xffffffffu ? 0xffffffffu : a + b)
VI2(v_sub_nc_u32, clamped(in) && b > a ? 0u : a - b)
VI2(v_subrev_nc_u32, clamped(in) && a > b ? 0u : b - a)
// The signed forms saturate to the i32 range under clamp (clang's llvm.sadd.sat / ssub.sat).
static inline uint32_t i32_sat(const Inst& in, int64_t r) {
  return uint32_t(clamped(in) ? std::clamp<int64_t>(r, INT32_MIN, INT32_MAX) : r);
}
static inline uint32_t u32_sat(const Inst& in, int64_t r) {
  return uint32_t(clamped(in) ? std::clamp<int64_t>(r, 0, UINT32_MAX) : r);
}
VI2(v_add_nc_i32, i32_sat(in, int64_t(I(a)) + I(b)))
VI2(v_sub_nc_i32, i32_sat(in, int64_t(I(a)) - I(b)))
VI2(v_mul_lo_u32, a * b)
VI2(v_mul_hi_u32, (uint64_t(a) * b) >> 32)
VI2(v_mul_hi_i32, uint64_t(int64_t(I(a)) * I(b)) >> 32)
VI2(v_mul_u32_u24, (a & 0xffffff) * (b & 0xffffff))
VI2(v_mul_hi_u32_u24, (uint64_t(a & 0xffffff) * (b & 0xffffff)) >> 32)
VI2(v_mul_i32_i24, int64_t(int32_t(a << 8) >> 8) * (int32_t(b << 8) >> 8))
VI2(v_mul_hi_i32_i24, uint64_t(int64_t(int32_t(a << 8) >> 8) * (int32_t(b << 8) >> 8)) >> 32)
VI2(v_min_i32, std::min(I(a), I(b)))
VI2(v_max_i32, std::max(I(a), I(b)))
VI2(v_min_u32, std::min(a, b))
VI2(v_max_u32, std::max(a, b))
VI2(v_and_b32, a & b)
VI2(v_or_b32, a | b)
VI2(v_xor_b32, a ^ b)
VI2(v_xnor_b32, ~(a ^ b))
VI2(v_lshlrev_b32, b << (a & 31))
VI2(v_lshrrev_b32, b >> (a & 31))
VI2(v_ashrrev_i32, I(b) >> (a & 31))
VI2(v_bfm_b32, ((1u << (a & 31)) - 1) << (b & 31))
VI2(v_bcnt_u32_b32, __builtin_popcount(a) + b)
VI3(v_mad_u32_u24, (a & 0xffffff) * (b & 0xffffff) + c)
VI3(v_mad_i32_i24, int64_t(int32_t(a << 8) >> 8) * (int32_t(b << 8) >> 8) + I(c))
VI3(v_min3_i32, std::min(std::min(I(a), I(b)), I(c)))
VI3(v_max3_i32, std::max(std::max(I(a), I(b)), I(c)))
VI3(v_med3_i32, med3<int32_t>(I(a), I(b), I(c)))
VI3(v_min3_u32, std::min(std::min(a, b), c))
VI3(v_max3_u32, std::max(std::max(a, b), c))
VI3(v_med3_u32, med3<uint32_t>(a, b, c))
VI3(v_maxmin_i32, std::min(std::max(I(a), I(b)), I(c)))
VI3(v_minmax_i32, std::max(std::min(I(a), I(b)), I(c)))
VI3(v_maxmin_u32, std::min(std::max(a, b), c))
VI3(v_minmax_u32, std::max(std::min(a, b), c))
VI3(v_or3_b32, a | b | c)
VI3(v_xor3_b32, a ^ b ^ c)
VI3(v_and_or_b32, (a & b) | c)
VI3(v_xad_u32, (a ^ b) + c)
VI3(v_lshl_or_b32, (a << (b & 31)) | c)
VI3(v_lshl_add_u32, (a << (b & 31)) + c)
VI3(v_add_lshl_u32, (a + b) << (c & 31))
VI3(v_add3_u32, a + b + c)
VI3(v_bfe_u32, bfe(a, b, c))
VI3(v_bfe_i32, bfe_i(a, b, c))
VI3(v_bfi_b32, (a & b) | (~a & c))
VI3(v_alignbit_b32, uint32_t(((uint64_t(a) << 32) | b) >> (c & 31)))
VI3(v_alignbyte_b32, uint32_t(((uint64_t(a) << 32) | b) >> (8 * (c & 3))))
VI3(v_perm_b32, perm(a, b, c))
VI3(v_sad_u32, u32_sat(in, int64_t(a > b ? a - b : b - a) + c))

// v_bitop3: each result bit is bit (S0 << 2 | S1 << 1 | S2) of the 8-bit truth table in aux[0].
static inline uint32_t bitop3(uint32_t a, uint32_t b, uint32_t c, uint32_t t) {
  uint32_t r = 0;
  for (int i = 0; i < 8; ++i) {
    if (!((t >> i) & 1)) continue;
    r |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
  }
  return r;
}
VI3(v_bitop3_b32, bitop3(a, b, c, uint32_t(in.aux[0])))
H(v_bitop3_b16) {
  uint32_t A[LANES], B[LANES], C[LANES], R[LANES];
  fetch16(m, w, in, 0, A, false); fetch16(m, w, in, 1, B, false); fetch16(m, w, in, 2, C, false);
  LOOP R[l] = bitop3(A[l], B[l], C[l], uint32_t(in.aux[0])) & 0xffff;
  write16(m, w, in, R);
}

H(v_mbcnt_lo_u32_b32) {
  ARR(A[LANES], B[LANES], R[LANES]);
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, B);
  LOOP R[l] = __builtin_popcount(A[l] & ((l >= 32) ? 0xffffffffu : ((1u << l) - 1))) + B[l];
  write32(m, w, in, R);
}
H(v_mbcnt_hi_u32_b32) {
  ARR(A[LANES], B[LANES], R[LANES]);
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, B);
  LOOP R[l] = __builtin_popcount(A[l] & (l <= 32 ? 0u : (l >= 64 ? ~0u : ((1u << (l - 32)) - 1)))) + B[l];
  write32(m, w, in, R);
}

// ---- carries: d[1] is the carry-out mask, s[2] the carry-in mask ----
template <int KIND>   // 0 add, 1 sub, 2 subrev
static void carry_op(Machine& m, Wave& w, const Inst& in, bool with_in) {
  ARR(A[LANES], B[LANES], R[LANES]);
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, B);
  uint64_t cin = with_in ? mget(m, w, in, in.s[2]) : 0, cout = 0, ex = w.exec();
  LOOP {
    uint64_t a = A[l], b = B[l], ci = (cin >> l) & 1, r;
    bool c;
    if (KIND == 0) { r = a + b + ci; c = r >> 32; }
    else if (KIND == 1) { r = a - b - ci; c = b + ci > a; }
    else { r = b - a - ci; c = a + ci > b; }
    R[l] = uint32_t(r);
    if (c && ((ex >> l) & 1)) cout |= 1ull << l;
  }
  write32(m, w, in, R);
  if (in.nd > 1 && in.d[1].kind == K_SGPR) mset(m, w, in, in.d[1], cout);
}
H(v_add_co_u32) { carry_op<0>(m, w, in, false); }
H(v_sub_co_u32) { carry_op<1>(m, w, in, false); }
H(v_subrev_co_u32) { carry_op<2>(m, w, in, false); }
H(v_add_co_ci_u32) { carry_op<0>(m, w, in, true); }
H(v_sub_co_ci_u32) { carry_op<1>(m, w, in, true); }
H(v_subrev_co_ci_u32) { carry_op<2>(m, w, in, true); }

template <bool SIGNED>
static void mad64(Machine& m, Wave& w, const Inst& in) {
  ARR(A[LANES], B[LANES]);
  uint64_t C[LANES], R[LANES];
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, B);
  fetch64(m, w, in, 2, C, SIGNED ? 'i' : 'u');
  uint64_t cout = 0, ex = w.exec();
  LOOP {
    if (SIGNED) {
      __int128 r = __int128(int64_t(I(A[l]))) * I(B[l]) + __int128(int64_t(C[l]));
      R[l] = uint64_t(r);
      if ((r >> 64) != (__int128(int64_t(R[l])) >> 64) && ((ex >> l) & 1)) cout |= 1ull << l;
    } else {
      unsigned __int128 r = (unsigned __int128)(uint64_t(A[l]) * B[l]) + C[l];
      R[l] = uint64_t(r);
      if ((r >> 64) && ((ex >> l) & 1)) cout |= 1ull << l;
    }
  }
  write64(m, w, in, R);
  if (in.nd > 1 && in.d[1].kind == K_SGPR) mset(m, w, in, in.d[1], cout);
}
H(v_mad_u64_u32) { mad64<false>(m, w, in); }
H(v_mad_i64_i32) { mad64<true>(m, w, in); }

// ---- 64-bit ----
#define V64(NAME, TA, TB, EXPR) H(NAME) { uint64_t A[LANES], B[LANES], R[LANES]; \
  fetch64(m, w, in, 0, A, TA); fetch64(m, w, in, 1, B, TB); \
  LOOP { uint64_t a = A[l], b = B[l]; R[l] = (EXPR); } write64(m, w, in, R); }
#define V64S(NAME, EXPR) H(NAME) { ARR(A[LANES]); uint64_t B[LANES], R[LANES]; \
  fetch32(m, w, in, 0, A); fetch64(m, w, in, 1, B, 'u'); \
  LOOP { uint32_t a = A[l]; uint64_t b = B[l]; R[l] = (EXPR); } write64(m, w, in, R); }
V64S(v_lshlrev_b64, b << (a & 63))
V64S(v_lshrrev_b64, b >> (a & 63))
V64S(v_ashrrev_i64, uint64_t(int64_t(b) >> (a & 63)))
V64(v_add_nc_u64, 'u', 'u', a + b)
V64(v_sub_nc_u64, 'u', 'u', a - b)
H(v_lshl_add_u64) {
  uint64_t A[LANES], C[LANES], R[LANES];
  ARR(B[LANES]);
  fetch64(m, w, in, 0, A, 'u'); fetch32(m, w, in, 1, B); fetch64(m, w, in, 2, C, 'u');
  LOOP R[l] = (A[l] << (B[l] & 63)) + C[l];
  write64(m, w, in, R);
}
H(v_mov_b64) {
  uint64_t A[LANES];
  fetch64(m, w, in, 0, A, 'u');
  write64(m, w, in, A);
}

#define VD1(NAME, EXPR) H(NAME) { uint64_t A[LANES], R[LANES]; f64src(m, w, in, 0, A); \
  LOOP { double a = bd(A[l]); R[l] = db(fpost64(in, (EXPR))); } write64(m, w, in, R); }
#define VD2(NAME, EXPR) H(NAME) { uint64_t A[LANES], B[LANES], R[LANES]; f64src(m, w, in, 0, A); \
  f64src(m, w, in, 1, B); LOOP { double a = bd(A[l]), b = bd(B[l]); R[l] = db(fpost64(in, (EXPR))); } \
  write64(m, w, in, R); }
#define VD3(NAME, EXPR) H(NAME) { uint64_t A[LANES], B[LANES], C[LANES], R[LANES]; f64src(m, w, in, 0, A); \
  f64src(m, w, in, 1, B); f64src(m, w, in, 2, C); \
  LOOP { double a = bd(A[l]), b = bd(B[l]), c = bd(C[l]); R[l] = db(fpost64(in, (EXPR))); } write64(m, w, in, R); }
VD2(v_add_f64, a + b)
VD2(v_mul_f64, a * b)
VD2(v_min_f64, std::fmin(a, b))
VD2(v_max_f64, std::fmax(a, b))
VD3(v_fma_f64, std::fma(a, b, c))
VD1(v_rcp_f64, 1.0 / a)
VD1(v_rsq_f64, 1.0 / std::sqrt(a))
VD1(v_sqrt_f64, std::sqrt(a))
VD1(v_trunc_f64, std::trunc(a))
VD1(v_ceil_f64, std::ceil(a))
VD1(v_floor_f64, std::floor(a))
VD1(v_rndne_f64, std::nearbyint(a))
VD1(v_fract_f64, std::isinf(a) ? NAN : std::fmin(a - std::floor(a), 0x1.fffffffffffffp-1))
H(v_fmac_f64) {
  uint64_t A[LANES], B[LANES], C[LANES], R[LANES];
  f64src(m, w, in, 0, A); f64src(m, w, in, 1, B);
  const uint32_t* lo = w.vr(in.d[0].reg);
  const uint32_t* hi = w.vr(in.d[0].reg + 1);
  LOOP C[l] = lo[l] | (uint64_t(hi[l]) << 32);
  LOOP R[l] = db(fpost64(in, std::fma(bd(A[l]), bd(B[l]), bd(C[l]))));
  write64(m, w, in, R);
}
H(v_ldexp_f64) {
  uint64_t A[LANES], R[LANES]; ARR(B[LANES]);
  f64src(m, w, in, 0, A); fetch32(m, w, in, 1, B);
  LOOP R[l] = db(fpost64(in, std::ldexp(bd(A[l]), std::max(-3000, std::min(3000, I(B[l]))))));
  write64(m, w, in, R);
}
H(v_cvt_f64_f32) {
  ARR(A[LANES]); uint64_t R[LANES];
  f32src(m, w, in, 0, A);
  LOOP R[l] = db(fpost64(in, double(bf(A[l]))));
  write64(m, w, in, R);
}
H(v_cvt_f64_i32) { ARR(A[LANES]); uint64_t R[LANES]; fetch32(m, w, in, 0, A); LOOP R[l] = db(double(I(A[l]))); write64(m, w, in, R); }
H(v_cvt_f64_u32) { ARR(A[LANES]); uint64_t R[LANES]; fetch32(m, w, in, 0, A); LOOP R[l] = db(double(A[l])); write64(m, w, in, R); }
H(v_cvt_f32_f64) { uint64_t A[LANES]; ARR(R[LANES]); f64src(m, w, in, 0, A); LOOP R[l] = fo(m, fpost(in, float(bd(A[l])))); write32(m, w, in, R); }
static inline int32_t cvt_i32d(double f) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483647.0) return 2147483647;
  if (f <= -2147483648.0) return int32_t(0x80000000u);
  return int32_t(f);
}
H(v_cvt_i32_f64) { uint64_t A[LANES]; ARR(R[LANES]); f64src(m, w, in, 0, A); LOOP R[l] = uint32_t(cvt_i32d(bd(A[l]))); write32(m, w, in, R); }
H(v_cvt_u32_f64) {
  uint64_t A[LANES]; ARR(R[LANES]); f64src(m, w, in, 0, A);
  LOOP { double d = bd(A[l]); R[l] = std::isnan(d) || d <= 0 ? 0 : d >= 4294967295.0 ? 0xffffffffu : uint32_t(d); }
  write32(m, w, in, R);
}
H(v_frexp_exp_i32_f64) {
  uint64_t A[LANES]; ARR(R[LANES]); f64src(m, w, in, 0, A);
  LOOP { double d = bd(A[l]); int e = 0; if (!std::isnan(d) && !std::isinf(d)) std::frexp(d, &e); R[l] = uint32_t(e); }
  write32(m, w, in, R);
}
VD1(v_frexp_mant_f64, (std::isnan(a) || std::isinf(a)) ? a : [](double x) { int e; return std::frexp(x, &e); }(a))

void register_valu(Registry& r) {
#define R(name) r.add(#name, name);
  R(v_add_f32) R(v_sub_f32) R(v_subrev_f32) R(v_mul_f32) R(v_mul_legacy_f32) R(v_min_f32) R(v_max_f32)
  R(v_minimum_f32) R(v_maximum_f32) R(v_ldexp_f32) R(v_fma_f32) R(v_mad_f32) R(v_fma_legacy_f32)
  R(v_min3_f32) R(v_max3_f32) R(v_med3_f32) R(v_minimum3_f32) R(v_maximum3_f32) R(v_maxmin_f32)
  R(v_minmax_f32) R(v_maximumminimum_f32) R(v_minimummaximum_f32) R(v_maxmin_i32) R(v_minmax_i32)
  R(v_maxmin_u32) R(v_minmax_u32) R(v_trunc_f32)
  R(v_ceil_f32) R(v_floor_f32) R(v_rndne_f32) R(v_fract_f32) R(v_exp_f32) R(v_log_f32) R(v_rcp_f32)
  R(v_rcp_iflag_f32) R(v_rsq_f32) R(v_sqrt_f32) R(v_sin_f32) R(v_cos_f32) R(v_frexp_mant_f32)
  R(v_cvt_f32_i32) R(v_cvt_f32_u32) R(v_cvt_f32_ubyte0) R(v_cvt_f32_ubyte1) R(v_cvt_f32_ubyte2)
  R(v_cvt_f32_ubyte3) R(v_cvt_i32_f32) R(v_cvt_u32_f32) R(v_cvt_rpi_i32_f32) R(v_cvt_flr_i32_f32)
  R(v_frexp_exp_i32_f32) R(v_fmac_f32) R(v_mac_f32) R(v_s_exp_f32) R(v_s_log_f32) R(v_s_rcp_f32)
  R(v_s_rsq_f32) R(v_s_sqrt_f32)
  R(v_mov_b32) R(v_not_b32) R(v_bfrev_b32) R(v_ffbh_u32) R(v_ffbl_b32) R(v_ffbh_i32) R(v_add_nc_u32)
  R(v_sub_nc_u32) R(v_subrev_nc_u32) R(v_add_nc_i32) R(v_sub_nc_i32) R(v_mul_lo_u32) R(v_mul_hi_u32)
  R(v_mul_hi_i32) R(v_mul_u32_u24) R(v_mul_hi_u32_u24) R(v_mul_i32_i24) R(v_mul_hi_i32_i24) R(v_min_i32)
  R(v_max_i32) R(v_min_u32)
  R(v_max_u32) R(v_and_b32) R(v_or_b32) R(v_xor_b32) R(v_xnor_b32) R(v_lshlrev_b32) R(v_lshrrev_b32)
  R(v_ashrrev_i32) R(v_bfm_b32) R(v_bcnt_u32_b32) R(v_mad_u32_u24) R(v_mad_i32_i24)
  R(v_min3_i32) R(v_max3_i32) R(v_med3_i32) R(v_min3_u32) R(v_max3_u32) R(v_med3_u32) R(v_or3_b32)
  R(v_xor3_b32) R(v_and_or_b32) R(v_xad_u32) R(v_lshl_or_b32) R(v_lshl_add_u32) R(v_add_lshl_u32)
  R(v_add3_u32) R(v_bfe_u32) R(v_bfe_i32) R(v_bfi_b32) R(v_alignbit_b32) R(v_alignbyte_b32)
  R(v_perm_b32) R(v_sad_u32) R(v_bitop3_b32) R(v_bitop3_b16) R(v_mbcnt_lo_u32_b32) R(v_mbcnt_hi_u32_b32)
  R(v_add_co_u32) R(v_sub_co_u32) R(v_subrev_co_u32) R(v_add_co_ci_u32) R(v_sub_co_ci_u32)
  R(v_subrev_co_ci_u32) R(v_mad_u64_u32) R(v_mad_i64_i32)
  R(v_lshlrev_b64) R(v_lshrrev_b64) R(v_ashrrev_i64) R(v_add_nc_u64) R(v_sub_nc_u64) R(v_lshl_add_u64)
  R(v_mov_b64) R(v_add_f64) R(v_mul_f64) R(v_min_f64) R(v_max_f64) R(v_fma_f64) R(v_fmac_f64) R(v_rcp_f64)
  R(v_rsq_f64) R(v_sqrt_f64) R(v_trunc_f64) R(v_ceil_f64) R(v_floor_f64) R(v_rndne_f64) R(v_fract_f64)
  R(v_ldexp_f64) R(v_cvt_f64_f32) R(v_cvt_f64_i32) R(v_cvt_f64_u32) R(v_cvt_f32_f64) R(v_cvt_i32_f64)
  R(v_cvt_u32_f64) R(v_frexp_exp_i32_f64) R(v_frexp_mant_f64)
#undef R
}

}  // namespace emu
