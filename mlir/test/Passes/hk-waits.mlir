// RUN: hk-opt %s -split-input-file -verify-diagnostics --hk-waits="arch=gfx1100" | FileCheck %s

// Two loads in flight; the first use waits for both at once, listing both tiles.
// CHECK-LABEL: func.func @derived
// CHECK: %[[A:.*]] = hk.load
// CHECK: %[[B:.*]] = hk.load
// CHECK-NEXT: hk.wait_vm 0 for %[[A]], %[[B]]
// CHECK-NEXT: hk.binary add %[[B]], %[[A]]
func.func @derived(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel} {
  %x = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  %y = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  %s = hk.binary add %y, %x : !hk.rt<bf16, 16x64, row>, !hk.rt<bf16, 16x64, row>
  hk.store %s, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// The oldest load is waited for with a count that leaves the younger one in flight.
// CHECK-LABEL: func.func @partial
// CHECK: %[[A:.*]] = hk.lds_load
// CHECK: %[[B:.*]] = hk.lds_load
// CHECK-NEXT: hk.wait_lds 1 for %[[A]]
// CHECK-NEXT: hk.store %[[A]]
// CHECK-NEXT: hk.wait_lds 0 for %[[B]]
// CHECK-NEXT: hk.store %[[B]]
func.func @partial(%s: !hk.st<bf16, 16x64, 2>, %a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = hk.lds_load %s[%c0] : !hk.st<bf16, 16x64, 2> -> !hk.rt<bf16, 16x64, row>
  %y = hk.lds_load %s[%c1] : !hk.st<bf16, 16x64, 2> -> !hk.rt<bf16, 16x64, row>
  hk.store %x, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  hk.store %y, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// LDS writes are drained before the barrier that publishes them.
// CHECK-LABEL: func.func @barrier_drain
// CHECK: hk.lds_store
// CHECK-NEXT: hk.wait_lds 0{{$}}
// CHECK-NEXT: hk.barrier
func.func @barrier_drain(%t: !hk.rt<bf16, 16x64, row>, %s: !hk.st<bf16, 16x64, 1>) attributes {hk.kernel} {
  %c0 = arith.constant 0 : index
  hk.lds_store %t, %s[%c0] : !hk.rt<bf16, 16x64, row>, !hk.st<bf16, 16x64, 1>
  hk.barrier
  return
}

// -----

// Software pipelining: the next tile's load stays in flight across the back edge and is
// waited for at the top of the next iteration; the loop reaches a steady state.
// CHECK-LABEL: func.func @pipelined
// CHECK: scf.for
// CHECK-NEXT: hk.wait_vm 0 for
// CHECK-NEXT: hk.store
// CHECK: hk.load
// CHECK-NEXT: scf.yield
func.func @pipelined(%a: !hk.gl<bf16>, %c: !hk.coord, %n: index) attributes {hk.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %first = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%cur = %first) -> (!hk.rt<bf16, 16x64, row>) {
    hk.store %cur, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
    %next = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
    scf.yield %next : !hk.rt<bf16, 16x64, row>
  }
  hk.store %last, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// An explicit wait that completes something is kept and lists what it completes.
// CHECK-LABEL: func.func @explicit
// CHECK: %[[A:.*]] = hk.load
// CHECK-NEXT: hk.wait_vm 0 for %[[A]]
// CHECK-NEXT: hk.store
func.func @explicit(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel} {
  %x = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  hk.wait_vm 0
  hk.store %x, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

func.func @useless_wait(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel} {
  // expected-error @+1 {{'hk.wait_lds' 0 waits for nothing: 0 LDS operations are in flight here; remove it}}
  hk.wait_lds 0
  return
}

// -----

// expected-error @+1 {{kernel @dangling ends with a load in flight on the vector-memory counter; its value is never waited for, so remove the load or use its value}}
func.func @dangling(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel} {
  // expected-note @+1 {{the load}}
  %x = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  return
}

// -----

// Every iteration issues a load it never waits for: the count grows without bound.
func.func @not_steady(%a: !hk.gl<bf16>, %c: !hk.coord, %n: index) attributes {hk.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{loop does not reach a steady state: every iteration leaves 1 more vector-memory operation(s) in flight; wait for them inside the loop}}
  scf.for %i = %c0 to %n step %c1 {
    // expected-note @+1 {{issued here}}
    %x = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  }
  return
}
