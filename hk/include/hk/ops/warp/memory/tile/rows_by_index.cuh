// Rows by index: gather_rows(dst, src, row_ids, idx) reads tile row i from tensor row
// row_ids[i]; scatter_rows(dst, src, row_ids, idx) writes tile row i to tensor row row_ids[i].
// row_ids is the tile's col_vec with int32_t elements (hk::col_vec<RT, int32_t>), or an int32_t
// vector of another tile's distribution, redistributed first (broadcast.cuh); ids are
// absolute rows of slice (idx.b, idx.d); idx.r is unused; columns are idx.c*C .. idx.c*C+C-1.
// A negative (or out-of-range) id skips the row: gather writes zeros, scatter writes nothing
// (padding slots dropped). Columns outside the tensor, and a batch or depth it does not have,
// are zero / not written.
//
// Rows move through a buffer resource over the tensor's slice: each lane's run has its own offset, out of range where its row or columns are not in the tensor, so the
// hardware reads zeros there and drops the writes, with no branch and no saved lane mask
// (which, held across a loop, spill the scalar registers). Runs move 16 bytes at a time when
// the rows, the columns and the tile's first column are 16-byte multiples (a piece then never
// straddles the column edge), else element by element: DIV, what is known of the tensor when
// the kernel is compiled (as for hk::group::issue), makes that choice at compile time. A slice
// beyond the 2^31 bytes a buffer checks takes global loads and stores instead.
#pragma once

#include "global_to_register.cuh"
#include "../../register/tile/broadcast.cuh"
#include "../../../../common/buffer.cuh"
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
  const int cols = opaque(g.cols) - col0;
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

namespace detail {

// What a buffer path needs of (g, idx): the resource over the whole slice (empty for a slice
// the tensor lacks; the same for every column tile, so tiles of one tensor share it), where
// the tile's columns start, whether pieces of 16 bytes may move, and whether the slice fits the
// checked range.
template <class RT, class T>
struct indexed_range {
  __amdgpu_buffer_rsrc_t rsrc;
  int row_bytes, col_bytes, left;  // bytes between rows; the tile's first column; columns of it inside
  bool pieces, fits;

  HK_DEV indexed_range(const gl<T>& g, coord idx) {
    constexpr int TB = static_cast<int>(sizeof(T));
    const T* base = g.slice(idx.b, idx.d);
    const int col0 = idx.c * RT::cols;
    // None for a column tile outside the tensor (before its first column too: the offsets
    // would reach back into the row before).
    left = starts_inside<RT::cols>(idx.c, g.cols) ? g.cols - col0 : 0;
    row_bytes = static_cast<int>(g.stride_row) * TB;
    col_bytes = col0 * TB;
    const bool in = g.has_slice(idx.b, idx.d) && g.rows > 0;
    const int64_t span = in ? (static_cast<int64_t>(g.rows - 1) * g.stride_row + g.cols) * TB : 0;
    fits = span <= 0x7fffffff;
    rsrc = buffer_rsrc(base, span);
    pieces = RT::cols * TB % 16 == 0 &&
             ((reinterpret_cast<uintptr_t>(base) | static_cast<uintptr_t>(row_bytes) | static_cast<uintptr_t>(g.cols * TB)) & 15) == 0;
  }
};

// f(s, e, l, voffset of the run, flag, left - c): flag is negative where the run's row is not a
// row of the tensor (then so is flag | anything).
template <class RT, class T, class V, class F>
HK_DEV void for_each_indexed_offset(const gl<T>& g, const indexed_range<RT, T>& range, const V& ids, F f) {
  for_each_run<RT>([&](auto s, auto e, auto l, int, int c) {
    const int row = row_id<RT, V, decltype(s)::value, decltype(e)::value>(ids);
    const int flag = row | (g.rows - 1 - row);
    f(s, e, l, static_cast<uint32_t>(row * range.row_bytes + range.col_bytes + c * static_cast<int>(sizeof(T))), flag,
      range.left - c);
  });
}

}  // namespace detail

template <int DIV = 1, class RT, class T, class V>
HK_DEV void gather_rows(RT& dst, const gl<T>& src, const V& ids, coord idx) {
  const auto& row_ids = detail::in_tile_dist<RT, true>(ids);
  static_assert(is_rt<RT> && __is_same(typename RT::dtype, T), "hk::gather_rows: tile and tensor must have the same element type");
  constexpr int TB = static_cast<int>(sizeof(T));
  const detail::indexed_range<RT, T> range(src, idx);
  if (!range.fits) {
    detail::for_each_indexed_run<RT>(src, row_ids, idx, [&](auto s, auto e, auto l, T* p, bool row_ok, bool whole, int left) {
      constexpr int L = decltype(l)::value, P = detail::piece_bytes<T, L>, PE = P / TB;
      if (row_ok && whole) {
        unroll<L / PE>([&](auto k) { detail::load_bytes<P>(&dst.data[s][e + PE * k], p + PE * k); });
      } else {
        unroll<L>([&](auto i) { dst.data[s][e + i] = detail::load_or_zero(row_ok && i < left, p + i, src.data); });
      }
    });
    return;
  }
  detail::for_each_indexed_offset<RT>(src, range, row_ids, [&](auto s, auto e, auto l, uint32_t off, int flag, int left) {
    constexpr int L = decltype(l)::value, P = detail::piece_bytes<T, L>, PE = P / TB;
    if (detail::rows_of_chunks<DIV, T> || range.pieces) {
      unroll<L / PE>([&](auto k) {
        const uint32_t at = detail::offset_unless_negative(flag | (left - 1 - PE * k), off + P * k);
        const auto w = detail::buffer_load_piece<P>(range.rsrc, at);
        struct elems { T v[PE]; };
        const elems x = bit_cast<elems>(w);
        unroll<PE>([&](auto i) { dst.data[s][e + PE * k + i] = x.v[i]; });
      });
    } else {
      const int here = detail::opaque(range.left) - (range.left - left);  // (opaque: a uniform value)
      unroll<L>([&](auto i) {
        dst.data[s][e + i] = detail::buffer_load_element<T>(
            range.rsrc, detail::offset_unless_negative(flag | (here - 1 - i), off + TB * i));
      });
    }
  });
}

template <int DIV = 1, class RT, class T, class V>
HK_DEV void scatter_rows(const gl<T>& dst, const RT& src, const V& ids, coord idx) {
  const auto& row_ids = detail::in_tile_dist<RT, true>(ids);
  static_assert(is_rt<RT> && __is_same(typename RT::dtype, T), "hk::scatter_rows: tile and tensor must have the same element type");
  if (!detail::writes_memory<RT>()) return;
  constexpr int TB = static_cast<int>(sizeof(T));
  const detail::indexed_range<RT, T> range(dst, idx);
  if (!range.fits) {
    detail::for_each_indexed_run<RT>(dst, row_ids, idx, [&](auto s, auto e, auto l, T* p, bool row_ok, bool whole, int left) {
      constexpr int L = decltype(l)::value, P = detail::piece_bytes<T, L>, PE = P / TB;
      if (row_ok && whole) {
        unroll<L / PE>([&](auto k) { detail::store_bytes<P>(p + PE * k, &src.data[s][e + PE * k]); });
      } else if (row_ok) {
        unroll<L>([&](auto i) { if (i < left) p[i] = src.data[s][e + i]; });
      }
    });
    return;
  }
  detail::for_each_indexed_offset<RT>(dst, range, row_ids, [&](auto s, auto e, auto l, uint32_t off, int flag, int left) {
    constexpr int L = decltype(l)::value, P = detail::piece_bytes<T, L>, PE = P / TB;
    if (detail::rows_of_chunks<DIV, T> || range.pieces) {
      unroll<L / PE>([&](auto k) {
        struct elems { T v[PE]; };
        elems x;
        unroll<PE>([&](auto i) { x.v[i] = src.data[s][e + PE * k + i]; });
        detail::buffer_store_piece<P>(bit_cast<typename detail::bytes_t<P>::type>(x), range.rsrc,
                                      detail::offset_unless_negative(flag | (left - 1 - PE * k), off + P * k));
      });
    } else {
      const int here = detail::opaque(range.left) - (range.left - left);  // (opaque: a uniform value)
      unroll<L>([&](auto i) {
        detail::buffer_store_element<T>(range.rsrc, detail::offset_unless_negative(flag | (here - 1 - i), off + TB * i),
                                        src.data[s][e + i]);
      });
    }
  });
}

}  // namespace hk
