// Register layouts: the row_l / col_l tags, and which fragment pattern an element type uses.
//
// A register tile is stored as strips of 16 along its "major" dimension: lane%16 is the index
// inside the strip, and each lane's register slots run along the "minor" dimension (the
// pattern's minor_of(slot, lane/16) says which index). Which dimension is major follows from the
// matrix cores:
//
//   16-bit (bf16, fp16) tiles use the operand pattern; row_l puts a row in each lane (the A
//     operand of an MxK tile, the B operand of mma_ABt's NxK tile), col_l a column (the B operand
//     of a KxN tile). A row_l tile reads rows of 8+ contiguous elements: 128-bit loads.
//   Every other type (float, int32, int8, fp8, bool) uses the accumulator pattern; row_l is the
//     layout the MMA writes: a column in each lane (col = lane%16), rows spread over the slots.
//     col_l is its transpose (a row in each lane).
//
// So for a given tile: rows are major exactly when (16-bit) == (row_l).
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
using pattern_for = __type_pack_element<is_16bit<T> ? 1 : 0, arch::acc_pattern, arch::opnd_pattern>;

// Vector distributions ("vl"): how the elements of an rv are spread over the lanes.
//  vl_major:      element i of each 16 is held by lanes with lane%16 == i%16 (one slot per 16),
//                 the same in every lane group: a vector along a tile's major dimension.
//  vl_minor<P>:   slot s holds element P::minor_of(s, lane/16), the same in every lane of a
//                 lane group: a vector along a tile's minor dimension.
struct vl_major { static constexpr bool is_major = true; };
template <class P> struct vl_minor { static constexpr bool is_major = false; using pattern = P; };

}  // namespace hk
