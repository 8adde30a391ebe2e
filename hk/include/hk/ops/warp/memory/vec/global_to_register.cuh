// Global <-> registers for vectors: load(rv&, const gl&, coord) and store(const gl&, const rv&,
// coord). A vector of length N is a 1xN tile: it reads row idx.r, columns idx.c*N ..
// idx.c*N+N-1 of slice (idx.b, idx.d). Elements outside the tensor read as zero and are not
// written. Each element is stored by one lane only.
#pragma once

#include "../tile/global_to_register.cuh"
#include "../../../../types/register/rv.cuh"

namespace hk {
namespace detail {

// Whether this lane is the one that writes slot s of V (vectors are replicated over lanes).
template <class V>
HK_DEV bool owns_vec_slot() {
  const int lane = laneid();
  if constexpr (V::is_major) return (lane >> 4) == 0;
  else if constexpr (V::dist::pattern::dup) return lane == 0;
  else return (lane & 15) == 0;
}

}  // namespace detail

template <class V, class T> requires is_rv<V>
HK_DEV void load(V& dst, const gl<T>& src, coord idx) {
  static_assert(is_rv<V> && __is_same(typename V::dtype, T), "hk::load: vector and tensor must have the same element type");
  const int col0 = idx.c * V::length;
  const T* base = src.ptr(idx.b, idx.d, idx.r, col0);
  const int cols = src.cols - col0;
  const bool row_in = src.has_slice(idx.b, idx.d) && in_range(idx.r, src.rows) && starts_inside<V::length>(idx.c, src.cols);
  const int lane = laneid(), a = lane & 15, g = lane >> 4;
  unroll<V::slots>([&](auto s) {
    const int i = V::index(s, g, a);
    dst.data[s] = detail::load_or_zero(row_in && i < cols, base + i, src.data);
  });
}

template <class V, class T> requires is_rv<V>
HK_DEV void store(const gl<T>& dst, const V& src, coord idx) {
  static_assert(is_rv<V> && __is_same(typename V::dtype, T), "hk::store: vector and tensor must have the same element type");
  const int col0 = idx.c * V::length;
  T* base = dst.ptr(idx.b, idx.d, idx.r, col0);
  const int cols = dst.cols - col0;
  const bool row_in = dst.has_slice(idx.b, idx.d) && in_range(idx.r, dst.rows) && starts_inside<V::length>(idx.c, dst.cols);
  if (!row_in || !detail::owns_vec_slot<V>()) return;
  const int lane = laneid(), a = lane & 15, g = lane >> 4;
  unroll<V::slots>([&](auto s) {
    const int i = V::index(s, g, a);
    if (i < cols) base[i] = src.data[s];
  });
}

}  // namespace hk
