// Placing shared tiles and vectors in LDS at byte offsets the caller computes.
//
//   __shared__ alignas(16) unsigned char smem[TOTAL];        // static: counted in the metadata
//   auto& a = hk::lds_at<hk::st<hk::bf16, 64, 64>>(smem, 0);
//   auto& b = hk::lds_at<hk::st<hk::bf16, 64, 64>>(smem, hk::st<hk::bf16, 64, 64>::bytes);
//
// or, with dynamic LDS sized at launch, hk::lds_at<ST>(offset). Offsets must be multiples of 16.
// The static form is preferred: the code object's group_segment_fixed_size then states the LDS
// the kernel uses, which the occupancy gate reads.
#pragma once

#include "../../common/arch.cuh"

extern __shared__ __attribute__((aligned(16))) unsigned char hk_dynamic_lds[];

namespace hk {

template <class S>
HK_DEV S& lds_at(unsigned char* base, int offset) {
  return *reinterpret_cast<S*>(static_cast<unsigned char*>(__builtin_assume_aligned(base + offset, 16)));
}

template <class S>
HK_DEV S& lds_at(int offset) {
  return lds_at<S>(hk_dynamic_lds, offset);
}

}  // namespace hk
