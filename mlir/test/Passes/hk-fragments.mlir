// RUN: hk-opt %s -split-input-file -verify-diagnostics --hk-fragments="arch=gfx1100" | FileCheck %s

// Roles follow the accumulator through elementwise ops and loop-carried values.
// CHECK-LABEL: func.func @roles
// CHECK: hk.fill(0.000000e+00) : !hk.rt<f32, 16x16, row, c>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (!hk.rt<f32, 16x16, row, c>)
// CHECK: hk.mma ABt %{{.*}}, %{{.*}}, %{{.*}} : !hk.rt<bf16, 16x16, row, a>, !hk.rt<bf16, 16x16, row, b>, !hk.rt<f32, 16x16, row, c>
// CHECK: hk.binary mul %{{.*}}, %{{.*}} : !hk.rt<f32, 16x16, row, c>, f32
func.func @roles(%a: !hk.gl<bf16>, %o: !hk.gl<f32>, %c: !hk.coord, %n: index, %x: f32) attributes {hk.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc0 = hk.fill(0.0) : !hk.rt<f32, 16x16, row>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%acc1 = %acc0) -> (!hk.rt<f32, 16x16, row>) {
    %ta = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x16, row>
    %tb = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x16, row>
    %d = hk.mma ABt %ta, %tb, %acc1 : !hk.rt<bf16, 16x16, row>, !hk.rt<bf16, 16x16, row>, !hk.rt<f32, 16x16, row>
    scf.yield %d : !hk.rt<f32, 16x16, row>
  }
  %scaled = hk.binary mul %acc, %x : !hk.rt<f32, 16x16, row>, f32
  hk.store %scaled, %o[%c] : !hk.rt<f32, 16x16, row>, !hk.gl<f32>
  return
}

// -----

func.func @two_roles(%t: !hk.rt<bf16, 16x16, row>, %c: !hk.rt<f32, 16x16, row>) attributes {hk.kernel} {
  // expected-note @+1 {{the other use}}
  %0 = hk.mma ABt %t, %t, %c : !hk.rt<bf16, 16x16, row>, !hk.rt<bf16, 16x16, row>, !hk.rt<f32, 16x16, row>
  return
}
// expected-error @-3 {{register tile is used as operand b here and as operand a of another mma; the two fragments need different register layouts, so give one of the uses its own copy (hk.cast)}}

// -----

func.func @no_fp8_on_rdna3(%a: !hk.rt<f8E4M3FN, 16x16, row>, %c: !hk.rt<f32, 16x16, row>) attributes {hk.kernel} {
  // expected-error @+1 {{gfx1100 has no fp8 matrix instruction; use i8 (v_wmma_i32_16x16x16_iu8) or convert to bf16}}
  %0 = hk.mma ABt %a, %a, %c : !hk.rt<f8E4M3FN, 16x16, row>, !hk.rt<f8E4M3FN, 16x16, row>, !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @slow_col_layout(%s: !hk.st<bf16, 32x16, 1>, %i: index, %a: !hk.rt<bf16, 16x32, row>, %c: !hk.rt<f32, 16x16, row>) attributes {hk.kernel} {
  // expected-warning @+1 {{16-bit register tile in col layout is read from LDS with 16-bit loads, eight times the instructions of a row-layout tile's 128-bit loads; store the operand transposed in LDS, load it in row layout and use the transposed mma form (ABt instead of AB)}}
  %b = hk.lds_load %s[%i] : !hk.st<bf16, 32x16, 1> -> !hk.rt<bf16, 32x16, col>
  %0 = hk.mma AB %a, %b, %c : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 32x16, col>, !hk.rt<f32, 16x16, row>
  return
}
