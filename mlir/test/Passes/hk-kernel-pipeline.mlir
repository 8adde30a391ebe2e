// RUN: hk-opt %s --hk-kernel-pipeline="arch=gfx1100" | FileCheck %s
// RUN: hk-opt %s --hk-kernel-pipeline="arch=gfx1201" | FileCheck %s
// RUN: hk-opt %s --hk-kernel-pipeline="arch=gfx942" | FileCheck %s
// RUN: hk-opt %s --hk-kernel-pipeline="arch=gfx950" | FileCheck %s

// A GEMM step through LDS: every pass leaves its mark. Roles, offsets, waits, the budget.
// CHECK-LABEL: func.func @gemm_step
// CHECK-SAME: hk.lds_bytes = 4096
// CHECK-SAME: hk.tile_vgprs =
// CHECK: hk.lds_alloc {offset = 0 : i64} : !hk.st<bf16, 32x32, 1>
// CHECK: hk.lds_alloc {offset = 2048 : i64} : !hk.st<bf16, 32x32, 1>
// CHECK: hk.barrier
// CHECK: %[[A:.*]] = hk.lds_load {{.*}} -> !hk.rt<bf16, 32x32, row, a>
// CHECK: %[[B:.*]] = hk.lds_load {{.*}} -> !hk.rt<bf16, 32x32, row, b>
// CHECK: hk.wait_lds 0 for %[[A]], %[[B]]
// CHECK-NEXT: hk.mma ABt %[[A]], %[[B]]
func.func @gemm_step(%a: !hk.gl<bf16>, %b: !hk.gl<bf16>, %o: !hk.gl<f32>) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %x = hk.block_idx x
  %idx = hk.tile_coord %c0, %c0, %x, %c0
  %sa = hk.lds_alloc : !hk.st<bf16, 32x32, 1>
  %sb = hk.lds_alloc : !hk.st<bf16, 32x32, 1>
  hk.copy_to_lds %a[%idx], %sa[%c0] : !hk.gl<bf16>, !hk.st<bf16, 32x32, 1>
  hk.copy_to_lds %b[%idx], %sb[%c0] : !hk.gl<bf16>, !hk.st<bf16, 32x32, 1>
  hk.barrier
  %ta = hk.lds_load %sa[%c0] : !hk.st<bf16, 32x32, 1> -> !hk.rt<bf16, 32x32, row>
  %tb = hk.lds_load %sb[%c0] : !hk.st<bf16, 32x32, 1> -> !hk.rt<bf16, 32x32, row>
  %acc = hk.fill(0.0) : !hk.rt<f32, 32x32, row>
  %d = hk.mma ABt %ta, %tb, %acc : !hk.rt<bf16, 32x32, row>, !hk.rt<bf16, 32x32, row>, !hk.rt<f32, 32x32, row>
  hk.store %d, %o[%idx] : !hk.rt<f32, 32x32, row>, !hk.gl<f32>
  return
}
