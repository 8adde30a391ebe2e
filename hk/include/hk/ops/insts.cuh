// How many instructions an operation issues on a wait counter, per wave: what a wait that leaves
// operations in flight must count, since the hardware counts instructions, not operations.
//
//   hk::lds_insts<RT>()       an LDS load or store of a register tile (ds_load / ds_store)
//   hk::vm_insts<RT>()        a global load of a register tile
//   hk::lds_insts<S>()        the LDS writes of a staged copy (commit) or of a workgroup copy
//   hk::vm_insts<S>()         the loads of a staged copy (issue)   [S = hk::staging<ST, N>]
//
// Each is a lower bound over the operation's paths: wait_lds<n>() with n the sum over the
// operations left in flight then waits at least as long as the kernel asked.
#pragma once

#include "warp/memory/tile/runs.cuh"

namespace hk {
namespace detail {

// The pieces for_each_run moves a register tile in: each run of L slots in pieces of up to 16
// bytes (the same walk as the loads and stores, in constexpr form).
template <class RT>
constexpr int tile_pieces() {
  using T = typename RT::dtype;
  int pieces = 0;
  for (int e = 0; e < RT::slots;) {
    const int run = RT::rows_major ? RT::pattern::template run_len<RT::minor>(e) : 1;
    const int bytes = run * static_cast<int>(sizeof(T)) < 16 ? run * static_cast<int>(sizeof(T)) : 16;
    pieces += run / (bytes / static_cast<int>(sizeof(T)));
    e += run;
  }
  return pieces * RT::strips;
}

}  // namespace detail

template <class X>
constexpr int lds_insts() {
  if constexpr (is_staging<X>) return X::lds_insts;
  else {
    static_assert(is_rt<X>, "hk::lds_insts: of a register tile or a staging");
    return detail::tile_pieces<X>();
  }
}

template <class X>
constexpr int vm_insts() {
  if constexpr (is_staging<X>) return X::vm_insts;
  else {
    static_assert(is_rt<X>, "hk::vm_insts: of a register tile or a staging");
    return detail::tile_pieces<X>();
  }
}

}  // namespace hk
