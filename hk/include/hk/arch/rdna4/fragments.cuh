// RDNA4 (gfx12) WMMA 16x16x16, wave32 (see rdna3/fragments.cuh for the vocabulary).
//
// The hardware's 16-bit A/B fragment is 8 halves per lane, row (or column) = lane%16 and
// k = 8*(v/2) + 4*(lane/16) + 2*(v%2) + h for VGPR v, half h: each lane holds two runs of 4.
// The library stores k = 8*g + 2*v + h instead (one run of 8, one 128-bit LDS read). That is a
// permutation of k applied identically to A and B, and a dot product does not depend on the
// order of k, so the product is the same (only the order of the fp32 sums may differ).
//
// The f32 accumulator: col = lane%16, row = v + 8*(lane/16); the same minor mapping as the
// library's operand pattern, 8 contiguous rows per lane.
#pragma once

#include "../../common/util.cuh"

namespace hk::arch {

struct opnd_pattern {
  static constexpr bool dup = false;
  template <int N> static constexpr int slots() { return N / 2; }
  template <int N> static constexpr int minor_of(int e, int g) { return 16 * (e / 8) + 8 * g + e % 8; }
  template <int N> static constexpr int run_len(int /*e*/) { return 8; }
};

struct acc_pattern {
  static constexpr bool dup = false;
  template <int N> static constexpr int slots() { return N / 2; }
  template <int N> static constexpr int minor_of(int e, int g) { return 16 * (e / 8) + 8 * g + e % 8; }
  template <int N> static constexpr int run_len(int /*e*/) { return 8; }
};

inline constexpr int acc_block_slots = 8;

typedef float f32x8 __attribute__((ext_vector_type(8)));
typedef __bf16 bf16x8 __attribute__((ext_vector_type(8)));
typedef _Float16 f16x8 __attribute__((ext_vector_type(8)));

template <class T, int K>
HK_DEV void mma_block(float* acc, const T* a, const T* b) {
  static_assert(K % 16 == 0, "hk: WMMA K must be a multiple of 16");
  f32x8 c;
  unroll<8>([&](auto i) { c[int(i)] = acc[i]; });
  unroll<K / 16>([&](auto kb) {
    if constexpr (__is_same(T, __bf16)) {
      bf16x8 va, vb;
      unroll<8>([&](auto i) { va[int(i)] = a[8 * kb + i]; vb[int(i)] = b[8 * kb + i]; });
      c = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(va, vb, c);
    } else {
      static_assert(__is_same(T, _Float16), "hk: WMMA operands are bf16 or fp16");
      f16x8 va, vb;
      unroll<8>([&](auto i) { va[int(i)] = a[8 * kb + i]; vb[int(i)] = b[8 * kb + i]; });
      c = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(va, vb, c);
    }
  });
  unroll<8>([&](auto i) { acc[i] = c[int(i)]; });
}

}  // namespace hk::arch
