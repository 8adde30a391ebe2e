#include <hip/hip_runtime.h>
// A private array indexed by data: it lives in scratch.
extern "C" __global__ void private_array(const int* __restrict__ idx, float* __restrict__ out) {
  float buf[64];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < 64; ++i) buf[i] = t * 100.0f + i;
  for (int i = 0; i < 64; ++i) buf[(i * 7 + idx[t]) & 63] += 0.5f * i;
  out[t] = buf[idx[t] & 63];
}
