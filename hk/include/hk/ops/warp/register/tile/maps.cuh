// Elementwise operations on register tiles and vectors: fills, unary and binary maps,
// comparisons into bool masks, select. The destination may alias an operand. Arithmetic runs in
// the compute type (float for every floating type); 16-bit and 8-bit results round to nearest
// even. Operands must share a layout (same_slots); hk::copy converts between layouts.
#pragma once

#include "../../../../types/register/rt.cuh"

namespace hk {
namespace detail {

template <class X> inline constexpr bool is_reg = is_rt<X> || is_rv<X>;

template <class X> struct reg_info;
template <class T, int R, int C, class L> struct reg_info<rt<T, R, C, L>> {
  static constexpr int n = rt<T, R, C, L>::strips * rt<T, R, C, L>::slots;
};
template <class T, int N, class D> struct reg_info<rv<T, N, D>> { static constexpr int n = rv<T, N, D>::slots; };

// Flat slot I of a tile (strip-major) or vector.
template <int I, class X>
HK_DEV auto& slot(X& x) {
  using P = unqual_t<X>;
  if constexpr (is_rt<P>) return x.data[I / P::slots][I % P::slots];
  else return x.data[I];
}

template <class A, class B>
inline constexpr bool congruent = [] {
  if constexpr (is_rt<A> && is_rt<B>) return same_slots<A, B>;
  else if constexpr (is_rv<A> && is_rv<B>) return A::length == B::length && __is_same(typename A::dist, typename B::dist);
  else return false;
}();

// d = f(a) slot by slot, computing in d's compute type.
template <class D, class A, class F>
HK_DEV void map(D& d, const A& a, F f) {
  static_assert(congruent<D, A>, "hk: operands must share a layout (convert with hk::copy)");
  using T = typename D::dtype;
  unroll<reg_info<D>::n>([&](auto i) {
    slot<i>(d) = from_compute<T>(f(to_compute_as<compute_t<T>>(to_compute(slot<i>(a)))));
  });
}

template <class D, class A, class B, class F>
HK_DEV void map(D& d, const A& a, const B& b, F f) {
  static_assert(congruent<D, A> && congruent<D, B>, "hk: operands must share a layout (convert with hk::copy)");
  using T = typename D::dtype;
  using C = compute_t<T>;
  unroll<reg_info<D>::n>([&](auto i) {
    slot<i>(d) = from_compute<T>(f(to_compute_as<C>(to_compute(slot<i>(a))), to_compute_as<C>(to_compute(slot<i>(b)))));
  });
}

template <class D, class A, class F>
HK_DEV void map_scalar(D& d, const A& a, compute_t<typename D::dtype> s, F f) {
  static_assert(congruent<D, A>, "hk: operands must share a layout (convert with hk::copy)");
  using T = typename D::dtype;
  using C = compute_t<T>;
  unroll<reg_info<D>::n>([&](auto i) { slot<i>(d) = from_compute<T>(f(to_compute_as<C>(to_compute(slot<i>(a))), s)); });
}

template <class X> inline constexpr bool is_float_reg = __is_same(compute_t<typename X::dtype>, float);

HK_DEV float tanh_f(float u) { return 1.0f - 2.0f / (1.0f + __builtin_expf(2.0f * u)); }

}  // namespace detail

// ---- fills ----------------------------------------------------------------------------------

template <class X> requires detail::is_reg<X>
HK_DEV void fill(X& d, compute_t<typename X::dtype> v) {
  const auto e = from_compute<typename X::dtype>(v);
  unroll<detail::reg_info<X>::n>([&](auto i) { detail::slot<i>(d) = e; });
}
template <class X> requires detail::is_reg<X> HK_DEV void zero(X& d) { fill(d, 0); }
template <class X> requires detail::is_reg<X>
HK_DEV void neg_infty(X& d) {
  if constexpr (detail::is_float_reg<X>) fill(d, -__builtin_inff());
  else fill(d, static_cast<int>(0x80000000u));
}
template <class X> requires detail::is_reg<X>
HK_DEV void pos_infty(X& d) {
  if constexpr (detail::is_float_reg<X>) fill(d, __builtin_inff());
  else fill(d, 0x7FFFFFFF);
}

// ---- unary maps -----------------------------------------------------------------------------
// exp, log, sqrt are the compiler's accurate expansions of the hardware's exp2/log2/sqrt
// (not the fast approximations); exp2_ftz is v_exp_f32 alone, whose results below 2^-126 are 0
// (within 1 ulp otherwise, like the expansion); sin, cos, tanh and pow are the device library's (ocml). gelu
// is the tanh approximation 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))), as torch's
// gelu(approximate="tanh"). round is to nearest, ties to even (as torch.round).

#define HK_UNARY_FLOAT(NAME, EXPR)                                                              \
  template <class D, class A> requires detail::is_reg<D>                                      \
  HK_DEV void NAME(D& d, const A& a) {                                                          \
    static_assert(detail::is_float_reg<D>, "hk::" #NAME ": needs a floating-point destination"); \
    detail::map(d, a, [](float x) { return EXPR; });                                            \
  }

HK_UNARY_FLOAT(exp, __builtin_expf(x))
HK_UNARY_FLOAT(exp2, __builtin_exp2f(x))
HK_UNARY_FLOAT(exp2_ftz, __builtin_amdgcn_exp2f(x))  // v_exp_f32 alone: no denormal results
HK_UNARY_FLOAT(log, __builtin_logf(x))
HK_UNARY_FLOAT(log2, __builtin_log2f(x))
HK_UNARY_FLOAT(sqrt, __builtin_sqrtf(x))
HK_UNARY_FLOAT(rsqrt, 1.0f / __builtin_sqrtf(x))
HK_UNARY_FLOAT(gelu, 0.5f * x * (1.0f + detail::tanh_f(0.7978845608028654f * (x + 0.044715f * x * x * x))))
HK_UNARY_FLOAT(silu, x / (1.0f + __builtin_expf(-x)))
HK_UNARY_FLOAT(round, __builtin_rintf(x))
HK_UNARY_FLOAT(floor, __builtin_floorf(x))
HK_UNARY_FLOAT(sin, ::sinf(x))
HK_UNARY_FLOAT(cos, ::cosf(x))
HK_UNARY_FLOAT(tanh, ::tanhf(x))
HK_UNARY_FLOAT(sigmoid, 1.0f / (1.0f + __builtin_expf(-x)))
#undef HK_UNARY_FLOAT

template <class D, class A> requires detail::is_reg<D>
HK_DEV void abs(D& d, const A& a) {
  // Floats clear the sign bit (abs(-0.0) is +0.0, as torch.abs); integers wrap at the minimum.
  detail::map(d, a, [](auto x) {
    if constexpr (__is_floating_point(decltype(x))) return __builtin_fabsf(x);
    else return x < 0 ? -x : x;
  });
}
template <class D, class A> requires detail::is_reg<D>
HK_DEV void neg(D& d, const A& a) { detail::map(d, a, [](auto x) { return -x; }); }
// relu keeps NaN (x < 0 is false for NaN).
template <class D, class A> requires detail::is_reg<D>
HK_DEV void relu(D& d, const A& a) { detail::map(d, a, [](auto x) { return x < 0 ? decltype(x)(0) : x; }); }

// ---- binary maps: (d, a, b) with b a register tile/vector of the same layout, or a scalar -----
// max/min on floats are IEEE maxNum/minNum (v_max_f32): a NaN operand yields the other one.

// Integer elements wrap (i32) and divide as the scalars do (common/ints.cuh): x / 0 == 0.

namespace detail {
struct op_add {
  template <class C> HK_DEV C operator()(C x, C y) const {
    if constexpr (__is_same(C, int)) return wrap_add(x, y); else return x + y;
  }
};
struct op_sub {
  template <class C> HK_DEV C operator()(C x, C y) const {
    if constexpr (__is_same(C, int)) return wrap_sub(x, y); else return x - y;
  }
};
struct op_mul {
  template <class C> HK_DEV C operator()(C x, C y) const {
    if constexpr (__is_same(C, int)) return wrap_mul(x, y); else return x * y;
  }
};
struct op_div {
  template <class C> HK_DEV C operator()(C x, C y) const {
    if constexpr (__is_same(C, int)) return div_s(x, y); else return x / y;
  }
};
struct op_max {
  template <class C> HK_DEV C operator()(C x, C y) const {
    if constexpr (__is_same(C, float)) return __builtin_fmaxf(x, y); else return x > y ? x : y;
  }
};
struct op_min {
  template <class C> HK_DEV C operator()(C x, C y) const {
    if constexpr (__is_same(C, float)) return __builtin_fminf(x, y); else return x < y ? x : y;
  }
};
struct op_pow {
  HK_DEV float operator()(float x, float y) const { return ::powf(x, y); }
};
// Bitwise, on int32 elements (what unpacks quantized weights): shifts by the amount modulo 32,
// as v_lshlrev_b32 / v_ashrrev_i32 do (the mask costs nothing); shr is arithmetic.
struct op_band {
  HK_DEV int operator()(int x, int y) const { return x & y; }
};
struct op_bor {
  HK_DEV int operator()(int x, int y) const { return x | y; }
};
struct op_bxor {
  HK_DEV int operator()(int x, int y) const { return x ^ y; }
};
struct op_shl {
  HK_DEV int operator()(int x, int y) const { return static_cast<int>(static_cast<uint32_t>(x) << (y & 31)); }
};
struct op_shr {
  HK_DEV int operator()(int x, int y) const { return x >> (y & 31); }
};
}  // namespace detail

#define HK_BINARY(NAME, OP)                                                                     \
  template <class D, class A, class B> requires(detail::is_reg<D> && detail::is_reg<B>)       \
  HK_DEV void NAME(D& d, const A& a, const B& b) { detail::map(d, a, b, OP{}); }                \
  template <class D, class A> requires detail::is_reg<D>                                      \
  HK_DEV void NAME(D& d, const A& a, compute_t<typename D::dtype> s) { detail::map_scalar(d, a, s, OP{}); }

HK_BINARY(add, detail::op_add)
HK_BINARY(sub, detail::op_sub)
HK_BINARY(div, detail::op_div)
HK_BINARY(max, detail::op_max)
HK_BINARY(min, detail::op_min)
HK_BINARY(pow, detail::op_pow)
HK_BINARY(band, detail::op_band)
HK_BINARY(bor, detail::op_bor)
HK_BINARY(bxor, detail::op_bxor)
HK_BINARY(shl, detail::op_shl)
HK_BINARY(shr, detail::op_shr)
#undef HK_BINARY

// An fp16 tile times a float scalar: the compiler multiplies with v_fma_mix and a +0 addend,
// which turns a -0 product into +0. An addend of -0 it cannot see through (the asm) keeps IEEE's
// sign at the same cost: x * y + -0 is x * y for every x and y.
template <class D, class A, class B> requires(detail::is_reg<D> && detail::is_reg<B>)
HK_DEV void mul(D& d, const A& a, const B& b) { detail::map(d, a, b, detail::op_mul{}); }
template <class D, class A> requires detail::is_reg<D>
HK_DEV void mul(D& d, const A& a, compute_t<typename D::dtype> s) {
  if constexpr (__is_same(typename D::dtype, fp16)) {
    float neg_zero = -0.0f;
    asm("" : "+v"(neg_zero));
    detail::map_scalar(d, a, s, [neg_zero](float x, float y) { return __builtin_fmaf(x, y, neg_zero); });
  } else {
    detail::map_scalar(d, a, s, detail::op_mul{});
  }
}

// ---- comparisons and select -----------------------------------------------------------------
// A mask is a bool tile (or vector) with the layout of the compared operands. bool tiles use the
// accumulator pattern, so masks come from 32-bit/8-bit tiles (float, int32); compare 16-bit data
// after hk::copy to float (exact).

namespace detail {
// Stores a comparison result as a 0/1 byte held in a VGPR: the empty asm keeps the compiler from
// folding the byte back into the comparison's lane mask (an SGPR per element).
HK_DEV uint8_t mask_byte(bool c) {
  uint32_t w = c ? 1u : 0u;
  asm("" : "+v"(w));
  return static_cast<uint8_t>(w);
}

template <class M, class A, class B, class F>
HK_DEV void compare(M& m, const A& a, const B& b, F f) {
  static_assert(__is_same(typename M::dtype, bool), "hk: a comparison writes a bool mask");
  static_assert(congruent<M, A> && congruent<M, B>, "hk: mask and operands must share a layout; compare float copies of 16-bit tiles");
  using C = compute_t<typename A::dtype>;
  unroll<reg_info<M>::n>([&](auto i) { slot<i>(m) = mask_byte(f(to_compute_as<C>(to_compute(slot<i>(a))), to_compute_as<C>(to_compute(slot<i>(b))))); });
}
template <class M, class A, class F>
HK_DEV void compare_scalar(M& m, const A& a, compute_t<typename A::dtype> s, F f) {
  static_assert(__is_same(typename M::dtype, bool), "hk: a comparison writes a bool mask");
  static_assert(congruent<M, A>, "hk: mask and operand must share a layout; compare float copies of 16-bit tiles");
  unroll<reg_info<M>::n>([&](auto i) { slot<i>(m) = mask_byte(f(to_compute(slot<i>(a)), s)); });
}
}  // namespace detail

#define HK_COMPARE(NAME, OP)                                                                    \
  template <class M, class A, class B> requires(detail::is_reg<M> && detail::is_reg<B>)       \
  HK_DEV void NAME(M& m, const A& a, const B& b) {                                              \
    detail::compare(m, a, b, [](auto x, auto y) { return x OP y; });                            \
  }                                                                                             \
  template <class M, class A> requires detail::is_reg<M>                                      \
  HK_DEV void NAME(M& m, const A& a, compute_t<typename A::dtype> s) {                          \
    detail::compare_scalar(m, a, s, [](auto x, auto y) { return x OP y; });                     \
  }

HK_COMPARE(gt, >)
HK_COMPARE(ge, >=)
HK_COMPARE(lt, <)
HK_COMPARE(le, <=)
HK_COMPARE(eq, ==)
HK_COMPARE(ne, !=)
#undef HK_COMPARE

// d = mask ? a : b, where b may be a scalar.
template <class D, class M, class A, class B> requires(detail::is_reg<D> && detail::is_reg<B>)
HK_DEV void select(D& d, const M& m, const A& a, const B& b) {
  static_assert(__is_same(typename M::dtype, bool), "hk::select: the mask must be a bool tile");
  static_assert(detail::congruent<D, M> && detail::congruent<D, A> && detail::congruent<D, B>, "hk::select: operands must share a layout");
  using T = typename D::dtype;
  unroll<detail::reg_info<D>::n>([&](auto i) {
    detail::slot<i>(d) = detail::slot<i>(m) ? convert<T>(detail::slot<i>(a)) : convert<T>(detail::slot<i>(b));
  });
}
template <class D, class M, class A> requires detail::is_reg<D>
HK_DEV void select(D& d, const M& m, const A& a, compute_t<typename D::dtype> b) {
  static_assert(__is_same(typename M::dtype, bool), "hk::select: the mask must be a bool tile");
  static_assert(detail::congruent<D, M> && detail::congruent<D, A>, "hk::select: operands must share a layout");
  using T = typename D::dtype;
  const T bb = from_compute<T>(b);
  unroll<detail::reg_info<D>::n>([&](auto i) {
    detail::slot<i>(d) = detail::slot<i>(m) ? convert<T>(detail::slot<i>(a)) : bb;
  });
}

}  // namespace hk
