// CDNA4 (gfx950) MFMA, wave64 (see rdna3/fragments.cuh for the vocabulary).
//
// v_mfma_f32_16x16x32_{bf16,f16}: A/B are 8 halves per lane, row (or column) = lane%16 and
// k = 8*(lane/16) + 2*v + h, which is exactly the library's chunk-of-32 operand pattern shared
// with cdna3 (lane group g holds 8g..8g+7): one MFMA per chunk, no permutation. A last chunk of
// 16 uses v_mfma_f32_16x16x16 (k = 4*(lane/16) + 2*v + h). The accumulator is as on cdna3.
#pragma once

#include "../cdna3/fragments.cuh"

namespace hk::arch {

typedef __bf16 bf16x8 __attribute__((ext_vector_type(8)));
typedef _Float16 f16x8 __attribute__((ext_vector_type(8)));

template <class T>
HK_DEV f32x4 mfma_k32(const T* a, const T* b, f32x4 c) {
  if constexpr (__is_same(T, __bf16)) {
    bf16x8 va, vb;
    unroll<8>([&](auto i) { va[int(i)] = a[i]; vb[int(i)] = b[i]; });
    return __builtin_amdgcn_mfma_f32_16x16x32_bf16(va, vb, c, 0, 0, 0);
  } else {
    static_assert(__is_same(T, _Float16), "hk: MFMA operands are bf16 or fp16");
    f16x8 va, vb;
    unroll<8>([&](auto i) { va[int(i)] = a[i]; vb[int(i)] = b[i]; });
    return __builtin_amdgcn_mfma_f32_16x16x32_f16(va, vb, c, 0, 0, 0);
  }
}

// One chunk of 32 k is one 16x16x32 MFMA.
template <class T, int K>
HK_DEV void mma_block(float* acc, const T* a, const T* b) {
  mfma_block<T, K>(acc, a, b, [](const T* a32, const T* b32, f32x4 c) { return mfma_k32<T>(a32, b32, c); });
}

}  // namespace hk::arch
