// CDNA3 (gfx94x) matrix step: a chunk of 32 k feeds two v_mfma_f32_16x16x16 (see fragments.cuh).
#pragma once

#include "fragments.cuh"

namespace hk::arch {

// acc[0..4) += A(16xK) * B(Kx16) for one output block; a and b are one strip's operand slots.
template <class T, int K>
HK_DEV void mma_block(float* acc, const T* a, const T* b) {
  static_assert(K % 16 == 0, "hk: MFMA K must be a multiple of 16");
  f32x4 c;
  unroll<4>([&](auto i) { c[int(i)] = acc[i]; });
  unroll<K / 32>([&](auto kc) {
    c = mfma_k16<T>(a + 8 * kc, b + 8 * kc, c);
    c = mfma_k16<T>(a + 8 * kc + 4, b + 8 * kc + 4, c);
  });
  if constexpr (K % 32) c = mfma_k16<T>(a + 8 * (K / 32), b + 8 * (K / 32), c);
  unroll<4>([&](auto i) { acc[i] = c[int(i)]; });
}

}  // namespace hk::arch
