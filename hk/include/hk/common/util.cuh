// Compile-time loops and the cross-lane primitives every family provides.
#pragma once

#include "arch.cuh"

namespace hk {

template <int I> struct ic { static constexpr int value = I; constexpr operator int() const { return I; } };

namespace detail {

template <class T, T... I> struct int_seq {};

template <class F, int... I>
HK_DEV void unroll_seq(F& f, int_seq<int, I...>) { (f(ic<I>{}), ...); }

}  // namespace detail

// Calls f(ic<0>{}) ... f(ic<N-1>{}) in order (none when N < 1): every index is a constant, so
// register arrays indexed by it stay in registers (a runtime index into a register array would go
// through scratch). A fold over one index pack, not a recursion: one function per loop instead of
// one per step keeps the compiler's inliner from working through N small functions.
template <int N, class F>
HK_DEV void unroll(F&& f) {
  detail::unroll_seq(f, __make_integer_seq<detail::int_seq, int, (N > 0 ? N : 0)>{});
}

template <class T> struct unqual { using type = T; };
template <class T> struct unqual<const T> { using type = T; };
template <class T> struct unqual<T&> { using type = typename unqual<T>::type; };
template <class T> struct unqual<const T&> { using type = T; };
// T without const and reference.
template <class T> using unqual_t = typename unqual<T>::type;

template <class To, class From>
HK_DEV To bit_cast(const From& x) {
  static_assert(sizeof(To) == sizeof(From), "hk::bit_cast: sizes differ");
  return __builtin_bit_cast(To, x);
}

namespace detail {

// Pulls `x` from lane `src` (any lane of the wave).
HK_DEV uint32_t bpermute(uint32_t x, int src) {
  return static_cast<uint32_t>(__builtin_amdgcn_ds_bpermute(src << 2, static_cast<int>(x)));
}

// x from lane (lane ^ MASK). RDNA: DPP row_xmask within a row of 16, v_permlanex16 across the
// two rows. CDNA: DPP quad_perm for 1 and 2, ds_swizzle's xor mode within 32 lanes, bpermute
// across the two halves of wave64.
template <int MASK>
HK_DEV uint32_t shfl_xor(uint32_t x) {
  static_assert(MASK > 0 && MASK < WAVE && (MASK & (MASK - 1)) == 0, "hk: xor distance must be a power of two below the wave size");
  const int v = static_cast<int>(x);
#if defined(HK_RDNA)
  if constexpr (MASK < 16) {
    return static_cast<uint32_t>(__builtin_amdgcn_update_dpp(0, v, 0x160 | MASK, 0xF, 0xF, false));
  } else {
    // Fetch-inactive: every lane reads its source, so the old value is never used and needs no
    // register of its own (a zero there costs a v_mov per exchange).
    return static_cast<uint32_t>(
        __builtin_amdgcn_permlanex16(__builtin_nondeterministic_value(v), v, 0x76543210u, 0xFEDCBA98u, true, false));
  }
#else
  if constexpr (MASK == 1) {
    return static_cast<uint32_t>(__builtin_amdgcn_update_dpp(0, v, 0xB1, 0xF, 0xF, false));
  } else if constexpr (MASK == 2) {
    return static_cast<uint32_t>(__builtin_amdgcn_update_dpp(0, v, 0x4E, 0xF, 0xF, false));
  } else if constexpr (MASK < 32) {
    return static_cast<uint32_t>(__builtin_amdgcn_ds_swizzle(v, 0x1F | (MASK << 10)));
  } else {
    return bpermute(x, laneid() ^ MASK);
  }
#endif
}

template <int MASK, class T>
HK_DEV T shfl_xor_v(T x) {
  static_assert(sizeof(T) == 4, "hk: cross-lane moves carry 32-bit values");
  return bit_cast<T>(shfl_xor<MASK>(bit_cast<uint32_t>(x)));
}

// All-reduce over the 16 lanes of a lane group (lanes with equal lane/16).
template <class T, class Op>
HK_DEV T reduce_group16(T x, Op op) {
  x = op(x, shfl_xor_v<1>(x));
  x = op(x, shfl_xor_v<2>(x));
  x = op(x, shfl_xor_v<4>(x));
  x = op(x, shfl_xor_v<8>(x));
  return x;
}

// All-reduce over the lane groups (lanes with equal lane%16).
template <class T, class Op>
HK_DEV T reduce_across_groups(T x, Op op) {
  x = op(x, shfl_xor_v<16>(x));
  if constexpr (WAVE == 64) x = op(x, shfl_xor_v<32>(x));
  return x;
}

// `x` (a wave-uniform int: the first lane's value is taken), as a value the compiler cannot see through: tests of it stay where
// they are used, on the path that uses them (an edge path's per-element bounds), instead of
// being kept out of a loop, one scalar lane mask per element, for every path.
HK_DEV int opaque(int x) {
  x = __builtin_amdgcn_readfirstlane(x);  // (free where the compiler knows it is uniform)
  asm volatile("" : "+s"(x));
  return x;
}

}  // namespace detail
}  // namespace hk
