// RDNA3 (gfx11) WMMA 16x16x16, wave32: how a 16-row/column strip of a tile sits in the lanes.
//
// A tile is a grid of strips; lane%16 picks the strip's "major" index (a row or a column), lane/16
// the lane group g (0 or 1), and a register slot e the "minor" index along the strip.
//
//  - operand pattern (16-bit A/B fragments): A is 16 halves per lane, row = lane%16, k = slot,
//    and lanes 16-31 must hold the same halves as lanes 0-15. Every group holds the whole strip
//    (dup); the minor index of slot e is e itself, so a lane's halves are 16 contiguous
//    elements: two 128-bit LDS reads (ds_load_b128).
//  - accumulator pattern (f32 C/D): 8 floats per lane per 16x16 block, col = lane%16,
//    row = 2*v + lane/16: slot e of block e/8 holds minor index 2*(e%8) + g.
#pragma once

#include "../../common/util.cuh"

namespace hk::arch {

struct opnd_pattern {
  static constexpr bool dup = true;
  template <int N> static constexpr int slots() { return N; }
  template <int N> static constexpr int minor_of(int e, int /*g*/) { return e; }
  template <int N> static constexpr int run_len(int /*e*/) { return 16; }
};

struct acc_pattern {
  static constexpr bool dup = false;
  template <int N> static constexpr int slots() { return N / 2; }
  template <int N> static constexpr int minor_of(int e, int g) { return 16 * (e / 8) + 2 * (e % 8) + g; }
  template <int N> static constexpr int run_len(int /*e*/) { return 1; }
};

// Accumulator slots per lane for one 16x16 output block.
inline constexpr int acc_block_slots = 8;

typedef float f32x8 __attribute__((ext_vector_type(8)));
typedef __bf16 bf16x16 __attribute__((ext_vector_type(16)));
typedef _Float16 f16x16 __attribute__((ext_vector_type(16)));

// acc[0..8) += A(16xK) * B(Kx16) for one output block; a and b are the operand slots of one
// strip each (K halves per lane, already duplicated across the lane groups).
template <class T, int K>
HK_DEV void mma_block(float* acc, const T* a, const T* b) {
  static_assert(K % 16 == 0, "hk: WMMA K must be a multiple of 16");
  f32x8 c;
  unroll<8>([&](auto i) { c[int(i)] = acc[i]; });
  unroll<K / 16>([&](auto kb) {
    if constexpr (__is_same(T, __bf16)) {
      bf16x16 va, vb;
      unroll<16>([&](auto i) { va[int(i)] = a[16 * kb + i]; vb[int(i)] = b[16 * kb + i]; });
      c = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(va, vb, c);
    } else {
      static_assert(__is_same(T, _Float16), "hk: WMMA operands are bf16 or fp16");
      f16x16 va, vb;
      unroll<16>([&](auto i) { va[int(i)] = a[16 * kb + i]; vb[int(i)] = b[16 * kb + i]; });
      c = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(va, vb, c);
    }
  });
  unroll<8>([&](auto i) { acc[i] = c[int(i)]; });
}

}  // namespace hk::arch
