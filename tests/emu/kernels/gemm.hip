// C[M,N] = A[M,K] @ B[K,N] in f16 with an f32 accumulator, through LDS with barriers and the
// target's matrix instruction. One block computes a 32x32 tile of C with four waves, each wave
// a 16x16 subtile; K advances 32 at a time. M, N and K must be multiples of 32.
#include <hip/hip_runtime.h>

typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef _Float16 half8 __attribute__((ext_vector_type(8)));
typedef _Float16 half16 __attribute__((ext_vector_type(16)));
typedef float float4_ __attribute__((ext_vector_type(4)));
typedef float float8_ __attribute__((ext_vector_type(8)));

#define TILE 32

extern "C" __global__ void __launch_bounds__(256)
gemm_f16(const _Float16* __restrict__ a, const _Float16* __restrict__ b, float* __restrict__ c,
         int M, int N, int K) {
  __shared__ __attribute__((aligned(16))) _Float16 as[TILE][TILE];
  __shared__ __attribute__((aligned(16))) _Float16 bs[TILE][TILE];
  const int tid = threadIdx.x, lane = tid % warpSize, wave = tid / warpSize;
  const int wm = wave / 2, wn = wave % 2;  // this wave's 16x16 subtile
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  const int r = lane % 16, g = lane / 16;   // row or column within the subtile; lane group

#if defined(__gfx942__) || defined(__gfx950__)
  float4_ acc = {};
#else
  float8_ acc = {};
#endif
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // Stage both tiles: 128-bit global loads, 128-bit LDS stores.
    for (int i = tid; i < TILE * TILE / 8; i += blockDim.x) {
      int tr = i / (TILE / 8), tc = (i % (TILE / 8)) * 8;
      *(uint4*)&as[tr][tc] = *(const uint4*)&a[(size_t)(row0 + tr) * K + k0 + tc];
      *(uint4*)&bs[tr][tc] = *(const uint4*)&b[(size_t)(k0 + tr) * N + col0 + tc];
    }
    __syncthreads();
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__)
    // RDNA3: lanes 0-15 and 16-31 both hold row (column) r with all 16 K values.
    for (int kk = 0; kk < TILE; kk += 16) {
      half16 fa, fb;
      for (int i = 0; i < 16; ++i) {
        fa[i] = as[wm * 16 + r][kk + i];
        fb[i] = bs[kk + i][wn * 16 + r];
      }
      acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(fa, fb, acc);
    }
#elif defined(__gfx1200__) || defined(__gfx1201__)
    // RDNA4: lane group g holds K values 8g..8g+7.
    for (int kk = 0; kk < TILE; kk += 16) {
      half8 fa, fb;
      for (int i = 0; i < 8; ++i) {
        fa[i] = as[wm * 16 + r][kk + 8 * g + i];
        fb[i] = bs[kk + 8 * g + i][wn * 16 + r];
      }
      acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(fa, fb, acc);
    }
#elif defined(__gfx942__)
    // CDNA3: four lane groups of 16 hold K values 4g..4g+3.
    for (int kk = 0; kk < TILE; kk += 16) {
      half4 fa, fb;
      for (int i = 0; i < 4; ++i) {
        fa[i] = as[wm * 16 + r][kk + 4 * g + i];
        fb[i] = bs[kk + 4 * g + i][wn * 16 + r];
      }
      acc = __builtin_amdgcn_mfma_f32_16x16x16f16(fa, fb, acc, 0, 0, 0);
    }
#elif defined(__gfx950__)
    // CDNA4: 16x16x32, lane group g holds K values 8g..8g+7.
    {
      half8 fa, fb;
      for (int i = 0; i < 8; ++i) {
        fa[i] = as[wm * 16 + r][8 * g + i];
        fb[i] = bs[8 * g + i][wn * 16 + r];
      }
      acc = __builtin_amdgcn_mfma_f32_16x16x32_f16(fa, fb, acc, 0, 0, 0);
    }
#else
#error "gemm_f16: no matrix instruction for this target"
#endif
    __syncthreads();
  }
  float* out = c + (size_t)(row0 + wm * 16) * N + col0 + wn * 16;
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__)
  for (int v = 0; v < 8; ++v) out[(size_t)(2 * v + g) * N + r] = acc[v];
#elif defined(__gfx1200__) || defined(__gfx1201__)
  for (int v = 0; v < 8; ++v) out[(size_t)(8 * g + v) * N + r] = acc[v];
#else
  for (int v = 0; v < 4; ++v) out[(size_t)(4 * g + v) * N + r] = acc[v];
#endif
}
