// CDNA3 (gfx94x) matrix step: a chunk of 32 k feeds two v_mfma_f32_16x16x16 (see fragments.cuh).
#pragma once

#include "fragments.cuh"

namespace hk::arch {

// One chunk of 32 k is two MFMAs: each lane's slots 0-3, then 4-7.
template <class T, int K>
HK_DEV void mma_block(float* acc, const T* a, const T* b) {
  mfma_block<T, K>(acc, a, b, [](const T* a32, const T* b32, f32x4 c) {
    return mfma_k16<T>(a32 + 4, b32 + 4, mfma_k16<T>(a32, b32, c));
  });
}

}  // namespace hk::arch
