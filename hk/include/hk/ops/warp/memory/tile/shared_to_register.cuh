// LDS <-> registers for tiles: load(rt&, const st&) and store(st&, const rt&).
//
// Row-layout 16-bit tiles read each lane's run of 8 (or 16) contiguous halves with 128-bit reads
// (ds_load_b128 / ds_read_b128); the st swizzle keeps 16-byte chunks whole. Column-layout
// 16-bit tiles read along columns: on gfx950 four elements per lane with the transposing
// ds_read_b64_tr_b16, elsewhere one 16-bit read per element (8x the instructions; the IR
// passes warn about it there). Optional row0/col0 (multiples of 16) read a sub-tile of a
// larger st.
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
  // The swizzle has a period of 8 rows, so it is taken of the lane's row within its 16 alone:
  // a sub-tile at another row0 (a multiple of 16) then differs by a constant. Only the chunk's
  // bits below the swizzle's span are XORed (f < S), the rest is added, so that the column
  // tiles that agree in those bits share one address register and differ by a constant too.
  HK_DEV explicit lds_rows(int row0) : row0(row0), lane(laneid() & 15), f(ST::swizzle((row0 & 15) + lane)) {}
  HK_DEV int index(int s, int /*r*/, int c) const {
    constexpr int CE = ST::chunk_elems, S = ST::S;
    const int q = c / CE;
    return (row0 + lane + 16 * s) * ST::cols + (((q & (S - 1)) ^ f) + (q & ~(S - 1))) * CE + c % CE;
  }
  int row0, lane, f;
};

#if defined(HK_CDNA4)
// A column-layout 16-bit operand tile: lane a of group g holds column 16s + a and, per run of
// four slots, four consecutive rows. ds_read_b64_tr_b16 transposes within each group of 16
// lanes: the lane 4k + j of a group reads 8 bytes, row k and columns 4j .. 4j+3 of the group's
// 4 x 16 block, and lane i receives element i % 4 of what lanes i / 4, 4 + i / 4, ... read,
// which is column i of the block's four rows.
template <class RT>
inline constexpr bool transposing_read = is_16bit<typename RT::dtype> && !RT::rows_major &&
                                         __is_same(typename RT::pattern, arch::opnd_pattern);

typedef short i16x4_lds __attribute__((ext_vector_type(4)));

template <class RT, class ST>
HK_DEV void load_transposing(RT& dst, const ST& src, int row0, int col0) {
  using T = typename RT::dtype;
  const int lane = laneid(), g = lane >> 4, i = lane & 15;
  unroll<RT::strips>([&](auto s) {
    unroll<RT::slots / 4>([&](auto q) {
      constexpr int E = 4 * decltype(q)::value;
      const int row = row0 + RT::minor_index(E, g) + i / 4, col = col0 + 16 * s + 4 * (i % 4);
      typedef __attribute__((address_space(3))) i16x4_lds* lds_vec;
      const i16x4_lds v = __builtin_amdgcn_ds_read_tr16_b64_v4i16(
          (lds_vec)(const_cast<T*>(&src.data[ST::index(row, col)])));
      unroll<4>([&](auto k) { dst.data[s][E + k] = bit_cast<T>(v[int(k)]); });
    });
  });
}
#else
template <class RT>
inline constexpr bool transposing_read = false;
#endif

}  // namespace detail

template <class RT, class ST> requires(is_rt<RT> && is_st<ST>)
HK_DEV void load(RT& dst, const ST& src, int row0 = 0, int col0 = 0) {
  static_assert(is_rt<RT> && is_st<ST>, "hk::load: expected (rt&, const st&)");
  static_assert(__is_same(typename RT::dtype, typename ST::dtype), "hk::load: tile and shared tile must have the same element type");
  static_assert(RT::rows <= ST::rows && RT::cols <= ST::cols, "hk::load: register tile larger than the shared tile");
#if defined(HK_CDNA4)
  if constexpr (detail::transposing_read<RT>) {
    detail::load_transposing(dst, src, row0, col0);
    return;
  }
#endif
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
