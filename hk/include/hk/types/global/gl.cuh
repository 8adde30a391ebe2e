// Global tensors: hk::gl<T>, a 4-d view (batch, depth, rows, cols) with unit column stride,
// passed to kernels by value; hk::coord addresses it in units of the tile being moved.
#pragma once

#include "../../common/dtypes.cuh"

namespace hk {

template <class T>
struct gl {
  static_assert(is_element<T> && !__is_same(T, bool), "hk::gl: unsupported element type");
  using dtype = T;
  T* data;
  int batch, depth, rows, cols;
  int64_t stride_batch, stride_depth, stride_row;

  HK_DEV T* slice(int b, int d) const { return data + b * stride_batch + d * stride_depth; }
  HK_DEV T* ptr(int b, int d, int r, int c) const { return slice(b, d) + r * stride_row + c; }
};

// Tile coordinate: {b, d, r, c}; r and c count tiles (rows r*R .. r*R+R-1 for an R-row tile).
// Batch and depth are element indices and must be in range; rows and columns may run past the
// tensor's edge (loads read zeros there, stores skip it).
struct coord {
  int b, d, r, c;
};

// The launcher packs gl<T> as kernel arguments by hand: its byte layout is part of the contract.
static_assert(sizeof(gl<float>) == 48 && alignof(gl<float>) == 8, "hk::gl: 48 bytes, 8-byte aligned");
static_assert(__builtin_offsetof(gl<float>, batch) == 8 && __builtin_offsetof(gl<float>, cols) == 20 &&
                  __builtin_offsetof(gl<float>, stride_batch) == 24 && __builtin_offsetof(gl<float>, stride_row) == 40,
              "hk::gl: field offsets are data 0, batch 8, depth 12, rows 16, cols 20, stride_batch 24, stride_depth 32, stride_row 40");

template <class X> inline constexpr bool is_gl = false;
template <class T> inline constexpr bool is_gl<gl<T>> = true;

}  // namespace hk
