// Shared (LDS) vectors: hk::sv<T, N>, dense; bytes is rounded up to 16 so consecutive
// allocations stay 16-byte aligned.
#pragma once

#include "../../common/dtypes.cuh"

namespace hk {

template <class T, int N>
struct sv {
  static_assert(is_element<T> && !__is_same(T, bool), "hk::sv: unsupported element type");
  static_assert(N > 0 && N % 16 == 0, "hk::sv: length must be a positive multiple of 16");
  using dtype = T;
  static constexpr int length = N;
  static constexpr int bytes = (N * static_cast<int>(sizeof(T)) + 15) / 16 * 16;
  T data[N];
};

template <class X> inline constexpr bool is_sv = false;
template <class T, int N> inline constexpr bool is_sv<sv<T, N>> = true;

}  // namespace hk
