// RUN: hk-opt %s -verify-diagnostics --hk-fragments="arch=gfx950 strict=true" | FileCheck %s

// gfx950 reads a column-layout 16-bit tile from LDS with its transposing read
// (ds_read_b64_tr_b16, four elements per lane): no warning, even under strict=true.
// CHECK-LABEL: func.func @col_layout_read
// CHECK: hk.lds_load
func.func @col_layout_read(%s: !hk.st<bf16, 32x16, 1>, %i: index, %a: !hk.rt<bf16, 16x32, row>, %c: !hk.rt<f32, 16x16, row>) attributes {hk.kernel} {
  %b = hk.lds_load %s[%i] : !hk.st<bf16, 32x16, 1> -> !hk.rt<bf16, 32x16, col>
  %0 = hk.mma AB %a, %b, %c : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 32x16, col>, !hk.rt<f32, 16x16, row>
  return
}
