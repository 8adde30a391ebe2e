// Floating-point formats the ISA converts between: f16 and bf16 (round to nearest even), and the
// 8-bit formats (OCP e4m3/e5m2 on gfx950 and gfx12, the FNUZ variants on gfx942).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace emu {

inline float bf(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t fb(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline double bd(uint64_t u) { double f; std::memcpy(&f, &u, 8); return f; }
inline uint64_t db(double f) { uint64_t u; std::memcpy(&u, &f, 8); return u; }

// f16 -> f32 by bit manipulation (exact; the library conversion is a slow soft-float call).
inline float h2f(uint16_t h) {
  uint32_t s = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t u;
  if (e == 0x1f) u = s | 0x7f800000u | (m << 13);
  else if (e != 0) u = s | ((e + 112) << 23) | (m << 13);
  else { float f = float(m) * 0x1p-24f; return s ? -f : f; }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t f2h(float f) { _Float16 x = _Float16(f); uint16_t h; std::memcpy(&h, &x, 2); return h; }
inline uint16_t d2h(double f) { _Float16 x = _Float16(f); uint16_t h; std::memcpy(&h, &x, 2); return h; }

inline float bf2f(uint16_t b) { return bf(uint32_t(b) << 16); }
inline uint16_t f2bf(float f) {
  uint32_t u = fb(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);   // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

// An 8-bit float: `man` mantissa bits, exponent bias `bias`; `fnuz`: no infinities, no -0, one
// NaN (0x80); OCP e4m3 has no infinities and NaN = S.1111.111; OCP e5m2 is IEEE-like.
struct F8Format { int man, bias; bool fnuz, ieee; };
constexpr F8Format E4M3_OCP{3, 7, false, false}, E5M2_OCP{2, 15, false, true};
constexpr F8Format E4M3_FNUZ{3, 8, true, false}, E5M2_FNUZ{2, 16, true, false};

inline float f8_to_f32(uint8_t x, F8Format f) {
  int ebits = 7 - f.man;
  int sign = x >> 7, e = (x >> f.man) & ((1 << ebits) - 1), mant = x & ((1 << f.man) - 1);
  if (f.fnuz) {
    if (x == 0x80) return NAN;
  } else if (f.ieee) {
    if (e == (1 << ebits) - 1) return mant ? NAN : (sign ? -INFINITY : INFINITY);
  } else if (e == (1 << ebits) - 1 && mant == (1 << f.man) - 1) {
    return NAN;
  }
  float v = e == 0 ? std::ldexp(float(mant), 1 - f.bias - f.man)
                   : std::ldexp(float(mant + (1 << f.man)), e - f.bias - f.man);
  return sign ? -v : v;
}

// Round to nearest even; a value that rounds beyond the largest finite one (infinity included)
// saturates to it when `sat` (the conversions' clamp bit), else overflows to NaN (FNUZ, OCP e4m3)
// or infinity (OCP e5m2). Without clamp this is torch's .to() of the FNUZ formats and of e5m2:
// 248 is e4m3fnuz's tie between 240 and the first value past it, and overflows.
inline uint8_t f32_to_f8(float v, F8Format f, bool sat) {
  int ebits = 7 - f.man;
  if (std::isnan(v)) return f.fnuz ? 0x80 : 0x7f;
  uint8_t sign = std::signbit(v) ? 0x80 : 0;
  float a = std::fabs(v);
  int emax = (1 << ebits) - 1 - f.bias - (f.ieee ? 1 : 0);
  float maxv = f.ieee || f.fnuz ? std::ldexp(float((2 << f.man) - 1), emax - f.man)
                                : std::ldexp(float((2 << f.man) - 2), emax - f.man);
  if (f.fnuz) maxv = std::ldexp(float((2 << f.man) - 1), (1 << ebits) - 1 - f.bias - f.man);
  const uint8_t overflow = f.fnuz ? 0x80 : (f.ieee ? uint8_t(sign | 0x7c) : uint8_t(sign | 0x7f));
  if (std::isinf(a)) {
    if (!sat) return overflow;
    a = maxv;
  }
  int minexp = 1 - f.bias;
  int e;
  std::frexp(a, &e);
  e -= 1;                                              // a = 1.x * 2^e
  if (e < minexp) e = minexp;
  float q = std::ldexp(a, f.man - e);                  // mantissa with the implicit bit, scaled
  float r = std::nearbyint(q);                         // ties to even under the default mode
  if (std::ldexp(r, e - f.man) > maxv) {               // rounds past the largest finite value
    if (!sat) return overflow;
    return f32_to_f8(sign ? -maxv : maxv, f, false);
  }
  uint32_t m = uint32_t(r);
  if (m >= (2u << f.man)) { m >>= 1; e += 1; }
  uint32_t bits;
  if (m < (1u << f.man)) bits = m;                     // denormal (e == minexp)
  else bits = (uint32_t(e + f.bias) << f.man) | (m & ((1u << f.man) - 1));
  if (f.fnuz && bits == 0) return 0;                   // no negative zero
  return uint8_t(sign | bits);
}

// Shared by the VALU and the gfx12 SALU float forms.
inline float fmaximum(float a, float b) {   // NaN-propagating, -0 < +0
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline float fminimum(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
inline int32_t cvt_i32(float f) {
  if (std::isnan(f)) return 0;
  if (f >= 2147483647.0f) return 2147483647;
  if (f <= -2147483648.0f) return int32_t(0x80000000u);
  return int32_t(f);
}
inline uint32_t cvt_u32(float f) {
  if (std::isnan(f) || f <= 0.0f) return 0;
  if (f >= 4294967295.0f) return 0xffffffffu;
  return uint32_t(f);
}
// An f16 fma rounds once: the f32 fma of f16 inputs is exact enough except for double rounding,
// so compute in double.
inline float fmah(float a, float b, float c) { return float(std::fma(double(a), double(b), double(c))); }
// Round toward zero: convert, and step back toward zero when rounding went away from it.
inline uint16_t f2h_rtz(float f) {
  uint16_t h = f2h(f);
  float back = h2f(h);
  if (std::isinf(back) && !std::isinf(f)) return uint16_t((h & 0x8000) | 0x7bff);
  if (!std::isnan(f) && std::fabs(back) > std::fabs(f)) h = uint16_t(h - 1);
  return h;
}

// The OCP MX 6- and 4-bit floats (fp6 e2m3, bf6 e3m2, fp4 e2m1): every code is finite, no
// infinities or NaN; the sign is the bit above the exponent.
inline float mx_to_f32(uint32_t x, int ebits, int man, int bias) {
  int sign = (x >> (ebits + man)) & 1, e = (x >> man) & ((1 << ebits) - 1), mant = x & ((1 << man) - 1);
  float v = e == 0 ? std::ldexp(float(mant), 1 - bias - man) : std::ldexp(float(mant + (1 << man)), e - bias - man);
  return sign ? -v : v;
}

inline uint32_t bitrev32(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline uint64_t bitrev64(uint64_t x) { return (uint64_t(bitrev32(uint32_t(x))) << 32) | bitrev32(uint32_t(x >> 32)); }

}  // namespace emu
