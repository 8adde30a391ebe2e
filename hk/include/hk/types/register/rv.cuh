// Register vectors: hk::rv<T, N, D>, one wave's vector of N (a multiple of 16) elements,
// distributed as D says (layout.cuh). Tiles name theirs: rt::col_vec (one element per row of the
// tile) and rt::row_vec (one per column); hk::col_vec<RT, U> / hk::row_vec<RT, U> are the same
// vectors with element type U.
#pragma once

#include "layout.cuh"

namespace hk {

template <class T, int N, class D = vl_major>
struct rv {
  static_assert(is_element<T>, "hk::rv: unsupported element type");
  static_assert(N > 0 && N % 16 == 0, "hk::rv: length must be a positive multiple of 16");
  using dtype = T;
  using dist = D;
  static constexpr int length = N;
  static constexpr bool is_major = D::is_major;

  template <class D2> struct slots_of { static constexpr int value = N / 16; };
  template <class P> struct slots_of<vl_minor<P>> { static constexpr int value = P::template slots<N>(); };
  static constexpr int slots = slots_of<D>::value;

  storage_t<T> data[slots];

  // Index of the element in slot s for lane group g and in-group lane a.
  static constexpr int index(int s, int g, int a) {
    if constexpr (D::is_major) return 16 * s + a;
    else return D::pattern::template minor_of<N>(s, g);
  }
};

template <class X> inline constexpr bool is_rv = false;
template <class T, int N, class D> inline constexpr bool is_rv<rv<T, N, D>> = true;

// The same distribution and length with another element type.
template <class V, class U> using rv_as = rv<U, V::length, typename V::dist>;

}  // namespace hk
