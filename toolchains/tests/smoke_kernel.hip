// The toolchain smoke kernel: one of each feature the tile library leans on (bf16 from
// hip_bf16.h, thread ids, LDS with a barrier, a cross-lane shuffle) and one matrix instruction
// of the target's family. toolchain_test.py checks the code object it compiles to.
#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>

typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef float f32x8 __attribute__((ext_vector_type(8)));

extern "C" __global__ void __launch_bounds__(256)
hk_smoke(const __hip_bfloat16* __restrict__ in, float* __restrict__ out) {
  __shared__ float stage[256];
  const int t = threadIdx.x;
  stage[t] = __bfloat162float(in[blockIdx.x * 256 + t]);
  __syncthreads();
  float v = __shfl_xor(stage[255 - t], 1);

#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__)
  // RDNA3: WMMA 16x16x16, bf16 operands in 16 halves per lane, fp32 accumulator in 8 lanes.
  typedef __bf16 bf16x16 __attribute__((ext_vector_type(16)));
  bf16x16 a, b;
  for (int i = 0; i < 16; ++i) { a[i] = (__bf16)(v + i); b[i] = (__bf16)(v - i); }
  f32x8 c = {};
  c = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, c);
  v += c[0] + c[7];
#elif defined(__gfx1200__) || defined(__gfx1201__)
  // RDNA4: WMMA 16x16x16 without the duplicated lanes, 8 halves per lane.
  typedef __bf16 bf16x8 __attribute__((ext_vector_type(8)));
  bf16x8 a, b;
  for (int i = 0; i < 8; ++i) { a[i] = (__bf16)(v + i); b[i] = (__bf16)(v - i); }
  f32x8 c = {};
  c = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(a, b, c);
  v += c[0] + c[7];
#elif defined(__gfx942__)
  // CDNA3: MFMA 16x16x16 bf16, 4 bf16 per lane in wave64.
  typedef short bf16x4 __attribute__((ext_vector_type(4)));
  bf16x4 a, b;
  for (int i = 0; i < 4; ++i) { a[i] = (short)(t + i); b[i] = (short)(t - i); }
  f32x4 c = {};
  c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
  v += c[0] + c[3];
#elif defined(__gfx950__)
  // CDNA4: MFMA 16x16x32 bf16, 8 bf16 per lane in wave64.
  typedef __bf16 bf16x8 __attribute__((ext_vector_type(8)));
  bf16x8 a, b;
  for (int i = 0; i < 8; ++i) { a[i] = (__bf16)(v + i); b[i] = (__bf16)(v - i); }
  f32x4 c = {};
  c = __builtin_amdgcn_mfma_f32_16x16x32_bf16(a, b, c, 0, 0, 0);
  v += c[0] + c[3];
#else
#error "hk_smoke: no matrix instruction for this target"
#endif
  out[blockIdx.x * 256 + t] = v;
}
