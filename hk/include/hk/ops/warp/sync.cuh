// Waits, barriers, and the bind that orders register use after a wait.
//
// s_waitcnt has no register operands: to the compiler, a wait does not produce the registers
// of the loads it waits for, so it may move an instruction that reads them above the wait.
// hk::bind(tile) after a wait is a volatile asm that claims to read and rewrite every register of
// the tile; volatile asms keep their order, so everything using the tile after the bind stays
// after the wait. The translation binds every fragment after every wait.
#pragma once

#include "../../types/register/rt.cuh"

namespace hk {

// Workgroup barrier with __syncthreads semantics (LDS and global writes of the workgroup are
// visible after it). Note: it does not wait for CDNA's global->LDS DMA (counted by vmcnt); wait
// with wait_vm<0>() first (see group/memory/tile/global_to_shared.cuh).
HK_DEV void barrier() { __syncthreads(); }

// Wait until at most N LDS (and scalar memory) operations of this wave are outstanding:
// s_waitcnt lgkmcnt(N), s_wait_dscnt N on gfx12.
template <int N = 0>
HK_DEV void wait_lds() {
#if defined(HK_RDNA4)
  static_assert(N >= 0 && N < 64, "hk::wait_lds: count out of range");
  asm volatile("s_wait_dscnt %0" ::"n"(N) : "memory");
#else
  static_assert(N >= 0 && N < 16, "hk::wait_lds: count out of range");
  asm volatile("s_waitcnt lgkmcnt(%0)" ::"n"(N) : "memory");
#endif
}

// Wait until at most N vector-memory loads of this wave are outstanding (including CDNA's
// global->LDS DMA): s_waitcnt vmcnt(N), s_wait_loadcnt N on gfx12.
template <int N = 0>
HK_DEV void wait_vm() {
  static_assert(N >= 0 && N < 64, "hk::wait_vm: count out of range");
#if defined(HK_RDNA4)
  asm volatile("s_wait_loadcnt %0" ::"n"(N) : "memory");
#else
  asm volatile("s_waitcnt vmcnt(%0)" ::"n"(N) : "memory");
#endif
}

namespace detail {
HK_DEV void bind_reg(uint32_t& r) { asm volatile("" : "+v"(r)); }

template <class X>
HK_DEV void bind_words(X& x) {
  // The tile's bytes as 32-bit registers (a trailing partial word is padded with zeros).
  constexpr int words = (sizeof(x.data) + 3) / 4;
  struct words_t { uint32_t w[words]; };
  words_t w{};
  __builtin_memcpy(&w, &x.data, sizeof(x.data));
  unroll<words>([&](auto i) { bind_reg(w.w[i]); });
  __builtin_memcpy(&x.data, &w, sizeof(x.data));
}
}  // namespace detail

// Pin register tiles (or vectors) behind the preceding wait: see the top of this file.
template <class... X>
HK_DEV void bind(X&... x) {
  static_assert(((is_rt<X> || is_rv<X>) && ...), "hk::bind: takes register tiles or vectors");
  (detail::bind_words(x), ...);
}

// Scheduling hints. sched_barrier<MASK>(): the instruction kinds in MASK may cross it (0: none);
// set_prio<P>(): this wave's issue priority, 0..3.
template <int MASK>
HK_DEV void sched_barrier() { __builtin_amdgcn_sched_barrier(MASK); }

template <int P>
HK_DEV void set_prio() {
  static_assert(P >= 0 && P <= 3, "hk::set_prio: priority is 0..3");
  __builtin_amdgcn_s_setprio(P);
}

}  // namespace hk
