// RUN: hk-opt %s -split-input-file --hk-scalar-reads | FileCheck %s

// A table the kernel only reads goes through the scalar cache; one it also writes does not.
// CHECK-LABEL: func.func @tables
// CHECK-SAME: hk.scalar_reads = array<i64: 0>
// CHECK-SAME: hk.writes = array<i64: 1, 2>
// CHECK: hk.load_scalar %arg0[{{.*}}] {scalar_cache} : !hk.gl<i32> -> i32
// CHECK: hk.load_scalar %arg1[{{.*}}] : !hk.gl<i32> -> i32
// CHECK-NOT: scalar_cache
func.func @tables(%t: !hk.gl<i32>, %counts: !hk.gl<i32>, %o: !hk.gl<f32>) attributes {hk.kernel, hk.warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.load_scalar %t[%c0, %c0, %c0, %c0] : !hk.gl<i32> -> i32
  %n = hk.load_scalar %counts[%c0, %c0, %c0, %c0] : !hk.gl<i32> -> i32
  %one = arith.constant 1 : i32
  hk.atomic_add %one, %counts[%c0, %c0, %c0, %c0] : i32, !hk.gl<i32>
  %f = arith.constant 1.0 : f32
  hk.store_scalar %f, %o[%c0, %c0, %c0, %c0] : f32, !hk.gl<f32>
  return
}

// -----

// Every way of writing a tensor counts: a tile store, a scatter, a copy out of LDS.
// CHECK-LABEL: func.func @writers
// CHECK-SAME: hk.scalar_reads = array<i64: 3>
// CHECK-SAME: hk.writes = array<i64: 0, 1, 2>
// CHECK: hk.load_scalar %arg0[{{.*}}] : !hk.gl<f32> -> f32
// CHECK: hk.load_scalar %arg1[{{.*}}] : !hk.gl<bf16> -> bf16
// CHECK: hk.load_scalar %arg2[{{.*}}] : !hk.gl<bf16> -> bf16
// CHECK: hk.load_scalar %arg3[{{.*}}] {scalar_cache} : !hk.gl<i32> -> i32
func.func @writers(%a: !hk.gl<f32>, %b: !hk.gl<bf16>, %c: !hk.gl<bf16>, %ids: !hk.gl<i32>,
                   %rows: !hk.rv<i32, 16, col>) attributes {hk.kernel, hk.warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %x = hk.load_scalar %a[%c0, %c0, %c0, %c0] : !hk.gl<f32> -> f32
  %y = hk.load_scalar %b[%c0, %c0, %c0, %c0] : !hk.gl<bf16> -> bf16
  %z = hk.load_scalar %c[%c0, %c0, %c0, %c0] : !hk.gl<bf16> -> bf16
  %i = hk.load_scalar %ids[%c0, %c0, %c0, %c0] : !hk.gl<i32> -> i32
  %idx = hk.tile_coord %c0, %c0, %c0, %c0
  %t = hk.load %a[%idx] : !hk.gl<f32> -> !hk.rt<f32, 16x64, row>
  hk.store %t, %a[%idx] : !hk.rt<f32, 16x64, row>, !hk.gl<f32>
  %u = hk.load %b[%idx] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  hk.scatter %u, %b[%idx] rows %rows : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>, !hk.rv<i32, 16, col>
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 2>
  hk.copy_from_lds %s[%c0], %c[%idx] : !hk.st<bf16, 64x64, 2>, !hk.gl<bf16>
  return
}

// -----

// A kernel that writes nothing reads every table through the scalar cache; hk.writes is empty.
// CHECK-LABEL: func.func @reads_only
// CHECK-SAME: hk.scalar_reads = array<i64: 0, 1>
// CHECK-SAME: hk.writes = array<i64>
// CHECK-COUNT-2: {scalar_cache}
func.func @reads_only(%a: !hk.gl<i32>, %b: !hk.gl<i32>) attributes {hk.kernel, hk.warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %x = hk.load_scalar %a[%c0, %c0, %c0, %c0] : !hk.gl<i32> -> i32
  %y = hk.load_scalar %b[%c0, %c0, %c0, %c0] : !hk.gl<i32> -> i32
  return
}
