// Waits, barriers, and the bind that orders register use after a wait.
//
// s_waitcnt has no register operands: to the compiler, a wait does not produce the registers
// of the loads it waits for, so it may move an instruction that reads them above the wait.
// hk::bind(tile) after a wait is a volatile asm that claims to read and rewrite every register of
// the tile; volatile asms keep their order, so everything using the tile after the bind stays
// after the wait. The translation binds every fragment after every wait.
#pragma once

#include "../../types/register/register.cuh"

namespace hk {

// Workgroup barrier with __syncthreads semantics (LDS and global writes of the workgroup are
// visible after it). Note: it does not wait for CDNA's global->LDS DMA (counted by vmcnt); wait
// with wait_vm<0>() first (see group/memory/tile/global_to_shared.cuh).
HK_DEV void barrier() { __syncthreads(); }

namespace detail {
// s_waitcnt's immediate with every counter but one at its maximum (gfx9: vmcnt in bits 3:0 and
// 15:14, expcnt 6:4, lgkmcnt 11:8; gfx11: vmcnt 15:10, lgkmcnt 9:4, expcnt 2:0).
#if defined(HK_RDNA3)
template <int N> inline constexpr int waitcnt_lgkm = 0xFC07 | (N << 4);
template <int N> inline constexpr int waitcnt_vm = 0x03F7 | (N << 10);
#elif defined(HK_CDNA)
template <int N> inline constexpr int waitcnt_lgkm = 0xC07F | (N << 8);
template <int N> inline constexpr int waitcnt_vm = 0x0F70 | (N & 15) | ((N >> 4) << 14);
#endif

// A wait the compiler knows of: its own wait insertion then counts from it instead of adding a
// wait before every use. The empty asm before it keeps earlier memory operations from sinking
// below it (a load moved past the wait would not be covered by its count). gfx12 has no
// s_waitcnt and clang no builtin for its split counters: there the wait is an asm statement.
template <int ENC>
HK_DEV void waitcnt() {
  asm volatile("" ::: "memory");
  __builtin_amdgcn_s_waitcnt(ENC);
}
}  // namespace detail

// Wait until at most N LDS (and scalar memory) instructions of this wave are outstanding:
// s_waitcnt lgkmcnt(N), s_wait_dscnt N on gfx12. A count above the counter's range waits for
// the range's maximum (longer, never shorter).
template <int N = 0>
HK_DEV void wait_lds() {
  static_assert(N >= 0, "hk::wait_lds: the count is not negative");
#if defined(HK_RDNA4)
  asm volatile("s_wait_dscnt %0" ::"n"(N < 63 ? N : 63) : "memory");
#else
  constexpr int max = HK_WAVE == 32 ? 63 : 15;
  detail::waitcnt<detail::waitcnt_lgkm<(N < max ? N : max)>>();
#endif
}

// Wait until at most N vector-memory loads of this wave are outstanding (including CDNA's
// global->LDS DMA): s_waitcnt vmcnt(N), s_wait_loadcnt N on gfx12.
template <int N = 0>
HK_DEV void wait_vm() {
  static_assert(N >= 0, "hk::wait_vm: the count is not negative");
#if defined(HK_RDNA4)
  asm volatile("s_wait_loadcnt %0" ::"n"(N < 63 ? N : 63) : "memory");
#else
  detail::waitcnt<detail::waitcnt_vm<(N < 63 ? N : 63)>>();
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
  static_assert(((is_rt<X> || is_rv<X> || is_staging<X>) && ...), "hk::bind: takes register tiles, vectors or stagings");
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
