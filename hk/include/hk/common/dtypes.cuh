// Element types of tiles and vectors, and how each converts to and from the type arithmetic
// runs in ("compute type"): float for every floating type, int for the integer types.
#pragma once

#include "arch.cuh"

namespace hk {

using bf16 = __bf16;
using fp16 = _Float16;

namespace detail {

// A float8 format: E exponent bits, M mantissa bits, exponent bias, whether the all-ones
// exponent encodes inf/NaN (IEEE-like, "ieee") or only the single NaN pattern NAN_BITS exists.
template <int E, int M, int BIAS, bool IEEE, int NAN_BITS, bool NEG_ZERO>
struct f8_format {
  static constexpr int exp_bits = E, man_bits = M, bias = BIAS;
  static constexpr bool ieee = IEEE, has_neg_zero = NEG_ZERO;
  static constexpr uint8_t nan = NAN_BITS;
  // The largest finite magnitude's bit pattern (sign bit clear).
  static constexpr uint8_t max_bits = IEEE ? (((1 << E) - 2) << M) | ((1 << M) - 1)
                                    : (NEG_ZERO ? 0x7E : 0x7F);
};

// OCP 8-bit formats (gfx12, gfx950, and the software default): e4m3 "fn" has no inf and one NaN
// per sign (S.1111.111); e5m2 is IEEE-like.
using ocp_e4m3 = f8_format<4, 3, 7, false, 0x7F, true>;
using ocp_e5m2 = f8_format<5, 2, 15, true, 0x7F, true>;
// FNUZ formats (gfx942): no negative zero; 0x80 is the only NaN; bias one larger; no inf.
using fnuz_e4m3 = f8_format<4, 3, 8, false, 0x80, false>;
using fnuz_e5m2 = f8_format<5, 2, 16, false, 0x80, false>;

HK_DEV uint32_t fbits(float f) { return __builtin_bit_cast(uint32_t, f); }
HK_DEV float bitsf(uint32_t u) { return __builtin_bit_cast(float, u); }

// Exact decode: every float8 value is a float.
template <class F>
HK_DEV float f8_to_float(uint8_t b) {
  const uint32_t sign = (b & 0x80u) << 24;
  const uint32_t mag = b & 0x7Fu;
  if (!F::has_neg_zero && b == 0x80) return __builtin_nanf("");
  if (F::ieee && (mag >> F::man_bits) == (1u << F::exp_bits) - 1)
    return bitsf(sign | ((mag & ((1u << F::man_bits) - 1)) ? 0x7FC00000u : 0x7F800000u));
  if (!F::ieee && F::has_neg_zero && mag == 0x7F) return __builtin_nanf("");
  const uint32_t e = mag >> F::man_bits, m = mag & ((1u << F::man_bits) - 1);
  // value = m * 2^(1-bias-M) for subnormals, (1.m) * 2^(e-bias) otherwise.
  float v = e == 0 ? static_cast<float>(m) * bitsf(static_cast<uint32_t>(127 + 1 - F::bias - F::man_bits) << 23)
                   : bitsf(((e + 127 - F::bias) << 23) | (m << (23 - F::man_bits)));
  return bitsf(fbits(v) | sign);
}

// Round to nearest even; finite values beyond the range saturate to +-max (what quantization
// wants); NaN stays NaN; inf becomes inf where the format has it, else the NaN pattern.
template <class F>
HK_DEV uint8_t float_to_f8(float x) {
  const uint32_t u = fbits(x);
  const uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return F::ieee ? static_cast<uint8_t>(sign | 0x7F) : F::nan;
  if (a == 0x7F800000u) {
    if (F::ieee) return static_cast<uint8_t>(sign | (((1 << F::exp_bits) - 1) << F::man_bits));
    return F::nan;
  }
  const float ax = bitsf(a);
  const float maxv = f8_to_float<F>(F::max_bits);
  uint8_t mag;
  if (ax >= maxv) {
    mag = F::max_bits;
  } else {
    // Scale so the format's smallest subnormal step is 1 ulp of the integer part of `scaled`:
    // below 2^(1-bias) the step is fixed; above, it is 2^(e-M). Rounding with rintf is RNE.
    const int min_normal_exp = 1 - F::bias;
    int e = static_cast<int>(a >> 23) - 127;
    if (e < min_normal_exp) e = min_normal_exp;
    const int step_exp = e - F::man_bits;
    const float q = __builtin_rintf(ax * bitsf(static_cast<uint32_t>(127 - step_exp) << 23));
    // q counts steps of 2^step_exp: q in [2^M, 2^(M+1)] for normals (q == 2^(M+1) carries into
    // the next binade), q < 2^M for subnormals.
    const uint32_t qi = static_cast<uint32_t>(q);
    if (qi == 0) {
      mag = 0;
    } else {
      const int be = e + F::bias;  // biased exponent of the binade, >= 1
      uint32_t enc;
      if (qi < (1u << F::man_bits)) enc = qi;                                 // subnormal
      else enc = (static_cast<uint32_t>(be) << F::man_bits) + (qi - (1u << F::man_bits));
      mag = enc > F::max_bits ? F::max_bits : static_cast<uint8_t>(enc);
    }
  }
  if (!F::has_neg_zero && mag == 0) return 0;
  return static_cast<uint8_t>(sign | mag);
}

}  // namespace detail

// 8-bit float storage types, each one format on every target (what the IR's type says): the OCP
// formats fp8e4m3 / fp8e5m2 (torch.float8_e4m3fn / float8_e5m2; gfx12 and gfx950's matrix cores)
// and the FNUZ ones fp8e4m3fnuz / fp8e5m2fnuz (torch.float8_e4m3fnuz / float8_e5m2fnuz; gfx942's).
// Conversions are the software ones above, so a type means the same bytes everywhere; which
// format a target's matrix instructions read is mma8.cuh's (and the verifier's) business.
// Arithmetic converts through float.
template <class F>
struct f8 {
  using format = F;
  uint8_t bits;
  f8() = default;
  HK_DEV explicit f8(float f) : bits(detail::float_to_f8<F>(f)) {}
  HK_DEV explicit operator float() const { return detail::f8_to_float<F>(bits); }
};
using fp8e4m3 = f8<detail::ocp_e4m3>;
using fp8e5m2 = f8<detail::ocp_e5m2>;
using fp8e4m3fnuz = f8<detail::fnuz_e4m3>;
using fp8e5m2fnuz = f8<detail::fnuz_e5m2>;

// Boolean mask element (the IR's i1).
using i1 = bool;

template <class T> inline constexpr bool is_fp8 = false;
template <class F> inline constexpr bool is_fp8<f8<F>> = true;
// fp8e4m3 or fp8e4m3fnuz (the "fp8" matrix instructions); the e5m2 formats are their "bf8".
template <class T> inline constexpr bool is_e4m3 = false;
template <class F> inline constexpr bool is_e4m3<f8<F>> = F::man_bits == 3;
template <class T> inline constexpr bool is_fnuz = false;
template <class F> inline constexpr bool is_fnuz<f8<F>> = !F::has_neg_zero;

template <class T>
inline constexpr bool is_element =
    __is_same(T, float) || __is_same(T, bf16) || __is_same(T, fp16) || __is_same(T, int32_t) ||
    __is_same(T, int8_t) || __is_same(T, bool) || is_fp8<T>;

template <class T> inline constexpr bool is_16bit = __is_same(T, bf16) || __is_same(T, fp16);
// The matrix operand types (16-bit and 8-bit): laid out as the matrix cores read their operands.
template <class T> inline constexpr bool is_operand_type = is_16bit<T> || __is_same(T, int8_t) || is_fp8<T>;

// The type an element computes in.
template <class T> struct compute_type { using type = float; };
template <> struct compute_type<int32_t> { using type = int; };
template <> struct compute_type<int8_t> { using type = int; };
template <> struct compute_type<bool> { using type = int; };
template <> struct compute_type<uint8_t> { using type = int; };  // bool tiles' storage
template <class T> using compute_t = typename compute_type<T>::type;

// What a register tile stores per element. Masks are stored as bytes (0 or 1) in VGPRs: kept as
// bool, the compiler holds each mask element as a lane mask in an SGPR (pair), and a tile's
// worth of them runs out of SGPRs.
template <class T> struct storage_type { using type = T; };
template <> struct storage_type<bool> { using type = uint8_t; };
template <class T> using storage_t = typename storage_type<T>::type;

// Element <-> compute-type conversions (float->16-bit and float->float8 round to nearest even).
template <class T> HK_DEV compute_t<T> to_compute(T x) {
  if constexpr (is_fp8<T>) return static_cast<float>(x);
  else return static_cast<compute_t<T>>(x);
}
template <class T, class C> HK_DEV T from_compute(C x) {
  if constexpr (is_fp8<T>) return T(static_cast<float>(x));
  else if constexpr (__is_same(T, bool)) return x != 0;
  else if constexpr (__is_same(T, int8_t)) return static_cast<int8_t>(x < -128 ? -128 : x > 127 ? 127 : x);
  else return static_cast<T>(x);
}

// float -> int rounds toward zero and saturates, NaN -> 0 (what v_cvt_i32_f32 does; a plain C++
// cast would leave out-of-range values undefined).
HK_DEV int float_to_int(float x) {
  if (!(x == x)) return 0;
  if (x >= 2147483648.0f) return 0x7FFFFFFF;
  if (x < -2147483648.0f) return static_cast<int>(0x80000000u);
  return static_cast<int>(x);
}

template <class C, class X> HK_DEV C to_compute_as(X x) {
  if constexpr (__is_same(C, int) && __is_same(X, float)) return float_to_int(x);
  else return static_cast<C>(x);
}

// Convert between any two element types through the destination's compute type (floating
// results round to nearest even; integer results round toward zero and saturate).
template <class U, class T> HK_DEV U convert(T x) {
  return from_compute<U>(to_compute_as<compute_t<U>>(to_compute(x)));
}

}  // namespace hk
