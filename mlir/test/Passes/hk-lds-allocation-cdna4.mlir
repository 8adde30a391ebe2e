// RUN: hk-opt %s --hk-lds-allocation="arch=gfx950" | FileCheck %s

// gfx950 has 160 KiB of LDS per workgroup: what gfx1100 refuses fits here.
// CHECK: hk.lds_bytes = 65600 : i64
func.func @fits() attributes {hk.kernel} {
  %a = hk.lds_alloc : !hk.st<bf16, 64x128, 2>
  %b = hk.lds_alloc : !hk.st<bf16, 128x128, 1>
  %c = hk.lds_alloc : !hk.sv<f32, 16, 1>
  return
}
