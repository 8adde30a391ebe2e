// Global <-> registers for tiles: load(rt&, const gl&, coord) and store(const gl&, const rt&,
// coord). Elements outside the tensor (past its edges, before its start, in a batch or depth it
// does not have) read as zero and are not written.
//
// A tile wholly inside the tensor, with 16-byte aligned rows, moves in runs of up to 16 bytes
// per lane (global_load_b128 / global_load_dwordx4 for row-layout 16-bit tiles). Any other tile
// (a ragged edge, an unaligned view) takes the element path, with a bounds check per element
// (loads read the tensor's first element for out-of-range lanes, then select zero: the tensor
// must not be empty, which the launch checks).
// The choice is uniform across the wave.
#pragma once

#include "runs.cuh"
#include "../../../../common/buffer.cuh"
#include "../../../../types/global/gl.cuh"

namespace hk {
namespace detail {

// *p where `in`, else 0, without a branch: an out-of-range lane reads `safe` (the tensor's first
// element) instead, so the load needs no exec mask and no saved lane masks.
template <class T>
HK_DEV T load_or_zero(bool in, const T* p, const T* safe) {
  const T v = *(in ? p : safe);
  return in ? v : from_compute<T>(0);
}

// The first row (or column) of tile t of N: wrapping, never undefined (a tile that does not touch
// the tensor is never addressed through it).
template <int N>
HK_DEV int origin(int t) { return t * N; }

// The bytes an element-path store may write from a tile's first element: up to the last element
// of the tensor's slice, none for a tile that touches nothing (rows 0; a touching tile has
// rows > 0 and cols > 0).
template <class T>
HK_DEV int64_t edge_bytes(const gl<T>& g, int rows, int cols) {
  return rows > 0 ? ((rows - 1) * g.stride_row + cols) * static_cast<int64_t>(sizeof(T)) : 0;
}

template <class RT>
HK_DEV void zero_tile(RT& dst) {
  using T = typename RT::dtype;
  unroll<RT::strips>([&](auto s) { unroll<RT::slots>([&](auto e) { dst.data[s][e] = from_compute<T>(0); }); });
}

template <class RT, class T>
HK_DEV bool whole_and_aligned(const gl<T>& g, const T* base, int row0, int col0) {
  const bool inside = row0 + RT::rows <= g.rows && col0 + RT::cols <= g.cols;
  const bool aligned = ((reinterpret_cast<uintptr_t>(base) | static_cast<uintptr_t>(g.stride_row * sizeof(T))) & 15) == 0;
  return inside && aligned;
}

}  // namespace detail

template <class RT, class T> requires is_rt<RT>
HK_DEV void load(RT& dst, const gl<T>& src, coord idx) {
  static_assert(is_rt<RT> && __is_same(typename RT::dtype, T), "hk::load: tile and tensor must have the same element type");
  // A tile with no element inside takes the element path with nothing in range: one more
  // uniform compare, no branch of its own (which costs registers where tiles are live).
  const bool touches = src.template touches<RT::rows, RT::cols>(idx.b, idx.d, idx.r, idx.c);
  const int row0 = detail::origin<RT::rows>(idx.r), col0 = detail::origin<RT::cols>(idx.c);
  const T* base = src.ptr(idx.b, idx.d, row0, col0);
  const int sr = static_cast<int>(src.stride_row);  // offsets inside one tile fit in 32 bits
  if (touches && detail::whole_and_aligned<RT>(src, base, row0, col0)) {
    detail::for_each_run<RT>([&](auto s, auto e, auto l, int r, int c) {
      constexpr int L = decltype(l)::value, P = detail::piece_bytes<T, L>, PE = P / static_cast<int>(sizeof(T));
      unroll<L / PE>([&](auto k) { detail::load_bytes<P>(&dst.data[s][e + PE * k], base + r * sr + c + PE * k); });
    });
  } else {
    const int rows = detail::opaque(touches ? src.rows - row0 : 0), cols = detail::opaque(src.cols - col0);
    detail::for_each_run<RT>([&](auto s, auto e, auto l, int r, int c) {
      unroll<decltype(l)::value>([&](auto i) {
        const bool in = r < rows && c + i < cols;
        dst.data[s][e + i] = detail::load_or_zero(in, base + r * sr + c + i, src.data);
      });
    });
  }
}

template <class RT, class T> requires(is_rt<RT> && __is_same(typename RT::dtype, T))
HK_DEV void store(const gl<T>& dst, const RT& src, coord idx) {
  static_assert(is_rt<RT> && __is_same(typename RT::dtype, T), "hk::store: tile and tensor must have the same element type");
  const bool touches = dst.template touches<RT::rows, RT::cols>(idx.b, idx.d, idx.r, idx.c);
  const int row0 = detail::origin<RT::rows>(idx.r), col0 = detail::origin<RT::cols>(idx.c);
  T* base = dst.ptr(idx.b, idx.d, row0, col0);
  const int sr = static_cast<int>(dst.stride_row);  // offsets inside one tile fit in 32 bits
  if (!detail::writes_memory<RT>()) return;
  if (touches && detail::whole_and_aligned<RT>(dst, base, row0, col0)) {
    detail::for_each_run<RT>([&](auto s, auto e, auto l, int r, int c) {
      constexpr int L = decltype(l)::value, P = detail::piece_bytes<T, L>, PE = P / static_cast<int>(sizeof(T));
      unroll<L / PE>([&](auto k) { detail::store_bytes<P>(base + r * sr + c + PE * k, &src.data[s][e + PE * k]); });
    });
  } else {
    // Element by element through a buffer range that ends with the tensor's slice: a store past
    // it, or masked by an out-of-range offset past the column edge, writes nothing. No branch
    // per element, and 32-bit offsets instead of a 64-bit address each.
    const int rows = detail::opaque(touches ? dst.rows - row0 : 0), cols = detail::opaque(dst.cols - col0);
    const int TB = static_cast<int>(sizeof(T));
    const __amdgpu_buffer_rsrc_t rsrc = detail::buffer_rsrc(base, detail::edge_bytes(dst, rows, cols));
    detail::for_each_run<RT>([&](auto s, auto e, auto l, int r, int c) {
      unroll<decltype(l)::value>([&](auto i) {
        const bool in = r < rows && c + i < cols;
        detail::buffer_store_element(rsrc, detail::offset_or_oob(in, (r * sr + c + i) * TB), src.data[s][e + i]);
      });
    });
  }
}

// A tile stored into a tensor of another element type, each element converted on the way
// (hk::convert, as hk::copy converts): what `t[idx] = acc.to(T)` compiles to, so that the
// converted tile, in another register pattern, is never held next to the accumulator. Element
// by element, through the same buffer range as the edge path above.
template <class RT, class U> requires(is_rt<RT> && !__is_same(typename RT::dtype, U))
HK_DEV void store(const gl<U>& dst, const RT& src, coord idx) {
  if (!detail::writes_memory<RT>()) return;
  const bool touches = dst.template touches<RT::rows, RT::cols>(idx.b, idx.d, idx.r, idx.c);
  const int row0 = detail::origin<RT::rows>(idx.r), col0 = detail::origin<RT::cols>(idx.c);
  U* base = dst.ptr(idx.b, idx.d, row0, col0);
  const int sr = static_cast<int>(dst.stride_row);
  const int rows = touches ? dst.rows - row0 : 0, cols = dst.cols - col0, TB = static_cast<int>(sizeof(U));
  const __amdgpu_buffer_rsrc_t rsrc = detail::buffer_rsrc(base, detail::edge_bytes(dst, rows, cols));
  detail::for_each_run<RT>([&](auto s, auto e, auto l, int r, int c) {
    unroll<decltype(l)::value>([&](auto i) {
      const bool in = r < rows && c + i < cols;
      detail::buffer_store_element(rsrc, detail::offset_or_oob(in, (r * sr + c + i) * TB),
                                   convert<U>(src.data[s][e + i]));
    });
  });
}

}  // namespace hk
