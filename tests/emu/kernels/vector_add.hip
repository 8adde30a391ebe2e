// c[i] = a[i] + b[i] for i < n: the smallest complete kernel, with a bounds check and blockDim.
#include <hip/hip_runtime.h>

extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
