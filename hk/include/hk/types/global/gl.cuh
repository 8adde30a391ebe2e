// Global tensors: hk::gl<T>, a 4-d view (batch, depth, rows, cols) with unit column stride,
// passed to kernels by value; hk::coord addresses it in units of the tile being moved.
#pragma once

#include "../../common/dtypes.cuh"

namespace hk {

// Bounds, the same for every operation that touches a tensor: an element outside it, on either
// side of any dimension, reads as zero and is not written. One unsigned compare per index covers
// both sides (a negative index is a large unsigned one). A launch never passes an empty tensor,
// so index 0 is always inside: a constant 0 (most batch and depth coordinates) costs nothing.
HK_DEV bool in_range(int i, int n) {
  if (__builtin_constant_p(i) && i == 0) return true;
  return static_cast<unsigned>(i) < static_cast<unsigned>(n);
}

// Whether the run of N elements starting at t*N begins inside [0, n). Tiles start at multiples
// of their size, so one that does not holds no element inside (t < 0 puts it wholly before 0).
// t*N is a 32-bit index like any other: it wraps (the interpreter computes it the same way).
template <int N>
HK_DEV bool starts_inside(int t, int n) {
  if (__builtin_constant_p(t) && t == 0) return true;
  return static_cast<unsigned>(t) * N < static_cast<unsigned>(n);
}

template <class T>
struct gl {
  static_assert(is_element<T> && !__is_same(T, bool), "hk::gl: unsupported element type");
  using dtype = T;
  T* data;
  int batch, depth, rows, cols;
  int64_t stride_batch, stride_depth, stride_row;

  HK_DEV T* slice(int b, int d) const { return data + b * stride_batch + d * stride_depth; }
  HK_DEV T* ptr(int b, int d, int r, int c) const { return slice(b, d) + r * stride_row + c; }

  // Whether slice (b, d) exists.
  HK_DEV bool has_slice(int b, int d) const { return in_range(b, batch) && in_range(d, depth); }
  // Whether the R x C tile at `idx` has an element inside the tensor.
  template <int R, int C>
  HK_DEV bool touches(int b, int d, int r, int c) const {
    return has_slice(b, d) && starts_inside<R>(r, rows) && starts_inside<C>(c, cols);
  }
  // Whether element (b, d, r, c) is inside the tensor.
  HK_DEV bool holds(int b, int d, int r, int c) const {
    return has_slice(b, d) && in_range(r, rows) && in_range(c, cols);
  }
};

// Tile coordinate: {b, d, r, c}; r and c count tiles (rows r*R .. r*R+R-1 for an R-row tile),
// batch and depth are element indices. Any of them may lie outside the tensor, on either side:
// loads read zeros there, stores skip it.
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
