// VALU: 16-bit integer and bitwise operations. A VOP3 source is one half of a register (vN.l or
// vN.h in true16 form, op_sel in fake16 form and for SGPRs), and the result goes to one half of
// the destination, the other half kept (write16). The packed (VOP3P) forms compute both halves.
//
// With clamp, an integer result saturates to the range of its type instead of wrapping: clang
// selects `v_add_nc_i16 ... clamp` for llvm.sadd.sat.i16, `v_sub_nc_u16 ... clamp` for
// llvm.usub.sat.i16, and the same for the packed adds and subtracts. Each handler computes the
// exact result in 64 bits and then wraps or saturates it.
#include <algorithm>

#include "operands.h"

namespace emu {

#define LOOP for (int l = 0; l < w.wsize; ++l)

static inline int64_t S16(uint32_t x) { return int16_t(uint16_t(x)); }
static inline int64_t U16(uint32_t x) { return x & 0xffff; }
// The 16 result bits of an exact result r of type u16 / i16: wrapped, or saturated under clamp.
static inline uint32_t u16_of(int64_t r, bool clamp) {
  return uint32_t(clamp ? std::clamp<int64_t>(r, 0, 0xffff) : r) & 0xffff;
}
static inline uint32_t i16_of(int64_t r, bool clamp) {
  return uint32_t(clamp ? std::clamp<int64_t>(r, -32768, 32767) : r) & 0xffff;
}
static inline uint32_t u32_of(int64_t r, bool clamp) {
  return uint32_t(clamp ? std::clamp<int64_t>(r, 0, 0xffffffffll) : r);
}
static inline uint32_t i32_of(int64_t r, bool clamp) {
  return uint32_t(clamp ? std::clamp<int64_t>(r, INT32_MIN, INT32_MAX) : r);
}
template <class T> static inline T med3(T a, T b, T c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }

// ---- VOP1/VOP2/VOP3: NS 16-bit sources a, b, c (raw, zero-extended), OUT(exact result, clamp) ----
#define I16(NAME, NS, OUT, EXPR) H(NAME) { uint32_t S[3][LANES], R[LANES]; \
  for (int i = 0; i < NS; ++i) fetch16(m, w, in, i, S[i], false); \
  const bool clamp = in.flags & F_CLAMP; \
  LOOP { [[maybe_unused]] uint32_t a = S[0][l], b = NS > 1 ? S[1][l] : 0, c = NS > 2 ? S[2][l] : 0; \
    R[l] = OUT(int64_t(EXPR), clamp); } \
  write16(m, w, in, R); }

I16(v_mov_b16, 1, u16_of, a)
I16(v_not_b16, 1, u16_of, ~a & 0xffff)
I16(v_add_nc_u16, 2, u16_of, U16(a) + U16(b))
I16(v_sub_nc_u16, 2, u16_of, U16(a) - U16(b))
I16(v_subrev_u16, 2, u16_of, U16(b) - U16(a))                 // gfx9
I16(v_add_nc_i16, 2, i16_of, S16(a) + S16(b))
I16(v_sub_nc_i16, 2, i16_of, S16(a) - S16(b))
I16(v_mul_lo_u16, 2, u16_of, U16(a) * U16(b) & 0xffff)
I16(v_lshlrev_b16, 2, u16_of, U16(b) << (a & 15) & 0xffff)
I16(v_lshrrev_b16, 2, u16_of, U16(b) >> (a & 15))
I16(v_ashrrev_i16, 2, i16_of, S16(b) >> (a & 15))
I16(v_max_u16, 2, u16_of, std::max(U16(a), U16(b)))
I16(v_min_u16, 2, u16_of, std::min(U16(a), U16(b)))
I16(v_max_i16, 2, i16_of, std::max(S16(a), S16(b)))
I16(v_min_i16, 2, i16_of, std::min(S16(a), S16(b)))
I16(v_and_b16, 2, u16_of, a & b)
I16(v_or_b16, 2, u16_of, a | b)
I16(v_xor_b16, 2, u16_of, a ^ b)
I16(v_mad_u16, 3, u16_of, U16(a) * U16(b) + U16(c))
I16(v_mad_i16, 3, i16_of, S16(a) * S16(b) + S16(c))
I16(v_max3_u16, 3, u16_of, std::max(std::max(U16(a), U16(b)), U16(c)))
I16(v_min3_u16, 3, u16_of, std::min(std::min(U16(a), U16(b)), U16(c)))
I16(v_med3_u16, 3, u16_of, med3(U16(a), U16(b), U16(c)))
I16(v_max3_i16, 3, i16_of, std::max(std::max(S16(a), S16(b)), S16(c)))
I16(v_min3_i16, 3, i16_of, std::min(std::min(S16(a), S16(b)), S16(c)))
I16(v_med3_i16, 3, i16_of, med3(S16(a), S16(b), S16(c)))

// 16-bit products with a 32-bit addend and result (src2 and the destination are whole VGPRs).
template <bool SIGNED>
static void mad32_16(Machine& m, Wave& w, const Inst& in) {
  uint32_t A[LANES], B[LANES], C[LANES], R[LANES];
  fetch16(m, w, in, 0, A, false); fetch16(m, w, in, 1, B, false); fetch32(m, w, in, 2, C);
  const bool clamp = in.flags & F_CLAMP;
  LOOP R[l] = SIGNED ? i32_of(S16(A[l]) * S16(B[l]) + int32_t(C[l]), clamp)
                     : u32_of(U16(A[l]) * U16(B[l]) + int64_t(C[l]), clamp);
  write32(m, w, in, R);
}
H(v_mad_u32_u16) { mad32_16<false>(m, w, in); }
H(v_mad_i32_i16) { mad32_16<true>(m, w, in); }
// Sum of absolute differences of both unsigned halves, plus a 32-bit addend.
H(v_sad_u16) {
  uint32_t A[LANES], B[LANES], C[LANES], R[LANES];
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, B); fetch32(m, w, in, 2, C);
  const bool clamp = in.flags & F_CLAMP;
  auto absdiff = [](int64_t x, int64_t y) { return x > y ? x - y : y - x; };
  LOOP R[l] = u32_of(int64_t(C[l]) + absdiff(U16(A[l]), U16(B[l])) + absdiff(A[l] >> 16, B[l] >> 16), clamp);
  write32(m, w, in, R);
}
// Both signed halves of a 32-bit source, each saturated to 0..255: two bytes in a 16-bit result.
H(v_sat_pk_u8_i16) {
  uint32_t A[LANES], R[LANES];
  fetch32(m, w, in, 0, A);
  auto sat8 = [](int64_t x) { return uint32_t(std::clamp<int64_t>(x, 0, 255)); };
  LOOP R[l] = sat8(S16(A[l])) | sat8(S16(A[l] >> 16)) << 8;
  write16(m, w, in, R);
}
// Exchanges two halves: the destination's half takes the source's, and the source's the other.
H(v_swap_b16) {
  const Opnd& d = in.d[0];
  const Opnd& s = in.s[0];
  if (d.kind != K_VGPR || s.kind != K_VGPR) m.fail(w, in, "v_swap_b16 exchanges two VGPR halves");
  if (w.npend) { check_vread(m, w, in, d.reg, 1); check_vread(m, w, in, s.reg, 1); }
  const int dsh = (d.mods & M_HI) ? 16 : 0, ssh = (s.mods & M_HI) ? 16 : 0;
  uint32_t* dv = w.vr(d.reg);
  uint32_t* sv = w.vr(s.reg);
  uint64_t e = w.exec();
  LOOP {
    if (!((e >> l) & 1)) continue;
    uint32_t x = (dv[l] >> dsh) & 0xffff, y = (sv[l] >> ssh) & 0xffff;
    dv[l] = (dv[l] & ~(0xffffu << dsh)) | y << dsh;
    sv[l] = (sv[l] & ~(0xffffu << ssh)) | x << ssh;
  }
}

// ---- packed (VOP3P): both halves (operands.h: pkh, pkraw), each with OUT(exact result, clamp) ----
#define PKI(NAME, NS, OUT, EXPR) H(NAME) { uint32_t S[3][LANES], R[LANES]; \
  for (int i = 0; i < NS; ++i) pkraw(m, w, in, i, S[i]); \
  const bool clamp = in.flags & F_CLAMP; \
  LOOP { uint32_t r = 0; for (int h = 0; h < 2; ++h) { \
    [[maybe_unused]] uint32_t a = pkh(in, 0, S[0][l], h, false), b = NS > 1 ? pkh(in, 1, S[1][l], h, false) : 0, \
        c = NS > 2 ? pkh(in, 2, S[2][l], h, false) : 0; \
    r |= OUT(int64_t(EXPR), clamp) << (16 * h); } R[l] = r; } write32(m, w, in, R); }
PKI(v_pk_add_u16, 2, u16_of, U16(a) + U16(b))
PKI(v_pk_sub_u16, 2, u16_of, U16(a) - U16(b))
PKI(v_pk_add_i16, 2, i16_of, S16(a) + S16(b))
PKI(v_pk_sub_i16, 2, i16_of, S16(a) - S16(b))
PKI(v_pk_mul_lo_u16, 2, u16_of, U16(a) * U16(b) & 0xffff)
PKI(v_pk_mad_u16, 3, u16_of, U16(a) * U16(b) + U16(c))
PKI(v_pk_mad_i16, 3, i16_of, S16(a) * S16(b) + S16(c))
PKI(v_pk_lshlrev_b16, 2, u16_of, U16(b) << (a & 15) & 0xffff)
PKI(v_pk_lshrrev_b16, 2, u16_of, U16(b) >> (a & 15))
PKI(v_pk_ashrrev_i16, 2, i16_of, S16(b) >> (a & 15))
PKI(v_pk_max_i16, 2, i16_of, std::max(S16(a), S16(b)))
PKI(v_pk_min_i16, 2, i16_of, std::min(S16(a), S16(b)))
PKI(v_pk_max_u16, 2, u16_of, std::max(U16(a), U16(b)))
PKI(v_pk_min_u16, 2, u16_of, std::min(U16(a), U16(b)))

void register_int16(Registry& r) {
#define R(name) r.add(#name, name);
  R(v_mov_b16) R(v_not_b16) R(v_add_nc_u16) R(v_sub_nc_u16) R(v_subrev_u16) R(v_add_nc_i16) R(v_sub_nc_i16)
  R(v_mul_lo_u16) R(v_lshlrev_b16) R(v_lshrrev_b16) R(v_ashrrev_i16) R(v_max_u16) R(v_min_u16) R(v_max_i16) R(v_min_i16)
  R(v_and_b16) R(v_or_b16) R(v_xor_b16) R(v_mad_u16) R(v_mad_i16) R(v_max3_u16) R(v_min3_u16) R(v_med3_u16)
  R(v_max3_i16) R(v_min3_i16) R(v_med3_i16) R(v_mad_u32_u16) R(v_mad_i32_i16) R(v_sad_u16)
  R(v_sat_pk_u8_i16) R(v_swap_b16)
  R(v_pk_add_u16) R(v_pk_sub_u16) R(v_pk_add_i16) R(v_pk_sub_i16) R(v_pk_mul_lo_u16) R(v_pk_mad_u16)
  R(v_pk_mad_i16) R(v_pk_lshlrev_b16) R(v_pk_lshrrev_b16) R(v_pk_ashrrev_i16) R(v_pk_max_i16)
  R(v_pk_min_i16) R(v_pk_max_u16) R(v_pk_min_u16)
#undef R
}

}  // namespace emu
