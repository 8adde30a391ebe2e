// LDS <-> registers for tiles: load(rt&, const st&) and store(st&, const rt&).
//
// Row-layout 16-bit tiles read each lane's run of 8 (or 16) contiguous halves with 128-bit reads
// (ds_load_b128 / ds_read_b128); the st swizzle keeps 16-byte chunks whole. Column-layout
// 16-bit tiles need one 16-bit read per element: correct, but 8x the instructions (the IR
// passes warn about it). Optional row0/col0 (multiples of 16) read a sub-tile of a larger st.
#pragma once

#include "runs.cuh"
#include "../../../../types/shared/st.cuh"

namespace hk {
namespace detail {

// Element indices of a register tile's runs in a shared tile, from row0. In rows-major tiles a
// lane's rows are row0 + lane%16 + 16*strip, and the swizzle repeats every 8 rows: it is taken
// once per lane, so the strips differ by a constant the LDS instruction's offset field holds,
// and only the chunk pattern of the columns needs registers (hoisted out of loops).
template <class RT, class ST, bool ROWS = RT::rows_major>
struct lds_rows {
  HK_DEV explicit lds_rows(int row0) : row0(row0) {}
  HK_DEV int index(int /*s*/, int r, int c) const { return ST::index(row0 + r, c); }
  int row0;
};

template <class RT, class ST>
struct lds_rows<RT, ST, true> {
  static_assert(ST::swizzle(16) == ST::swizzle(0), "hk: the shared swizzle must repeat within 16 rows");
  HK_DEV explicit lds_rows(int row0) : lane_row(row0 + (laneid() & 15)), f(ST::swizzle(lane_row)) {}
  HK_DEV int index(int s, int /*r*/, int c) const {
    constexpr int CE = ST::chunk_elems;
    return (lane_row + 16 * s) * ST::cols + ((c / CE) ^ f) * CE + c % CE;
  }
  int lane_row, f;
};

}  // namespace detail

template <class RT, class ST> requires(is_rt<RT> && is_st<ST>)
HK_DEV void load(RT& dst, const ST& src, int row0 = 0, int col0 = 0) {
  static_assert(is_rt<RT> && is_st<ST>, "hk::load: expected (rt&, const st&)");
  static_assert(__is_same(typename RT::dtype, typename ST::dtype), "hk::load: tile and shared tile must have the same element type");
  static_assert(RT::rows <= ST::rows && RT::cols <= ST::cols, "hk::load: register tile larger than the shared tile");
  using T = typename RT::dtype;
  const detail::lds_rows<RT, ST> at(row0);
  detail::for_each_run<RT>([&](auto s, auto e, auto l, int r, int c) {
    constexpr int L = decltype(l)::value, P = detail::piece_bytes<T, L>, PE = P / static_cast<int>(sizeof(T));
    unroll<L / PE>([&](auto k) {
      detail::load_bytes<P>(&dst.data[s][e + PE * k], &src.data[at.index(s, r, col0 + c + PE * k)]);
    });
  });
}

template <class ST, class RT> requires(is_rt<RT> && is_st<ST>)
HK_DEV void store(ST& dst, const RT& src, int row0 = 0, int col0 = 0) {
  static_assert(is_rt<RT> && is_st<ST>, "hk::store: expected (st&, const rt&)");
  static_assert(__is_same(typename RT::dtype, typename ST::dtype), "hk::store: tile and shared tile must have the same element type");
  static_assert(RT::rows <= ST::rows && RT::cols <= ST::cols, "hk::store: register tile larger than the shared tile");
  using T = typename RT::dtype;
  if (!detail::writes_memory<RT>()) return;
  const detail::lds_rows<RT, ST> at(row0);
  detail::for_each_run<RT>([&](auto s, auto e, auto l, int r, int c) {
    constexpr int L = decltype(l)::value, P = detail::piece_bytes<T, L>, PE = P / static_cast<int>(sizeof(T));
    unroll<L / PE>([&](auto k) {
      detail::store_bytes<P>(&dst.data[at.index(s, r, col0 + c + PE * k)], &src.data[s][e + PE * k]);
    });
  });
}

}  // namespace hk
