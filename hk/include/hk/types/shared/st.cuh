// Shared (LDS) tiles: hk::st<T, R, C>, row-major, dense (bytes == R*C*sizeof(T)), with a XOR
// swizzle of 16-byte chunks within each row so that the library's LDS reads are free of bank
// conflicts without padding.
//
// Why a swizzle and not padding: the CDNA global->LDS DMA writes each lane's bytes at
// consecutive LDS addresses, so the layout must be dense; the swizzle is applied on the global
// side of the copy instead.
//
// Swizzle: a row has K = C*sizeof(T)/16 chunks; logical chunk q of row r sits at physical chunk
// q ^ f(r), f(r) = (r / (8/S)) % S where S is the largest power of two dividing K, capped at 8.
// XOR with f(r) < S keeps q inside the row. The 128-bit operand reads have 8 consecutive rows
// read the same logical chunk; row r's chunk lands in 16-byte bank group
// (r*K + (q ^ f(r))) mod 8, which differs for those 8 rows: the rows that r*K alone would collide
// (equal r mod 8/S) are told apart by f(r).
#pragma once

#include "../../common/dtypes.cuh"

namespace hk {

template <class T, int R, int C>
struct st {
  static_assert(is_element<T> && !__is_same(T, bool), "hk::st: unsupported element type");
  static_assert(R > 0 && C > 0 && R % 16 == 0 && C % 16 == 0, "hk::st: R and C must be positive multiples of 16");
  static_assert((C * sizeof(T)) % 16 == 0, "hk::st: a row must be a whole number of 16-byte chunks");
  using dtype = T;
  static constexpr int rows = R, cols = C;
  static constexpr int bytes = R * C * static_cast<int>(sizeof(T));
  static constexpr int chunk_elems = 16 / static_cast<int>(sizeof(T));
  static constexpr int chunks = C / chunk_elems;  // per row

  static constexpr int swizzle_span() {
    int s = 1;
    while (s < 8 && chunks % (2 * s) == 0) s *= 2;
    return s;
  }
  static constexpr int S = swizzle_span();

  T data[R * C];

  static constexpr int swizzle(int r) { return (r / (8 / S)) % S; }
  // Physical element index of logical (r, c).
  static constexpr int index(int r, int c) {
    return r * C + ((c / chunk_elems) ^ swizzle(r)) * chunk_elems + c % chunk_elems;
  }
  HK_DEV T& at(int r, int c) { return data[index(r, c)]; }
  HK_DEV const T& at(int r, int c) const { return data[index(r, c)]; }
};

template <class X> inline constexpr bool is_st = false;
template <class T, int R, int C> inline constexpr bool is_st<st<T, R, C>> = true;

}  // namespace hk
