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
// CHECK-NEXT: hk.wait_lds 1 for %[[A]] : !hk.rt<bf16, 16x64, row> {younger = [!hk.rt<bf16, 16x64, row>]}
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

// -----

// A staged copy: its loads are waited for before the commit writes them, and the commit's LDS
// writes before the barrier that publishes them.
// CHECK-LABEL: func.func @staged_copy
// CHECK: %[[T:.*]] = hk.copy_issue
// CHECK-NEXT: hk.wait_vm 0 for %[[T]] : !hk.staged<bf16, 64x32>
// CHECK-NEXT: hk.copy_commit %[[T]]
// CHECK-NEXT: hk.wait_lds 0{{$}}
// CHECK-NEXT: hk.barrier
func.func @staged_copy(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x32, 1>
  %t = hk.copy_issue %a[%c] : !hk.gl<bf16> -> !hk.staged<bf16, 64x32>
  hk.copy_commit %t, %s[%c0] : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x32, 1>
  hk.barrier
  return
}

// -----

// A wait that leaves operations in flight describes them, so that the translation can count
// their instructions: here the second LDS load and the second staged copy.
// CHECK-LABEL: func.func @younger
// CHECK: hk.wait_lds 1 for %{{.*}} : !hk.rt<bf16, 16x64, row> {younger = [!hk.rt<bf16, 16x64, row>]}
// CHECK: hk.wait_vm 1 for %{{.*}} : !hk.staged<bf16, 64x32> {younger = [!hk.staged<bf16, 64x32>]}
func.func @younger(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc : !hk.st<bf16, 16x64, 2>
  %q = hk.lds_alloc : !hk.st<bf16, 64x32, 2>
  %x = hk.lds_load %s[%c0] : !hk.st<bf16, 16x64, 2> -> !hk.rt<bf16, 16x64, row>
  %y = hk.lds_load %s[%c0] : !hk.st<bf16, 16x64, 2> -> !hk.rt<bf16, 16x64, row>
  hk.store %x, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  hk.store %y, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  %t = hk.copy_issue %a[%c] : !hk.gl<bf16> -> !hk.staged<bf16, 64x32>
  %u = hk.copy_issue %a[%c] : !hk.gl<bf16> -> !hk.staged<bf16, 64x32>
  hk.copy_commit %t, %q[%c0] : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x32, 2>
  hk.copy_commit %u, %q[%c0] : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x32, 2>
  hk.barrier
  return
}

// -----

// The fast GEMM's pipeline: the next tile's copy is issued at the top of the iteration, the MMAs
// read LDS meanwhile, and the copy is committed at the bottom. Its loads are waited for only
// before the commit; the loop reaches a steady state with nothing in flight at the back edge.
// CHECK-LABEL: func.func @copy_pipeline
// CHECK: scf.for
// CHECK-NEXT: %[[N:.*]] = hk.copy_issue
// CHECK-NEXT: %[[A:.*]] = hk.lds_load
// CHECK-NEXT: hk.wait_lds 0 for %[[A]]
// CHECK-NEXT: hk.mma
// CHECK-NEXT: hk.wait_vm 0 for %[[N]]
// CHECK-NEXT: hk.copy_commit %[[N]]
// CHECK-NEXT: hk.wait_lds 0{{$}}
// CHECK-NEXT: hk.barrier
func.func @copy_pipeline(%a: !hk.gl<bf16, div 64>, %o: !hk.gl<f32>, %c: !hk.coord, %n: index, %acc: !hk.rt<f32, 32x32, row>)
    attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = hk.lds_alloc : !hk.st<bf16, 32x32, 2>
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc_k = %acc) -> (!hk.rt<f32, 32x32, row>) {
    %next = hk.copy_issue %a[%c] : !hk.gl<bf16, div 64> -> !hk.staged<bf16, 32x32>
    %t = hk.lds_load %s[%c0] : !hk.st<bf16, 32x32, 2> -> !hk.rt<bf16, 32x32, row>
    %d = hk.mma ABt %t, %t, %acc_k : !hk.rt<bf16, 32x32, row>, !hk.rt<bf16, 32x32, row>, !hk.rt<f32, 32x32, row>
    hk.copy_commit %next, %s[%c1] : !hk.staged<bf16, 32x32>, !hk.st<bf16, 32x32, 2>
    hk.barrier
    scf.yield %d : !hk.rt<f32, 32x32, row>
  } {hk.unroll = 2 : i64}
  hk.store %r, %o[%c] : !hk.rt<f32, 32x32, row>, !hk.gl<f32>
  return
}

// -----

// A conditional prefetch: the load the then-branch issues and yields stays in flight past the
// if (no wait inside it), and the commit that reads the if's result waits for it there.
// CHECK-LABEL: func.func @conditional_prefetch
// CHECK: scf.if
// CHECK-NEXT: hk.copy_issue
// CHECK-NOT: hk.wait_vm
// CHECK: } else {
// CHECK-NOT: hk.wait_vm
// CHECK: }
// CHECK-NEXT: hk.wait_vm 0 for
// CHECK-NEXT: hk.copy_commit
func.func @conditional_prefetch(%a: !hk.gl<bf16>, %c: !hk.coord, %p: i1) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x32, 1>
  %first = hk.copy_issue %a[%c] : !hk.gl<bf16> -> !hk.staged<bf16, 64x32>
  %t = scf.if %p -> (!hk.staged<bf16, 64x32>) {
    %n = hk.copy_issue %a[%c] : !hk.gl<bf16> -> !hk.staged<bf16, 64x32>
    scf.yield %n : !hk.staged<bf16, 64x32>
  } else {
    scf.yield %first : !hk.staged<bf16, 64x32>
  }
  hk.copy_commit %t, %s[%c0] : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x32, 1>
  hk.barrier
  return
}

// -----

// A load issued in a branch and not yielded still completes inside it.
// CHECK-LABEL: func.func @branch_load_completes
// CHECK: scf.if
// CHECK: hk.load
// CHECK-NEXT: hk.wait_vm 0 for
// CHECK-NEXT: hk.store
func.func @branch_load_completes(%a: !hk.gl<bf16>, %c: !hk.coord, %p: i1) attributes {hk.kernel} {
  scf.if %p {
    %x = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
    hk.store %x, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  }
  return
}
