// 8-bit matrix steps: arch::mma8_block<T, K>(acc, a, b) for T = int8_t (int32 accumulator) and,
// where the target has them, fp8e4m3 / fp8e5m2 (OCP: gfx12, gfx950) or fp8e4m3fnuz / fp8e5m2fnuz
// (FNUZ: gfx942) (fp32 accumulator). The verifier refuses the other format before C++ is written.
//
// a and b are one strip's operand bytes in the target's operand pattern (opnd_pattern), where
// 8-bit register tiles keep them (types/register/layout.cuh). Per family:
//
//  - rdna3 (gfx11): v_wmma_i32_16x16x16_iu8, 16 bytes per lane, k = slot, duplicated in both
//    lane groups, exactly the operand pattern. No fp8.
//  - rdna4 (gfx12): v_wmma_{i32_16x16x16_iu8, f32_16x16x16_fp8_fp8, f32_16x16x16_bf8_bf8},
//    8 bytes per lane per 16 k; lane group g holds 8g..8g+7 where the hardware reads k in two
//    runs of 4 per group: a permutation of k applied to A and B alike, as for 16-bit operands.
//  - cdna3 (gfx94x): v_mfma_{i32_16x16x32_i8, f32_16x16x32_fp8_fp8, f32_16x16x32_bf8_bf8}: per
//    chunk of 32, lane group g holds 8g..8g+7, the hardware's order. fp8 is FNUZ here
//    (hk::fp8e4m3fnuz / fp8e5m2fnuz).
//  - cdna4 (gfx950): v_mfma_i32_16x16x64_i8 takes two chunks of 32 (16 bytes per lane: a
//    permutation of k, A and B alike); fp8 (OCP) as on cdna3.
//
// The accumulator is the family's acc_pattern for int32 and float alike: acc_block_slots slots
// per lane per 16x16 output block.
#pragma once

#include "../common/dtypes.cuh"
#include "../common/util.cuh"

namespace hk::arch {

typedef int i32x2_8 __attribute__((ext_vector_type(2)));
typedef int i32x4_8 __attribute__((ext_vector_type(4)));
typedef int i32x8_8 __attribute__((ext_vector_type(8)));
typedef float f32x4_8 __attribute__((ext_vector_type(4)));
typedef float f32x8_8 __attribute__((ext_vector_type(8)));

// Four bytes as one little-endian word.
HK_DEV int word8(const uint8_t* p) {
  return static_cast<int>(static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                          (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24));
}

// N words (4N bytes) as a vector of N ints.
template <int N, class V>
HK_DEV V words8(const uint8_t* p) {
  V v;
  unroll<N>([&](auto i) { v[int(i)] = word8(p + 4 * i); });
  return v;
}

template <class T>
inline constexpr bool is_mma8 = __is_same(T, int8_t) || is_fp8<T>;

// The accumulator element of an 8-bit MMA.
template <class T>
using mma8_acc_t = __type_pack_element<__is_same(T, int8_t) ? 1 : 0, float, int32_t>;

#if defined(HK_RDNA3)

template <class T, int K>
HK_DEV void mma8_block(mma8_acc_t<T>* acc, const uint8_t* a, const uint8_t* b) {
  static_assert(__is_same(T, int8_t), "hk::mma: gfx11 has no fp8 matrix instruction (int8 only)");
  static_assert(K % 16 == 0, "hk: WMMA K must be a multiple of 16");
  i32x8_8 c;
  unroll<8>([&](auto i) { c[int(i)] = acc[i]; });
  unroll<K / 16>([&](auto kb) {
    const i32x4_8 va = words8<4, i32x4_8>(a + 16 * kb), vb = words8<4, i32x4_8>(b + 16 * kb);
    c = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, va, true, vb, c, false);
  });
  unroll<8>([&](auto i) { acc[i] = c[int(i)]; });
}

#elif defined(HK_RDNA4)

template <class T, int K>
HK_DEV void mma8_block(mma8_acc_t<T>* acc, const uint8_t* a, const uint8_t* b) {
  static_assert(K % 16 == 0, "hk: WMMA K must be a multiple of 16");
  if constexpr (__is_same(T, int8_t)) {
    i32x8_8 c;
    unroll<8>([&](auto i) { c[int(i)] = acc[i]; });
    unroll<K / 16>([&](auto kb) {
      const i32x2_8 va = words8<2, i32x2_8>(a + 8 * kb), vb = words8<2, i32x2_8>(b + 8 * kb);
      c = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32_gfx12(true, va, true, vb, c, false);
    });
    unroll<8>([&](auto i) { acc[i] = c[int(i)]; });
  } else {
    static_assert(!is_fnuz<T>, "hk::mma: gfx12's fp8 matrix instructions read the OCP formats (fp8e4m3, fp8e5m2)");
    f32x8_8 c;
    unroll<8>([&](auto i) { c[int(i)] = acc[i]; });
    unroll<K / 16>([&](auto kb) {
      const i32x2_8 va = words8<2, i32x2_8>(a + 8 * kb), vb = words8<2, i32x2_8>(b + 8 * kb);
      if constexpr (is_e4m3<T>) c = __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12(va, vb, c);
      else c = __builtin_amdgcn_wmma_f32_16x16x16_bf8_bf8_w32_gfx12(va, vb, c);
    });
    unroll<8>([&](auto i) { acc[i] = c[int(i)]; });
  }
}

#else  // CDNA3, CDNA4

// One 16x16x32 fp8 MFMA on a chunk's 8 bytes per lane.
template <class T>
HK_DEV f32x4_8 mfma8_fp8_k32(const uint8_t* a, const uint8_t* b, f32x4_8 c) {
  const long va = static_cast<long>(static_cast<uint32_t>(word8(a))) | (static_cast<long>(word8(a + 4)) << 32);
  const long vb = static_cast<long>(static_cast<uint32_t>(word8(b))) | (static_cast<long>(word8(b + 4)) << 32);
#if defined(HK_CDNA3)
  static_assert(is_fnuz<T>, "hk::mma: gfx94x's fp8 matrix instructions read the FNUZ formats (fp8e4m3fnuz, fp8e5m2fnuz)");
#else
  static_assert(!is_fnuz<T>, "hk::mma: gfx950's fp8 matrix instructions read the OCP formats (fp8e4m3, fp8e5m2)");
#endif
  if constexpr (is_e4m3<T>) return __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(va, vb, c, 0, 0, 0);
  else return __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(va, vb, c, 0, 0, 0);
}

template <class T, int K>
HK_DEV void mma8_block(mma8_acc_t<T>* acc, const uint8_t* a, const uint8_t* b) {
  if constexpr (__is_same(T, int8_t)) {
    i32x4_8 c;
    unroll<4>([&](auto i) { c[int(i)] = acc[i]; });
#if defined(HK_CDNA4)
    static_assert(K % 64 == 0, "hk: gfx950's int8 MFMA K must be a multiple of 64");
    unroll<K / 64>([&](auto kc) {
      const i32x4_8 va = words8<4, i32x4_8>(a + 16 * kc), vb = words8<4, i32x4_8>(b + 16 * kc);
      c = __builtin_amdgcn_mfma_i32_16x16x64_i8(va, vb, c, 0, 0, 0);
    });
#else
    static_assert(K % 32 == 0, "hk: gfx94x's int8 MFMA K must be a multiple of 32");
    unroll<K / 32>([&](auto kc) {
      const long va = static_cast<long>(static_cast<uint32_t>(word8(a + 8 * kc))) |
                      (static_cast<long>(word8(a + 8 * kc + 4)) << 32);
      const long vb = static_cast<long>(static_cast<uint32_t>(word8(b + 8 * kc))) |
                      (static_cast<long>(word8(b + 8 * kc + 4)) << 32);
      c = __builtin_amdgcn_mfma_i32_16x16x32_i8(va, vb, c, 0, 0, 0);
    });
#endif
    unroll<4>([&](auto i) { acc[i] = c[int(i)]; });
  } else {
    static_assert(K % 32 == 0, "hk: the fp8 MFMA K must be a multiple of 32");
    f32x4_8 c;
    unroll<4>([&](auto i) { c[int(i)] = acc[i]; });
    unroll<K / 32>([&](auto kc) { c = mfma8_fp8_k32<T>(a + 8 * kc, b + 8 * kc, c); });
    unroll<4>([&](auto i) { acc[i] = c[int(i)]; });
  }
}

#endif

}  // namespace hk::arch
