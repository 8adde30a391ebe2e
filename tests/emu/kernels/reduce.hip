// out[blockIdx.x] = sum of one block's slice of x: wave shuffles, then LDS across waves.
#include <hip/hip_runtime.h>

extern "C" __global__ void __launch_bounds__(256)
block_sum(const float* __restrict__ x, float* __restrict__ out, int n) {
  __shared__ float partial[256 / 32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  for (int d = warpSize / 2; d > 0; d /= 2) v += __shfl_xor(v, d);
  int wave = threadIdx.x / warpSize, lane = threadIdx.x % warpSize;
  if (lane == 0) partial[wave] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
    for (int w = 0; w < blockDim.x / warpSize; ++w) s += partial[w];
    out[blockIdx.x] = s;
  }
}
