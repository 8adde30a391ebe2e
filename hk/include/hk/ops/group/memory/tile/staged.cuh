// Workgroup copies global -> LDS in two halves, so that the next tile's loads overlap this
// tile's compute:
//
//   hk::staging<ST, N> s;
//   hk::group<N>::issue<DIV>(s, src, coord);   // global -> registers, in flight on vmcnt
//   ... MMAs on the previous tile ...
//   hk::wait_vm<...>();                        // derived by the waits pass
//   hk::group<N>::commit(dst, s);              // registers -> LDS, in flight on lgkmcnt
//
// Chunk i of thread t is the 16-byte chunk i*THREADS + t of the tile in row-major order. The
// loads are buffer loads whose range ends with the tensor's slice (common/buffer.cuh), so rows
// past the tensor's end read zeros at no cost, with the per-lane offsets loop-invariant and the
// column advance in soffset.
//
// DIV is what is known of the tensor when the kernel is compiled: its columns and every stride
// are multiples of DIV elements and its data is aligned to DIV elements (a power of two; 1 when
// nothing is known). Rows of 16-byte multiples (DIV * sizeof(T) >= 16) move in one
// buffer_load_b128 per chunk: when DIV is also a multiple of the tile's columns, a tile is
// wholly inside the columns or wholly past them (one scalar test empties the range); otherwise
// chunks past the column edge are given an out-of-range offset. Narrower rows are read in
// pieces of DIV elements, a column test each. Every path issues at least `vm_insts` loads per
// wave, which is what the waits count.
#pragma once

#include "global_to_shared.cuh"
#include "../../../../common/buffer.cuh"
#include "../../../../types/register/staging.cuh"

namespace hk {

namespace detail {

// A 16-byte chunk as its elements.
template <class T, int N>
struct chunk_elems_t {
  T x[N];
};

// Rows that are not 16-byte multiples: each chunk in pieces of DIV elements (those never
// straddle a row's end), each piece's column tested arithmetically into its offset's sign bit
// (out of range reads zeros). The per-lane part of every offset is loop-invariant and the
// column advance is in soffset, as for whole chunks; the pieces stay in flight like chunks do.
template <int DIV, class S, class T>
HK_DEV void issue_pieces(S& s, const gl<T>& src, coord idx, int t, __amdgpu_buffer_rsrc_t rsrc) {
  using ST = typename S::shared;
  constexpr int CE = ST::chunk_elems, K = ST::chunks, TB = static_cast<int>(sizeof(T));
  constexpr int PE = DIV < CE ? DIV : CE, P = PE * TB, N = CE / PE;  // a piece's elements and bytes
  const int col0 = idx.c * ST::cols, left = src.cols - col0;
  const int sr = static_cast<int>(src.stride_row) * TB;
  const int soff = col0 * TB;
  // A thread's chunks share its column when the workgroup covers whole rows per round.
  constexpr bool column_per_thread = S::threads % K == 0;
  const int thread_col = (t % K) * CE;
  unroll<S::per_thread>([&](auto i) {
    const int q = i * S::threads + t, c = column_per_thread ? thread_col : (q % K) * CE;
    const int chunk_in = S::chunks % S::threads == 0 || q < S::chunks ? 0 : -1;
    const uint32_t chunk = static_cast<uint32_t>((q / K) * sr + c * TB);
    struct pieces { typename bytes_t<P>::type x[N]; } v;
    unroll<N>([&](auto k) {
      // The piece's bytes after the chunk's as the load's immediate offset (an out-of-range
      // offset stays out of range): one offset register per chunk, not per piece.
      const int flag = chunk_in | ((left - 1 - PE * k) - c);
      v.x[k] = buffer_load_piece<P>(rsrc, offset_unless_negative(flag, chunk) + P * k, soff);
    });
    s.data[i] = bit_cast<typename S::chunk_t>(v);
  });
}

}  // namespace detail

template <int NUM_WARPS>
template <int DIV, class S, class T>
HK_DEV void group<NUM_WARPS>::issue(S& s, const gl<T>& src, coord idx) {
  static_assert(is_staging<S>, "hk::group::issue: stages into an hk::staging<ST, NUM_WARPS>");
  using ST = typename S::shared;
  static_assert(S::threads == threads, "hk::group::issue: the staging is for another number of warps");
  static_assert(__is_same(typename ST::dtype, T), "hk::group::issue: shared tile and tensor must have the same element type");
  static_assert(DIV > 0 && (DIV & (DIV - 1)) == 0, "hk::group::issue: DIV is a power of two");
  constexpr int K = ST::chunks, CE = ST::chunk_elems, TB = static_cast<int>(sizeof(T));
  const int t = thread();
  const int row0 = idx.r * ST::rows;
  // Rows are less than 8 MiB apart (the launcher refuses others): a row's bytes fit 32 bits.
  const int row_bytes = static_cast<int>(src.stride_row) * TB;
  const T* row_base = reinterpret_cast<const T*>(reinterpret_cast<const char*>(src.slice(idx.b, idx.d)) +
                                                 static_cast<int64_t>(row0) * row_bytes);
  // The range ends with the slice's last element: rows past it read zeros. A tile that touches
  // nothing (before the first row or column, past the last, in a batch or depth the tensor
  // lacks) gets an empty range: all zeros. The slice test is the same for every tile of a loop
  // (kept out of it) and enters arithmetically, so that the compiler does not merge it with the
  // column test into one per tile; the column test is one unsigned compare. In 32 bits: the
  // rows counted are capped at those within the 2^31 bytes the hardware checks (a quotient of
  // kernel arguments, computed once), so the product cannot overflow; past the last row it is
  // negative, read as empty. A tile that walks down the rows (B of A·B, K and V of attention)
  // so pays a few scalar instructions per step and no vector ones.
  const bool slice_in = src.has_slice(idx.b, idx.d) & (idx.r >= 0);
  const int rows_max = 0x7fffffff / row_bytes;
  const int rows_left = slice_in ? src.rows - row0 : 0, cols_in = slice_in ? src.cols : 0;
  const int bytes = (rows_left < rows_max ? rows_left : rows_max) * row_bytes - (row_bytes - cols_in * TB);
  const __amdgpu_buffer_rsrc_t rsrc = detail::buffer_rsrc(row_base, starts_inside<ST::cols>(idx.c, src.cols) ? bytes : 0);
  if constexpr (!detail::rows_of_chunks<DIV, T>) {
    detail::issue_pieces<DIV>(s, src, idx, t, rsrc);
  } else {
    constexpr bool exact = DIV % ST::cols == 0;
    const int col0 = idx.c * ST::cols, left = src.cols - col0;  // columns from col0 on
    const int sr = static_cast<int>(src.stride_row) * TB;  // the launcher keeps the tile's rows within 2 GiB
    const int soff = col0 * TB;
    // A thread's chunks share its column when the workgroup covers whole rows per round.
    constexpr bool column_per_thread = threads % K == 0;
    const int thread_col = (t % K) * CE;
    auto loads = [&](__amdgpu_buffer_rsrc_t r, auto whole) {
      const bool thread_in = decltype(whole)::value || thread_col < left;
      unroll<S::per_thread>([&](auto i) {
        const int q = i * threads + t, c = column_per_thread ? thread_col : (q % K) * CE;
        const bool col_in = decltype(whole)::value || (column_per_thread ? thread_in : c < left);
        const bool in = (S::chunks % threads == 0 || q < S::chunks) && col_in;
        s.data[i] = detail::buffer_load16(r, detail::offset_or_oob(in, (q / K) * sr + c * TB), soff);
      });
    };
    if constexpr (exact) {
      // Columns come in whole tiles: a tile is inside or wholly outside, where the empty range
      // reads zeros (only the range word is chosen).
      loads(rsrc, ic<1>{});
    } else {
      // Per-chunk column tests, without a branch: a branch in a kernel's hot loop splits the
      // live ranges of everything around it.
      loads(rsrc, ic<0>{});
    }
  }
}

template <int NUM_WARPS>
template <class ST, class S>
HK_DEV void group<NUM_WARPS>::commit(ST& dst, const S& s) {
  static_assert(is_staging<S> && __is_same(typename S::shared, ST), "hk::group::commit: the staging is for another shared tile");
  constexpr int CE = ST::chunk_elems, K = ST::chunks;
  const int t = thread();
  unroll<S::per_thread>([&](auto i) {
    const int q = i * threads + t;
    if (S::chunks % threads == 0 || q < S::chunks)
      *reinterpret_cast<detail::u32x4*>(&dst.data[ST::index(q / K, (q % K) * CE)]) = s.data[i];
  });
}

// The staged R x C tile written transposed, into a C x R shared tile: element (r, c) lands at
// (c, r), one 16-bit LDS write each. What the matrix cores need of an operand stored the other
// way round (B of A·B, V of attention): reading it back is then a row-layout read.
template <int NUM_WARPS>
template <class ST, class S>
HK_DEV void group<NUM_WARPS>::commit_transposed(ST& dst, const S& s) {
  using SRC = typename S::shared;
  static_assert(is_staging<S> && __is_same(typename SRC::dtype, typename ST::dtype) && SRC::rows == ST::cols &&
                    SRC::cols == ST::rows,
                "hk::group::commit_transposed: the staging holds the transpose of the shared tile");
  using T = typename ST::dtype;
  constexpr int CE = SRC::chunk_elems, K = SRC::chunks;
  const int t = thread();
  constexpr int rows_per_round = threads / K, G = rows_per_round / CE;
  if constexpr (threads % K == 0 && rows_per_round % CE == 0 && (G & (G - 1)) == 0 && S::chunks % threads == 0) {
    // Round i covers source rows i*R .. i*R+R-1 (R = rows_per_round = G chunks of destination
    // columns), and a thread's destination rows c .. c+CE-1 start at a multiple of the
    // swizzle's period. Destination chunk (i*G + h) ^ f(e), h the thread's chunk in the round,
    // splits into a constant and one of G per-thread values: every address is one of G
    // registers plus a constant, kept out of loops, instead of a register per element.
    const int c = (t % K) * CE, row = t / K, h = row / CE;
    int base[G];
    unroll<G>([&](auto k) { base[k] = c * ST::cols + row % CE + ((h ^ k) * CE); });
    unroll<S::per_thread>([&](auto i) {
      const auto v = bit_cast<detail::chunk_elems_t<T, CE>>(s.data[i]);
      unroll<CE>([&](auto e) {
        constexpr int f = ST::swizzle(e), high = (decltype(i)::value * G) ^ (f & ~(G - 1));
        dst.data[base[f & (G - 1)] + e * ST::cols + high * CE] = v.x[e];
      });
    });
  } else {
    unroll<S::per_thread>([&](auto i) {
      const int q = i * threads + t, r = q / K, c = (q % K) * CE;
      if (S::chunks % threads == 0 || q < S::chunks) {
        const auto v = bit_cast<detail::chunk_elems_t<T, CE>>(s.data[i]);
        unroll<CE>([&](auto e) { dst.data[ST::index(c + e, r)] = v.x[e]; });
      }
    });
  }
}

}  // namespace hk
