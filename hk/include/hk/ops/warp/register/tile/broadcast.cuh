// Row and column broadcasts: combine each row of a tile with one element of a col_vec (add_row
// ... min_row, broadcast_row), or each column with one element of a row_vec (add_col ... min_col,
// broadcast_col). The vector is the tile's col_vec / row_vec (any element type) or any vector of
// that length: one reduced from (or converted from) a tile of another element width or layout
// holds its elements in other lanes and is redistributed first (conversions.cuh).
#pragma once

#include "conversions.cuh"

namespace hk {
namespace detail {

template <class RT, class V, bool PER_ROW>
inline constexpr bool vec_fits = [] {
  using want = __type_pack_element<PER_ROW ? 0 : 1, typename RT::col_vec, typename RT::row_vec>;
  return is_rv<V> && V::length == want::length && __is_same(typename V::dist, typename want::dist);
}();

// The tile's col_vec (PER_ROW) or row_vec with V's element type.
template <class RT, class V, bool PER_ROW>
using vec_of = rv_as<__type_pack_element<PER_ROW ? 0 : 1, typename RT::col_vec, typename RT::row_vec>,
                     typename V::dtype>;

// v in RT's distribution: v itself when it has it, else a redistributed copy.
template <class RT, bool PER_ROW, class V>
HK_DEV decltype(auto) in_tile_dist(const V& v) {
  static_assert(is_rv<V> && V::length == (PER_ROW ? RT::rows : RT::cols),
                "hk: a per-row vector has one element per row of the tile, a per-column one one per column");
  if constexpr (vec_fits<RT, V, PER_ROW>) {
    return (v);
  } else {
    vec_of<RT, V, PER_ROW> w;
    relayout_vec(w, v);
    return w;
  }
}

// d[slot] = f(a[slot], v[row or column of the slot]).
template <bool PER_ROW, class D, class A, class V0, class F>
HK_DEV void broadcast_map(D& d, const A& a, const V0& v0, F f) {
  static_assert(is_rt<D> && congruent<D, A>, "hk: operands must share a layout (convert with hk::copy)");
  const auto& v = in_tile_dist<D, PER_ROW>(v0);
  using T = typename D::dtype;
  using C = compute_t<T>;
  // The vector runs along the major dimension when it is per row and rows are major, or per
  // column and columns are major.
  constexpr bool along_major = PER_ROW == D::rows_major;
  unroll<D::strips>([&](auto s) {
    unroll<D::slots>([&](auto e) {
      C x;
      if constexpr (along_major) x = to_compute_as<C>(to_compute(v.data[s]));
      else x = to_compute_as<C>(to_compute(v.data[e]));
      d.data[s][e] = from_compute<T>(f(to_compute_as<C>(to_compute(a.data[s][e])), x));
    });
  });
}

}  // namespace detail

#define HK_BROADCAST(NAME, PER_ROW, OP)                                                         \
  template <class D, class A, class V>                                                          \
  HK_DEV void NAME(D& d, const A& a, const V& v) { detail::broadcast_map<PER_ROW>(d, a, v, OP{}); }

HK_BROADCAST(add_row, true, detail::op_add)
HK_BROADCAST(sub_row, true, detail::op_sub)
HK_BROADCAST(mul_row, true, detail::op_mul)
HK_BROADCAST(div_row, true, detail::op_div)
HK_BROADCAST(max_row, true, detail::op_max)
HK_BROADCAST(min_row, true, detail::op_min)
HK_BROADCAST(add_col, false, detail::op_add)
HK_BROADCAST(sub_col, false, detail::op_sub)
HK_BROADCAST(mul_col, false, detail::op_mul)
HK_BROADCAST(div_col, false, detail::op_div)
HK_BROADCAST(max_col, false, detail::op_max)
HK_BROADCAST(min_col, false, detail::op_min)
#undef HK_BROADCAST

namespace detail {
struct op_second { template <class C> HK_DEV C operator()(C, C y) const { return y; } };
}

// d[r][c] = v[r] (v a col_vec) and d[r][c] = v[c] (v a row_vec).
template <class D, class V>
HK_DEV void broadcast_row(D& d, const V& v) { detail::broadcast_map<true>(d, d, v, detail::op_second{}); }
template <class D, class V>
HK_DEV void broadcast_col(D& d, const V& v) { detail::broadcast_map<false>(d, d, v, detail::op_second{}); }

}  // namespace hk
