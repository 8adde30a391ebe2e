// RUN: hk-opt %s -split-input-file -verify-diagnostics --hk-waits="arch=gfx1100 derive=false"

// With derive=false a missing wait is an error that names the wait to add.
func.func @missing(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel} {
  // expected-note @+1 {{the operation in flight}}
  %x = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  %y = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  // expected-error @+1 {{'hk.store' reads a value whose vector-memory load is still in flight; add hk.wait_vm 1 before it}}
  hk.store %x, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  hk.wait_vm 0
  hk.store %y, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

func.func @undrained_barrier(%t: !hk.rt<bf16, 16x64, row>, %s: !hk.st<bf16, 16x64, 1>) attributes {hk.kernel} {
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{the operation in flight}}
  hk.lds_store %t, %s[%c0] : !hk.rt<bf16, 16x64, row>, !hk.st<bf16, 16x64, 1>
  // expected-error @+1 {{barrier reached while an LDS write is in flight on the LDS counter; other waves would read stale LDS. Add hk.wait_lds 0 before the barrier}}
  hk.barrier
  return
}
