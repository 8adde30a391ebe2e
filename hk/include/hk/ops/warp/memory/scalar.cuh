// Single elements of a global tensor: load_scalar, store_scalar, atomic_add. Indices are
// element indices (b, d, r, c); outside the tensor a load reads zero and a store or add does
// nothing (one uniform branch). Like the tile operations these are wave
// operations on the wave's (uniform) scalars: loads and stores are done by every active lane,
// which changes nothing, but an add must happen once per wave, so only the first active lane
// performs it.
#pragma once

#include "../../../common/arch.cuh"
#include "../../../types/global/gl.cuh"

namespace hk {

template <class T>
HK_DEV T load_scalar(const gl<T>& g, int b, int d, int r, int c) {
  if (!g.holds(b, d, r, c)) return from_compute<T>(0);
  return *g.ptr(b, d, r, c);
}

// The same read through the scalar cache: an s_load, which waits for nothing but itself, where
// a global load's value waits behind every vector load in flight. The constant address space
// promises the memory does not change while the kernel runs; hk-scalar-reads uses it only for
// tensors the kernel never writes, and the launch refuses arguments that overlap them.
template <class T>
HK_DEV T load_scalar_cached(const gl<T>& g, int b, int d, int r, int c) {
  if (!g.holds(b, d, r, c)) return from_compute<T>(0);
  return *(const __attribute__((address_space(4))) T*)g.ptr(b, d, r, c);
}

template <class T>
HK_DEV void store_scalar(const gl<T>& g, int b, int d, int r, int c, T v) {
  if (g.holds(b, d, r, c)) *g.ptr(b, d, r, c) = v;
}

// Device-scope relaxed atomic add; returns nothing. float and int32 use the hardware atomics
// (or the compiler's compare-and-swap loop where fine-grained memory could need it); bf16 and
// fp16 use a compare-and-swap loop on the aligned 32-bit word holding the element.
template <class T>
HK_DEV void atomic_add(const gl<T>& g, int b, int d, int r, int c, compute_t<T> v) {
  if (laneid() != __builtin_ctzll(__builtin_amdgcn_read_exec()) || !g.holds(b, d, r, c)) return;
  T* p = g.ptr(b, d, r, c);
  if constexpr (__is_same(T, float) || __is_same(T, int32_t)) {
    __hip_atomic_fetch_add(p, static_cast<T>(v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  } else {
    static_assert(is_16bit<T>, "hk::atomic_add: float, int32_t, bf16 or fp16");
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    uint32_t* word = reinterpret_cast<uint32_t*>(addr & ~uintptr_t(3));
    const int shift = (addr & 2) ? 16 : 0;
    uint32_t old = __hip_atomic_load(word, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    while (true) {
      const T cur = bit_cast<T>(static_cast<uint16_t>(old >> shift));
      const uint16_t upd = bit_cast<uint16_t>(from_compute<T>(to_compute(cur) + v));
      const uint32_t want = (old & ~(0xFFFFu << shift)) | (static_cast<uint32_t>(upd) << shift);
      if (__hip_atomic_compare_exchange_strong(word, &old, want, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                               __HIP_MEMORY_SCOPE_AGENT))
        break;
    }
  }
}

}  // namespace hk
