// Element coordinates and the masks built from them: iota, tril, triu, causal.
#pragma once

#include "maps.cuh"

namespace hk {
namespace detail {

// f(s, e, row, col) for every slot (s, e) of an RT, with its tile-local row and col.
template <class RT, class F>
HK_DEV void for_each_coord(F f) {
  static_assert(is_rt<RT>, "hk: expected a register tile");
  const int lane = laneid(), a = lane & 15, g = lane >> 4;
  unroll<RT::strips>([&](auto s) {
    unroll<RT::slots>([&](auto e) { f(s, e, RT::row_of(s, e, g, a), RT::col_of(s, e, g, a)); });
  });
}

// d = a where keep(row, col), fill elsewhere.
template <class D, class A, class Keep>
HK_DEV void keep_where(D& d, const A& a, compute_t<typename D::dtype> fill, Keep keep) {
  using T = typename D::dtype;
  const T f = from_compute<T>(fill);
  for_each_coord<D>([&](auto s, auto e, int r, int c) { d.data[s][e] = keep(r, c) ? convert<T>(a.data[s][e]) : f; });
}

}  // namespace detail

// d[r][c] = base + r*row_stride + c*col_stride (e.g. the offsets of a row-major tensor, for rand).
template <class D>
HK_DEV void iota(D& d, int base, int row_stride, int col_stride) {
  static_assert(is_rt<D>, "hk::iota: expected a register tile");
  using T = typename D::dtype;
  detail::for_each_coord<D>([&](auto s, auto e, int r, int c) {
    d.data[s][e] = from_compute<T>(static_cast<compute_t<T>>(base + r * row_stride + c * col_stride));
  });
}
// d[r][c] = row0 + r, and d[r][c] = col0 + c.
template <class D> HK_DEV void iota_rows(D& d, int row0 = 0) { iota(d, row0, 1, 0); }
template <class D> HK_DEV void iota_cols(D& d, int col0 = 0) { iota(d, col0, 0, 1); }

// Keep a[r][c] where c - r <= diag (tril) or c - r >= diag (triu); elsewhere write fill.
template <class D, class A>
HK_DEV void tril(D& d, const A& a, int diag, compute_t<typename D::dtype> fill) {
  static_assert(detail::congruent<D, A>, "hk::tril: operands must share a layout");
  detail::keep_where(d, a, fill, [&](int r, int c) { return c - r <= diag; });
}
template <class D, class A>
HK_DEV void triu(D& d, const A& a, int diag, compute_t<typename D::dtype> fill) {
  static_assert(detail::congruent<D, A>, "hk::triu: operands must share a layout");
  detail::keep_where(d, a, fill, [&](int r, int c) { return c - r >= diag; });
}

// Causal mask for a tile whose first element is global element (row0, col0): keep elements with
// global col <= global row, write fill elsewhere.
template <class D, class A>
HK_DEV void causal(D& d, const A& a, int row0, int col0, compute_t<typename D::dtype> fill) {
  tril(d, a, row0 - col0, fill);
}

}  // namespace hk
