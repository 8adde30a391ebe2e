// What ordinary HIP code compiles to: the math library (exp, log, sin, cos, tanh, sqrt), float and
// integer division, f16 and bf16 conversions, f64, a shuffle-down reduction and an atomic.
#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>
#include <hip/hip_fp16.h>
extern "C" __global__ void math_mix(const float* __restrict__ x, const int* __restrict__ k, float* __restrict__ out,
                               __hip_bfloat16* __restrict__ ob, double* __restrict__ od, unsigned* __restrict__ cnt, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  float v = x[t];
  int q = k[t];
  float r = expf(v) + logf(fabsf(v) + 1.0f) + sinf(v) * cosf(v) + v / (q + 0.5f) + sqrtf(fabsf(v)) + tanhf(v);
  r += (float)(q / 7) + (float)(q % 13) + (float)((unsigned)q / 3u);
  __half h = __float2half(v);
  h = __hmul(h, __float2half(1.5f));
  r += __half2float(h);
  float s = r;
  for (int d = 1; d < warpSize; d *= 2) s += __shfl_down(s, d);
  if ((threadIdx.x % warpSize) == 0) atomicAdd(cnt, 1u);
  out[t] = r;
  out[n + t] = s;
  ob[t] = __float2bfloat16(r);
  od[t] = (double)v * 3.0 + sqrt((double)fabsf(v)) + 1.0 / ((double)q + 1.5);
}
