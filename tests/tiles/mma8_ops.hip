// Compile test: the four MMA forms for 8-bit operands where the target has them (int8 on every
// target; fp8 e4m3 and e5m2 on gfx12, gfx94x and gfx950, in the format each reads: OCP on gfx12 and
// gfx950, FNUZ on gfx94x), with K = 64 (gfx950's int8 step).
#include "hk/hk.cuh"

using namespace hk;

template <class T, class Acc>
__device__ void four_forms8(const gl<T>& in, const gl<Acc>& out) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<T, 16, 64, row_l> a_row;   // MxK
  rt<T, 64, 16, col_l> a_col;   // KxM
  rt<T, 64, 16, col_l> b_col;   // KxN
  rt<T, 16, 64, row_l> b_row;   // NxK
  rt<Acc, 16, 16> d;
  load(a_row, in, idx);
  load(a_col, in, idx);
  load(b_col, in, idx);
  load(b_row, in, idx);
  zero(d);
  mma_AB(d, a_row, b_col, d);
  mma_ABt(d, a_row, b_row, d);
  mma_AtB(d, a_col, b_col, d);
  mma_AtBt(d, a_col, b_row, d);
  store(out, d, idx);
}

extern "C" __global__ void __launch_bounds__(WAVE) hk_mma_i8(gl<int8_t> in, gl<int32_t> out) { four_forms8(in, out); }
#if defined(HK_CDNA3)
extern "C" __global__ void __launch_bounds__(WAVE) hk_mma_fp8e4m3(gl<fp8e4m3fnuz> in, gl<float> out) { four_forms8(in, out); }
extern "C" __global__ void __launch_bounds__(WAVE) hk_mma_fp8e5m2(gl<fp8e5m2fnuz> in, gl<float> out) { four_forms8(in, out); }
#elif !defined(HK_RDNA3)
extern "C" __global__ void __launch_bounds__(WAVE) hk_mma_fp8e4m3(gl<fp8e4m3> in, gl<float> out) { four_forms8(in, out); }
extern "C" __global__ void __launch_bounds__(WAVE) hk_mma_fp8e5m2(gl<fp8e5m2> in, gl<float> out) { four_forms8(in, out); }
#endif
