// Rows by index: gather_rows(dst, src, row_ids, idx) reads tile row i from tensor row
// row_ids[i]; scatter_rows(dst, src, row_ids, idx) writes tile row i to tensor row row_ids[i].
// row_ids is the tile's col_vec with int32_t elements (hk::col_vec<RT, int32_t>); ids are
// absolute rows of slice (idx.b, idx.d); idx.r is unused; columns are idx.c*C .. idx.c*C+C-1.
// A negative (or out-of-range) id skips the row: gather writes zeros, scatter writes nothing
// (padding slots dropped). Columns outside the tensor, and a batch or depth it does not have,
// are zero / not written.
#pragma once

#include "global_to_register.cuh"
#include "../../../../types/global/gl.cuh"

namespace hk {
namespace detail {

// The id of the row that slot E of strip S belongs to.
template <class RT, class V, int S, int E>
HK_DEV int row_id(const V& ids) {
  static_assert(is_rv<V> && __is_same(typename V::dtype, int32_t) && V::length == RT::rows &&
                    __is_same(typename V::dist, typename RT::col_vec::dist),
                "hk: row ids must be hk::col_vec<RT, int32_t>");
  if constexpr (RT::rows_major) return ids.data[S];
  else return ids.data[E];
}

template <class RT, class T, class V, class F>
HK_DEV void for_each_indexed_run(const gl<T>& g, const V& ids, coord idx, F f) {
  // A slice or column tile outside the tensor: every row is skipped, as for a bad id.
  const int rows = g.has_slice(idx.b, idx.d) && starts_inside<RT::cols>(idx.c, g.cols) ? g.rows : 0;
  const int col0 = idx.c * RT::cols;
  const int cols = g.cols - col0;
  T* slice = g.slice(idx.b, idx.d);
  const bool aligned = ((reinterpret_cast<uintptr_t>(slice + col0) | static_cast<uintptr_t>(g.stride_row * sizeof(T))) & 15) == 0;
  for_each_run<RT>([&](auto s, auto e, auto l, int, int c) {
    const int row = row_id<RT, V, decltype(s)::value, decltype(e)::value>(ids);
    const bool row_ok = in_range(row, rows);
    T* p = slice + static_cast<int64_t>(row_ok ? row : 0) * g.stride_row + col0 + c;
    f(s, e, l, p, row_ok, aligned && c + decltype(l)::value <= cols, cols - c);
  });
}

}  // namespace detail

template <class RT, class T, class V>
HK_DEV void gather_rows(RT& dst, const gl<T>& src, const V& row_ids, coord idx) {
  static_assert(is_rt<RT> && __is_same(typename RT::dtype, T), "hk::gather_rows: tile and tensor must have the same element type");
  detail::for_each_indexed_run<RT>(src, row_ids, idx, [&](auto s, auto e, auto l, T* p, bool row_ok, bool whole, int left) {
    constexpr int L = decltype(l)::value, P = detail::piece_bytes<T, L>, PE = P / static_cast<int>(sizeof(T));
    if (row_ok && whole) {
      unroll<L / PE>([&](auto k) { detail::load_bytes<P>(&dst.data[s][e + PE * k], p + PE * k); });
    } else {
      unroll<L>([&](auto i) { dst.data[s][e + i] = detail::load_or_zero(row_ok && i < left, p + i, src.data); });
    }
  });
}

template <class RT, class T, class V>
HK_DEV void scatter_rows(const gl<T>& dst, const RT& src, const V& row_ids, coord idx) {
  static_assert(is_rt<RT> && __is_same(typename RT::dtype, T), "hk::scatter_rows: tile and tensor must have the same element type");
  if (!detail::writes_memory<RT>()) return;
  detail::for_each_indexed_run<RT>(dst, row_ids, idx, [&](auto s, auto e, auto l, T* p, bool row_ok, bool whole, int left) {
    constexpr int L = decltype(l)::value, P = detail::piece_bytes<T, L>, PE = P / static_cast<int>(sizeof(T));
    if (row_ok && whole) {
      unroll<L / PE>([&](auto k) { detail::store_bytes<P>(p + PE * k, &src.data[s][e + PE * k]); });
    } else if (row_ok) {
      unroll<L>([&](auto i) { if (i < left) p[i] = src.data[s][e + i]; });
    }
  });
}

}  // namespace hk
