// Register layouts: the row_l / col_l tags, and which fragment pattern an element type uses.
//
// A register tile is stored as strips of 16 along its "major" dimension: lane%16 is the index
// inside the strip, and each lane's register slots run along the "minor" dimension (the
// pattern's minor_of(slot, lane/16) says which index). Which dimension is major follows from the
// matrix cores:
//
//   Operand types (bf16, fp16, int8, fp8) use the operand pattern; row_l puts a row in each lane
//     (the A operand of an MxK tile, the B operand of mma_ABt's NxK tile), col_l a column (the B
//     operand of a KxN tile). A row_l tile reads rows of 8+ contiguous elements: 64- and
//     128-bit loads. An 8-bit tile holds its K in the same slots as a 16-bit one, a byte each:
//     what each family's 8-bit instruction reads (arch/mma8.cuh), so hk::mma moves nothing.
//   Every other type (float, int32, bool) uses the accumulator pattern; row_l is the layout the
//     MMA writes: a column in each lane (col = lane%16), rows spread over the slots. col_l is
//     its transpose (a row in each lane).
//
// So for a given tile: rows are major exactly when (operand type) == (row_l).
#pragma once

#include "../../arch/arch.cuh"
#include "../../common/dtypes.cuh"
#include "../../common/util.cuh"

namespace hk {

struct row_l { static constexpr bool is_row = true; };
struct col_l { static constexpr bool is_row = false; };

template <class L> inline constexpr bool is_layout = __is_same(L, row_l) || __is_same(L, col_l);
template <class L> using flip_layout = __type_pack_element<L::is_row ? 1 : 0, row_l, col_l>;

template <class T>
using pattern_for = __type_pack_element<is_operand_type<T> ? 1 : 0, arch::acc_pattern, arch::opnd_pattern>;

namespace detail {

// Self-check of a fragment pattern for a minor length N, evaluated at compile time below: every
// minor index is held exactly once per lane group (dup patterns) or once across the groups, and
// slots in a run are contiguous minor indices.
template <class P, int N>
constexpr bool pattern_is_sound() {
  int count[512] = {};
  for (int g = 0; g < GROUPS; ++g)
    for (int e = 0; e < P::template slots<N>(); ++e) {
      const int m = P::template minor_of<N>(e, g);
      if (m < 0 || m >= N) return false;
      ++count[m];
      const int len = P::template run_len<N>(e);
      if (e % len != 0 && P::template minor_of<N>(e, g) != P::template minor_of<N>(e - 1, g) + 1) return false;
    }
  for (int m = 0; m < N; ++m)
    if (count[m] != (P::dup ? GROUPS : 1)) return false;
  return true;
}

template <class P>
constexpr bool pattern_is_sound_all() {
  return pattern_is_sound<P, 16>() && pattern_is_sound<P, 32>() && pattern_is_sound<P, 48>() &&
         pattern_is_sound<P, 64>() && pattern_is_sound<P, 80>() && pattern_is_sound<P, 128>() &&
         pattern_is_sound<P, 256>();
}

static_assert(pattern_is_sound_all<arch::opnd_pattern>(), "hk: the target's operand pattern is not a partition of the strip");
static_assert(pattern_is_sound_all<arch::acc_pattern>(), "hk: the target's accumulator pattern is not a partition of the strip");

}  // namespace detail

// Vector distributions ("vl"): how the elements of an rv are spread over the lanes.
//  vl_major:      element i of each 16 is held by lanes with lane%16 == i%16 (one slot per 16),
//                 the same in every lane group: a vector along a tile's major dimension.
//  vl_minor<P>:   slot s holds element P::minor_of(s, lane/16), the same in every lane of a
//                 lane group: a vector along a tile's minor dimension.
struct vl_major { static constexpr bool is_major = true; };
template <class P> struct vl_minor { static constexpr bool is_major = false; using pattern = P; };

}  // namespace hk
