// Register staging of a workgroup copy: hk::staging<ST, NUM_WARPS>, this thread's share of a
// shared tile ST on its way from global memory to LDS (group<N>::issue fills it, commit writes
// it; see ops/group/memory/tile/staged.cuh). Thread t holds 16-byte chunks t, t + THREADS, ...
// of the tile in row-major order.
#pragma once

#include "../shared/st.cuh"

namespace hk {

template <class ST, int NUM_WARPS>
struct staging {
  static_assert(is_st<ST>, "hk::staging: stages a shared tile");
  static_assert(NUM_WARPS >= 1, "hk::staging: at least one warp");
  using shared = ST;
  static constexpr int threads = NUM_WARPS * WAVE;
  static constexpr int chunks = ST::rows * ST::chunks;  // 16-byte chunks in the tile
  static constexpr int per_thread = (chunks + threads - 1) / threads;
  // Loads (and LDS writes) every wave issues: the rounds that cover the whole workgroup.
  static constexpr int vm_insts = chunks / threads;
  static constexpr int lds_insts = chunks / threads;

  typedef uint32_t chunk_t __attribute__((ext_vector_type(4)));
  chunk_t data[per_thread];
};

template <class X> inline constexpr bool is_staging = false;
template <class ST, int N> inline constexpr bool is_staging<staging<ST, N>> = true;

}  // namespace hk
