// CDNA3 (gfx94x) MFMA 16x16x16, wave64 (see rdna3/fragments.cuh for the vocabulary).
//
// The hardware's 16-bit A/B fragment is 4 halves per lane, row (or column) = lane%16 and
// k = 4*(lane/16) + 2*v + h. The library groups K in chunks of 32: in a chunk, lane group g holds
// the 8 contiguous elements 8g..8g+7 (one 128-bit LDS read, ds_read_b128). The chunk feeds two
// MFMAs, the first with each lane's elements 0-3, the second with 4-7: every k of the chunk is
// multiplied exactly once, with A and B permuted the same way, so the sum is the product. A last
// chunk of 16 (K = 16 mod 32) uses the hardware order: lane group g holds 4g..4g+3.
//
// The f32 accumulator: col = lane%16, row = 4*(lane/16) + v: slot e of block e/4 holds minor
// index 4*g + e%4.
#pragma once

#include "../../common/util.cuh"

namespace hk::arch {

// The operand pattern of cdna3 and cdna4 (shared: both read 8 contiguous halves per chunk).
struct opnd_pattern {
  static constexpr bool dup = false;
  template <int N> static constexpr int slots() { return N / 4; }
  template <int N> static constexpr int minor_of(int e, int g) {
    constexpr int full = N / 32;  // chunks of 32
    return e < 8 * full ? 32 * (e / 8) + 8 * g + e % 8 : 32 * full + 4 * g + (e - 8 * full);
  }
  template <int N> static constexpr int run_len(int e) { return e < 8 * (N / 32) ? 8 : 4; }
};

struct acc_pattern {
  static constexpr bool dup = false;
  template <int N> static constexpr int slots() { return N / 4; }
  template <int N> static constexpr int minor_of(int e, int g) { return 16 * (e / 4) + 4 * g + e % 4; }
  template <int N> static constexpr int run_len(int /*e*/) { return 4; }
};

inline constexpr int acc_block_slots = 4;

typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef short i16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));

// One 16x16x16 MFMA on 4 operand slots per lane.
template <class T>
HK_DEV f32x4 mfma_k16(const T* a, const T* b, f32x4 c) {
  if constexpr (__is_same(T, __bf16)) {
    i16x4 va, vb;
    unroll<4>([&](auto i) { va[int(i)] = __builtin_bit_cast(short, a[i]); vb[int(i)] = __builtin_bit_cast(short, b[i]); });
    return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(va, vb, c, 0, 0, 0);
  } else {
    static_assert(__is_same(T, _Float16), "hk: MFMA operands are bf16 or fp16");
    f16x4 va, vb;
    unroll<4>([&](auto i) { va[int(i)] = a[i]; vb[int(i)] = b[i]; });
    return __builtin_amdgcn_mfma_f32_16x16x16f16(va, vb, c, 0, 0, 0);
  }
}

// acc[0..4) += A(16xK) * B(Kx16) for one output block; a and b are one strip's operand slots.
// chunk32(a, b, c) multiplies one chunk of 32 k (8 slots); a last chunk of 16 takes one
// 16x16x16 MFMA in the hardware's order.
template <class T, int K, class Chunk32>
HK_DEV void mfma_block(float* acc, const T* a, const T* b, Chunk32 chunk32) {
  static_assert(K % 16 == 0, "hk: MFMA K must be a multiple of 16");
  f32x4 c;
  unroll<4>([&](auto i) { c[int(i)] = acc[i]; });
  unroll<K / 32>([&](auto kc) { c = chunk32(a + 8 * kc, b + 8 * kc, c); });
  if constexpr (K % 32) c = mfma_k16<T>(a + 8 * (K / 32), b + 8 * (K / 32), c);
  unroll<4>([&](auto i) { acc[i] = c[int(i)]; });
}

}  // namespace hk::arch
