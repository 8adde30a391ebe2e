// VALU operations across or between lanes (v_cndmask, v_readlane, v_writelane, v_permlane*,
// v_swap) and the division helpers (v_div_scale, v_div_fmas, v_div_fixup) that HIP's `/` uses.
#include <cmath>

#include "operands.h"

namespace emu {

#define LOOP for (int l = 0; l < w.wsize; ++l)

H(v_cndmask_b32) {
  uint32_t A[LANES], B[LANES], R[LANES];
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, B);  // a bit move: VOP3 neg/abs apply, no flushing
  fmods32(in, 0, A, w.wsize); fmods32(in, 1, B, w.wsize);
  uint64_t c = mget(m, w, in, in.s[2]);
  LOOP R[l] = ((c >> l) & 1) ? B[l] : A[l];
  write32(m, w, in, R);
}
H(v_cndmask_b16) {
  uint32_t A[LANES], B[LANES], R[LANES];
  fetch16(m, w, in, 0, A, true); fetch16(m, w, in, 1, B, true);
  uint64_t c = mget(m, w, in, in.s[2]);
  LOOP R[l] = ((c >> l) & 1) ? B[l] : A[l];
  write16(m, w, in, R);
}
H(v_readfirstlane_b32) {
  uint32_t A[LANES];
  fetch32(m, w, in, 0, A);
  uint64_t e = w.exec();
  sset(m, w, in, in.d[0], A[e ? __builtin_ctzll(e) : 0]);
}
H(v_readlane_b32) {
  uint32_t A[LANES];
  fetch32(m, w, in, 0, A);
  sset(m, w, in, in.d[0], A[sget(m, w, in, in.s[1]) % uint32_t(w.wsize)]);
}
H(v_writelane_b32) {   // ignores EXEC
  uint32_t v = sget(m, w, in, in.s[0]), lane = sget(m, w, in, in.s[1]) % uint32_t(w.wsize);
  if (w.npend) check_vread(m, w, in, in.d[0].reg, 1);
  w.vr(in.d[0].reg)[lane] = v;
}
H(v_swap_b32) {
  uint32_t A[LANES], B[LANES];
  std::memcpy(A, w.vr(in.d[0].reg), sizeof(A));
  fetch32(m, w, in, 0, B);
  uint64_t e = w.exec();
  uint32_t* d = w.vr(in.d[0].reg);
  uint32_t* s = w.vr(in.s[0].reg);
  LOOP if ((e >> l) & 1) { d[l] = B[l]; s[l] = A[l]; }
}
// v_permlane16: within each row of 16, lane i takes lane sel[i] of its own row (x16: of the
// other row of its pair). Selects are 4 bits each from {s2, s1}. op_sel[0] = fetch inactive,
// op_sel[1] = bound control.
template <bool X>
static void permlane(Machine& m, Wave& w, const Inst& in) {
  uint32_t A[LANES], R[LANES];
  fetch32(m, w, in, 0, A);
  uint64_t sel = sget(m, w, in, in.s[1]) | (uint64_t(sget(m, w, in, in.s[2])) << 32);
  uint64_t e = w.exec();
  bool fi = in.opsel & 1, bc = in.opsel & 2;
  const uint32_t* old = w.vr(in.d[0].reg);
  LOOP {
    int row = l >> 4, src_row = X ? (row ^ 1) : row;
    int s = src_row * 16 + int((sel >> (4 * (l & 15))) & 15);
    if (fi || ((e >> s) & 1)) R[l] = A[s];
    else R[l] = bc ? 0 : old[l];
  }
  write32(m, w, in, R);
}
H(v_permlane16_b32) { permlane<false>(m, w, in); }
H(v_permlanex16_b32) { permlane<true>(m, w, in); }
// gfx950: swap the odd rows of vdst with the even rows of vsrc (16), or the upper half of vdst
// with the lower half of vsrc (32).
template <int N>
static void permlane_swap(Machine& m, Wave& w, const Inst& in) {
  uint32_t* d = w.vr(in.d[0].reg);
  uint32_t* s = w.vr(in.s[0].reg);
  if (w.npend) { check_vread(m, w, in, in.d[0].reg, 1); check_vread(m, w, in, in.s[0].reg, 1); }
  uint64_t e = w.exec();
  for (int l = 0; l < w.wsize; ++l) {
    bool upper = N == 16 ? ((l >> 4) & 1) : (l >= 32);
    if (!upper) continue;
    int p = l - N;
    if (((e >> l) & 1) || ((e >> p) & 1)) std::swap(d[l], s[p]);
  }
}
H(v_permlane16_swap_b32) { permlane_swap<16>(m, w, in); }
H(v_permlane32_swap_b32) { permlane_swap<32>(m, w, in); }

// ---- division ----
static inline int fexp(float x) { return (fb(x) >> 23) & 0xff; }
static inline int dexp(double x) { return int((db(x) >> 52) & 0x7ff); }
static inline bool fden(float x) { return std::fpclassify(x) == FP_SUBNORMAL; }
static inline bool dden(double x) { return std::fpclassify(x) == FP_SUBNORMAL; }

H(v_div_scale_f32) {
  uint32_t A[LANES], B[LANES], C[LANES], R[LANES];
  f32src(m, w, in, 0, A); f32src(m, w, in, 1, B); f32src(m, w, in, 2, C);
  uint64_t vcc = 0, e = w.exec();
  LOOP {
    float s0 = bf(A[l]), s1 = bf(B[l]), s2 = bf(C[l]), d = s0;
    bool flag = false;
    if (s2 == 0.0f || s1 == 0.0f) d = NAN;
    else if (fexp(s2) - fexp(s1) >= 96) { flag = true; if (s0 == s1) d = std::ldexp(s0, 64); }
    else if (fden(s1)) d = std::ldexp(s0, 64);
    else if (dden(1.0 / double(s1)) && fden(s2 / s1)) { flag = true; if (s0 == s1) d = std::ldexp(s0, 64); }
    else if (dden(1.0 / double(s1))) d = std::ldexp(s0, -64);
    else if (fden(s2 / s1)) { flag = true; if (s0 == s2) d = std::ldexp(s0, 64); }
    else if (fexp(s2) <= 23) d = std::ldexp(s0, 64);
    R[l] = fb(d);
    if (flag && ((e >> l) & 1)) vcc |= 1ull << l;
  }
  write32(m, w, in, R);
  mset(m, w, in, in.d[1], vcc);
}
H(v_div_scale_f64) {
  uint64_t A[LANES], B[LANES], C[LANES], R[LANES];
  f64src(m, w, in, 0, A); f64src(m, w, in, 1, B); f64src(m, w, in, 2, C);
  uint64_t vcc = 0, e = w.exec();
  LOOP {
    double s0 = bd(A[l]), s1 = bd(B[l]), s2 = bd(C[l]), d = s0;
    bool flag = false;
    if (s2 == 0.0 || s1 == 0.0) d = NAN;
    else if (dexp(s2) - dexp(s1) >= 768) { flag = true; if (s0 == s1) d = std::ldexp(s0, 128); }
    else if (dden(s1)) d = std::ldexp(s0, 128);
    else if (dden(1.0 / s1) && dden(s2 / s1)) { flag = true; if (s0 == s1) d = std::ldexp(s0, 128); }
    else if (dden(1.0 / s1)) d = std::ldexp(s0, -128);
    else if (dden(s2 / s1)) { flag = true; if (s0 == s2) d = std::ldexp(s0, 128); }
    else if (dexp(s2) <= 53) d = std::ldexp(s0, 128);
    R[l] = db(d);
    if (flag && ((e >> l) & 1)) vcc |= 1ull << l;
  }
  write64(m, w, in, R);
  mset(m, w, in, in.d[1], vcc);
}
static inline uint64_t vcc_mask(Wave& w) {
  return w.wsize == 32 ? w.s[R_VCC_LO] : (w.s[R_VCC_LO] | (uint64_t(w.s[R_VCC_HI]) << 32));
}
// With VCC (div_scale scaled one operand), the fma undoes the scaling: by 2^64 (f32; 2^128 for
// f64) when the quotient estimate S2 is large (the denominator was scaled up), by 2^-64 when it
// is small (the numerator was, for a denormal quotient). The ISA's pseudocode says 2^32 and 2^64
// whatever S2; that gives quotients off by 2^32 (2^96 for denormal ones). The fma is exact in
// 113 bits and scaled there, so a denormal result rounds once.
template <class T>
static T fmas(T a, T b, T c, bool scale) {
  const __float128 r = __float128(a) * __float128(b) + __float128(c);
  if (!scale) return T(r);
  const __float128 k = std::ldexp(1.0, sizeof(T) == 4 ? 64 : 128);
  return T(std::ilogb(c) > 0 ? r * k : r / k);      // S2's exponent field above the bias: |S2| >= 2
}
H(v_div_fmas_f32) {
  uint32_t A[LANES], B[LANES], C[LANES], R[LANES];
  f32src(m, w, in, 0, A); f32src(m, w, in, 1, B); f32src(m, w, in, 2, C);
  uint64_t vcc = vcc_mask(w);
  LOOP R[l] = fo(m, fpost(in, fmas(bf(A[l]), bf(B[l]), bf(C[l]), (vcc >> l) & 1)));
  write32(m, w, in, R);
}
H(v_div_fmas_f64) {
  uint64_t A[LANES], B[LANES], C[LANES], R[LANES];
  f64src(m, w, in, 0, A); f64src(m, w, in, 1, B); f64src(m, w, in, 2, C);
  uint64_t vcc = vcc_mask(w);
  LOOP R[l] = db(fpost64(in, fmas(bd(A[l]), bd(B[l]), bd(C[l]), (vcc >> l) & 1)));
  write64(m, w, in, R);
}
template <class T>
static T fixup(T s0, T s1, T s2, int e1, int e2, int emax, int under, T maxv) {
  bool sign = std::signbit(s1) != std::signbit(s2);
  if (std::isnan(s2)) return std::fabs(s2) * (std::signbit(s2) ? -1 : 1);
  if (std::isnan(s1)) return s1;
  if (s1 == 0 && s2 == 0) return -NAN;
  if (std::isinf(s1) && std::isinf(s2)) return -NAN;
  if (s1 == 0 || std::isinf(s2)) return sign ? -INFINITY : INFINITY;
  if (std::isinf(s1) || s2 == 0) return sign ? T(-0.0) : T(0.0);
  if (e2 - e1 < under) return sign ? T(-0.0) : T(0.0);           // underflow, rounding to nearest
  if (e1 == emax) return sign ? -INFINITY : INFINITY;            // overflow, rounding to nearest
  // A quotient beyond the range overflows inside the Newton steps (inf - inf): infinity.
  if (std::isnan(s0)) return sign ? -INFINITY : INFINITY;
  return sign ? -std::fabs(s0) : std::fabs(s0);
}
H(v_div_fixup_f32) {
  uint32_t A[LANES], B[LANES], C[LANES], R[LANES];
  f32src(m, w, in, 0, A); f32src(m, w, in, 1, B); f32src(m, w, in, 2, C);
  LOOP {
    float s0 = bf(A[l]), s1 = bf(B[l]), s2 = bf(C[l]);
    R[l] = fo(m, fpost(in, fixup<float>(s0, s1, s2, fexp(s1), fexp(s2), 255, -150, std::numeric_limits<float>::max())));
  }
  write32(m, w, in, R);
}
H(v_div_fixup_f64) {
  uint64_t A[LANES], B[LANES], C[LANES], R[LANES];
  f64src(m, w, in, 0, A); f64src(m, w, in, 1, B); f64src(m, w, in, 2, C);
  LOOP {
    double s0 = bd(A[l]), s1 = bd(B[l]), s2 = bd(C[l]);
    R[l] = db(fpost64(in, fixup<double>(s0, s1, s2, dexp(s1), dexp(s2), 2047, -1075, std::numeric_limits<double>::max())));
  }
  write64(m, w, in, R);
}
H(v_div_fixup_f16) {
  uint32_t A[LANES], B[LANES], C[LANES], R[LANES];
  fetch16(m, w, in, 0, A, true); fetch16(m, w, in, 1, B, true); fetch16(m, w, in, 2, C, true);
  LOOP {
    float s0 = h2f(uint16_t(A[l])), s1 = h2f(uint16_t(B[l])), s2 = h2f(uint16_t(C[l]));
    int e1 = (B[l] >> 10) & 31, e2 = (C[l] >> 10) & 31;
    R[l] = f2h(fpost(in, fixup<float>(s0, s1, s2, e1, e2, 31, -25, 65504.0f)));
  }
  write16(m, w, in, R);
}

void register_lanes(Registry& r) {
#define R(name) r.add(#name, name);
  R(v_cndmask_b32) R(v_cndmask_b16) R(v_readfirstlane_b32) R(v_readlane_b32) R(v_writelane_b32)
  R(v_swap_b32) R(v_permlane16_b32) R(v_permlanex16_b32) R(v_permlane16_swap_b32)
  R(v_permlane32_swap_b32) R(v_div_scale_f32) R(v_div_scale_f64) R(v_div_fmas_f32) R(v_div_fmas_f64)
  R(v_div_fixup_f32) R(v_div_fixup_f64) R(v_div_fixup_f16)
#undef R
}

}  // namespace emu
