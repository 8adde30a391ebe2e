// Which GPU family this translation unit is compiled for, and the per-family constants the tile
// layouts are built from. Exactly one of HK_RDNA3 / HK_RDNA4 / HK_CDNA3 / HK_CDNA4 is defined.
#pragma once

#include <hip/hip_runtime.h>
#include <stdint.h>

#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__) || \
    defined(__gfx1150__) || defined(__gfx1151__) || defined(__gfx1152__) || defined(__gfx1153__) || \
    defined(__GFX11__)
#define HK_RDNA3 1
#elif defined(__gfx1200__) || defined(__gfx1201__) || defined(__GFX12__)
#define HK_RDNA4 1
#elif defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define HK_CDNA3 1
#elif defined(__gfx950__)
#define HK_CDNA4 1
#elif defined(__HIP_DEVICE_COMPILE__)
#error "hk: unsupported GPU target: hk builds for gfx11 (RDNA3), gfx12 (RDNA4), gfx94x (CDNA3), gfx950 (CDNA4)"
#else
// The host pass of a combined host+device compile sees no GPU macro. It only needs the types to
// parse, so it takes the primary target's layouts; no host code calls into the library.
#define HK_RDNA3 1
#define HK_HOST_PASS 1
#endif

#if defined(HK_RDNA3) || defined(HK_RDNA4)
#define HK_WAVE 32
#else
#define HK_WAVE 64
#endif

#if defined(HK_CDNA3) || defined(HK_CDNA4)
#define HK_CDNA 1
#else
#define HK_RDNA 1
#endif

// Every library function is inlined: the layouts are only free of scratch when every register
// index is a compile-time constant after inlining.
#define HK_DEV __device__ __forceinline__

namespace hk {

// Threads per wave (warp), and lane groups of 16: matrix fragments give lane%16 one row or
// column of a 16x16 block, and lane/16 a slice of the other dimension.
inline constexpr int WAVE = HK_WAVE;
inline constexpr int GROUPS = HK_WAVE / 16;

HK_DEV int laneid() { return static_cast<int>(__lane_id()); }
// The wave's index in its workgroup, read from lane 0: the compiler then knows it is the same
// in every lane (an SGPR), so branches on it are uniform and addresses built from it scalar.
HK_DEV int warpid() { return __builtin_amdgcn_readfirstlane(static_cast<int>(threadIdx.x) / WAVE); }

}  // namespace hk
