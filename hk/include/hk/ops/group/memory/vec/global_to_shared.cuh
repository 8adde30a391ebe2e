// Workgroup-level global <-> LDS for shared vectors: hk::group<N>::load_vec(sv&, const gl&,
// coord) / store_vec(const gl&, const sv&, coord); the vector is row idx.r, columns
// idx.c*N .. idx.c*N+N-1 of slice (idx.b, idx.d), as for register vectors. Elements outside the
// tensor are zero / not written. Synchronous on every target (a barrier suffices).
#pragma once

#include "../tile/global_to_shared.cuh"
#include "../../../../types/shared/sv.cuh"

namespace hk::detail {

template <class SV, int THREADS, class T>
HK_DEV void group_load_vec(SV& dst, const gl<T>& src, coord idx, int tid) {
  const int col0 = idx.c * SV::length;
  const T* base = src.ptr(idx.b, idx.d, idx.r, col0);
  const bool row_in = src.has_slice(idx.b, idx.d) && in_range(idx.r, src.rows) && starts_inside<SV::length>(idx.c, src.cols);
  const int cols = row_in ? src.cols - col0 : 0;
  unroll<(SV::length + THREADS - 1) / THREADS>([&](auto it) {
    const int i = tid + it * THREADS;
    if (SV::length % THREADS == 0 || i < SV::length) dst.data[i] = load_or_zero(i < cols, base + i, src.data);
  });
}

template <class SV, int THREADS, class T>
HK_DEV void group_store_vec(const gl<T>& dst, const SV& src, coord idx, int tid) {
  const int col0 = idx.c * SV::length;
  T* base = dst.ptr(idx.b, idx.d, idx.r, col0);
  const bool row_in = dst.has_slice(idx.b, idx.d) && in_range(idx.r, dst.rows) && starts_inside<SV::length>(idx.c, dst.cols);
  const int cols = row_in ? dst.cols - col0 : 0;
  unroll<(SV::length + THREADS - 1) / THREADS>([&](auto it) {
    const int i = tid + it * THREADS;
    if ((SV::length % THREADS == 0 || i < SV::length) && i < cols) base[i] = src.data[i];
  });
}

}  // namespace hk::detail

namespace hk {

template <int NUM_WARPS>
template <class SV, class T>
HK_DEV void group<NUM_WARPS>::load_vec(SV& dst, const gl<T>& src, coord idx) {
  static_assert(is_sv<SV> && __is_same(typename SV::dtype, T), "hk::group::load_vec: shared vector and tensor must have the same element type");
  detail::group_load_vec<SV, threads>(dst, src, idx, thread());
}

template <int NUM_WARPS>
template <class SV, class T>
HK_DEV void group<NUM_WARPS>::store_vec(const gl<T>& dst, const SV& src, coord idx) {
  static_assert(is_sv<SV> && __is_same(typename SV::dtype, T), "hk::group::store_vec: shared vector and tensor must have the same element type");
  detail::group_store_vec<SV, threads>(dst, src, idx, thread());
}

}  // namespace hk
