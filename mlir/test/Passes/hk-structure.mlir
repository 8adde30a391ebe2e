// RUN: hk-opt %s -split-input-file -verify-diagnostics --hk-structure="arch=gfx1100" | FileCheck %s
// RUN: hk-opt %s -split-input-file -verify-diagnostics --hk-structure="arch=gfx942" | FileCheck %s

// Uniform control flow around workgroup-wide operations is fine.
// CHECK-LABEL: func.func @uniform
func.func @uniform(%a: !hk.gl<bf16>, %c: !hk.coord, %n: index) attributes {hk.kernel, hk.warps = 4 : i32} {
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 1>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = hk.block_idx x
  %first = arith.cmpi eq, %x, %c0 : index
  scf.if %first {
    hk.copy_to_lds %a[%c], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 1>
    hk.barrier
  }
  scf.for %i = %c0 to %n step %c1 {
    hk.barrier
  }
  return
}

// -----

func.func @barrier_under_warp_branch() attributes {hk.kernel, hk.warps = 4 : i32} {
  %w = hk.warp_id
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %w, %c0 : index
  // expected-note @+1 {{the divergent control flow}}
  scf.if %first {
    // expected-error @+1 {{'hk.barrier' is workgroup-wide but sits under control flow that depends on the wave's id (hk.warp_id or hk.lane_id); move it out of the branch so that every wave reaches it}}
    hk.barrier
  }
  return
}

// -----

// Divergence flows through arithmetic and loop-carried values into a loop bound.
func.func @copy_in_lane_bounded_loop(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel} {
  %s = hk.lds_alloc : !hk.st<bf16, 16x16, 1>
  %l = hk.lane_id
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.addi %l, %c1 : index
  // expected-note @+1 {{the divergent control flow}}
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{'hk.copy_to_lds' is workgroup-wide}}
    hk.copy_to_lds %a[%c], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 16x16, 1>
  }
  return
}

// -----

func.func @alloc_in_loop(%n: index) attributes {hk.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note @+1 {{the enclosing loop}}
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{LDS is allocated inside a loop; allocate it once, before the loop}}
    %s = hk.lds_alloc : !hk.st<bf16, 16x16, 1>
  }
  return
}

// -----

// gfx1100 waves have 32 lanes (33 warps: 1056 threads); gfx942 waves 64 (17 warps: 1088).
// expected-error @+1 {{kernel @too_wide has 33 warps of}}
func.func @too_wide() attributes {hk.kernel, hk.warps = 33 : i32} {
  return
}
