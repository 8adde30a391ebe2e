// How a register tile meets memory: each lane's slots in runs of elements that are contiguous
// in a row-major tensor, and the widest loads/stores that move them.
#pragma once

#include "../../../../common/words.cuh"
#include "../../../../types/register/rt.cuh"

namespace hk::detail {

// B bytes at p, which must be B-aligned (the type's alignment tells the compiler so, which is
// what makes these single ds_load_b128 / global_load_b128 instructions).
template <int B, class T>
HK_DEV void load_bytes(T* dst, const T* p) {
  using W = typename bytes_t<B>::type;
  struct elems { T v[B / sizeof(T)]; };
  const elems e = bit_cast<elems>(*reinterpret_cast<const W*>(p));
  unroll<B / static_cast<int>(sizeof(T))>([&](auto i) { dst[i] = e.v[i]; });
}
template <int B, class T>
HK_DEV void store_bytes(T* p, const T* src) {
  using W = typename bytes_t<B>::type;
  struct elems { T v[B / sizeof(T)]; };
  elems e;
  unroll<B / static_cast<int>(sizeof(T))>([&](auto i) { e.v[i] = src[i]; });
  *reinterpret_cast<W*>(p) = bit_cast<W>(e);
}

// Length of the memory run starting at slot E: the pattern's run when the slots run along
// columns (rows major), else one element (consecutive slots are different rows).
template <class RT, int E>
inline constexpr int run_at = RT::rows_major ? RT::pattern::template run_len<RT::minor>(E) : 1;

// f(s, ic<E>, ic<L>, row, col) for each run of L slots E..E+L-1 of strip s; row/col tile-local.
template <class RT, class F>
HK_DEV void for_each_run(F f) {
  const int lane = laneid(), a = lane & 15, g = lane >> 4;
  unroll<RT::strips>([&](auto s) {
    unroll<RT::slots>([&](auto e) {
      constexpr int E = decltype(e)::value;
      constexpr int L = run_at<RT, E>;
      if constexpr (E % L == 0) f(s, e, ic<L>{}, RT::row_of(s, E, g, a), RT::col_of(s, E, g, a));
    });
  });
}

// Widest piece (bytes) a run of L elements of T moves in: at most 16.
template <class T, int L>
inline constexpr int piece_bytes = L * static_cast<int>(sizeof(T)) < 16 ? L * static_cast<int>(sizeof(T)) : 16;

// RDNA3 operand tiles hold every strip in both lane groups; stores are done by group 0 only.
template <class RT>
HK_DEV bool writes_memory() {
  if constexpr (RT::pattern::dup) return (laneid() >> 4) == 0;
  else return true;
}

}  // namespace hk::detail
