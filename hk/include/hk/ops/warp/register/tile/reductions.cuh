// Row and column reductions: row_sum / row_max / row_min write a col_vec (one element per row),
// col_sum / col_max / col_min a row_vec (one per column). The (d, a, init) forms combine with an
// initial vector: d = init (op) reduce(a), e.g. a running max. d is the tile's col_vec / row_vec
// (any element type) or any vector of that length, written through a redistribution then.
//
// Along the minor dimension a lane first folds its own slots, then the lane groups combine
// (xor 16, and 32 on wave64) unless every group already holds the whole strip (RDNA3 operands).
// Along the major dimension each lane folds its strips, then the 16 lanes of a group combine
// (xor 1, 2, 4, 8: DPP on RDNA, DPP/ds_swizzle on CDNA).
#pragma once

#include "broadcast.cuh"

namespace hk {
namespace detail {

// The reduction into the tile's own col_vec / row_vec.
template <bool PER_ROW, class V, class A, class Op>
HK_DEV void reduce_in_dist(V& d, const A& a, Op op) {
  using C = compute_t<typename A::dtype>;
  using T = typename V::dtype;
  // Reducing across the minor dimension (the lane's slots) when the result is per row and rows
  // are major, or per column and columns are major.
  constexpr bool over_minor = PER_ROW == A::rows_major;
  if constexpr (over_minor) {
    unroll<A::strips>([&](auto s) {
      C acc = to_compute_as<C>(to_compute(a.data[s][0]));
      unroll<A::slots - 1>([&](auto e) { acc = op(acc, to_compute_as<C>(to_compute(a.data[s][e + 1]))); });
      if constexpr (!A::pattern::dup) acc = reduce_across_groups(acc, op);
      d.data[s] = from_compute<T>(acc);
    });
  } else {
    unroll<A::slots>([&](auto e) {
      C acc = to_compute_as<C>(to_compute(a.data[0][e]));
      unroll<A::strips - 1>([&](auto s) { acc = op(acc, to_compute_as<C>(to_compute(a.data[s + 1][e]))); });
      d.data[e] = from_compute<T>(reduce_group16(acc, op));
    });
  }
}

template <bool PER_ROW, class V, class A, class Op>
HK_DEV void reduce(V& d, const A& a, Op op) {
  static_assert(is_rt<A>, "hk: reductions take a register tile");
  static_assert(is_rv<V> && V::length == (PER_ROW ? A::rows : A::cols),
                "hk: a row reduction writes one element per row, a column reduction one per column");
  if constexpr (!vec_fits<A, V, PER_ROW>) {
    // A vector in another tile's distribution (one it is broadcast onto, say).
    vec_of<A, V, PER_ROW> r;
    reduce_in_dist<PER_ROW>(r, a, op);
    relayout_vec(d, r);
  } else {
    reduce_in_dist<PER_ROW>(d, a, op);
  }
}

template <bool PER_ROW, class V, class A, class I, class Op>
HK_DEV void reduce(V& d, const A& a, const I& init, Op op) {
  static_assert(congruent<V, I>, "hk: the initial vector must have the result's layout");
  V r;
  reduce<PER_ROW>(r, a, op);
  map(d, init, r, op);
}

}  // namespace detail

#define HK_REDUCE(NAME, PER_ROW, OP)                                                            \
  template <class V, class A>                                                                   \
  HK_DEV void NAME(V& d, const A& a) { detail::reduce<PER_ROW>(d, a, OP{}); }                   \
  template <class V, class A, class I>                                                          \
  HK_DEV void NAME(V& d, const A& a, const I& init) { detail::reduce<PER_ROW>(d, a, init, OP{}); }

HK_REDUCE(row_sum, true, detail::op_add)
HK_REDUCE(row_max, true, detail::op_max)
HK_REDUCE(row_min, true, detail::op_min)
HK_REDUCE(col_sum, false, detail::op_add)
HK_REDUCE(col_max, false, detail::op_max)
HK_REDUCE(col_min, false, detail::op_min)
#undef HK_REDUCE

}  // namespace hk
