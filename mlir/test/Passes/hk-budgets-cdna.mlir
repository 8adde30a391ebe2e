// RUN: hk-opt %s --hk-budgets="arch=gfx942" | FileCheck %s

// In wave64 the same three tiles take 3 x 64 VGPRs, within gfx942's 256 VGPRs + 256 AGPRs.
// CHECK: hk.tile_vgprs = 192 : i64
func.func @fits(%a: !hk.gl<f32>, %c: !hk.coord) attributes {hk.kernel} {
  %x = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 64x64, row>
  %y = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 64x64, row>
  %z = hk.binary add %x, %y : !hk.rt<f32, 64x64, row>, !hk.rt<f32, 64x64, row>
  %w = hk.binary add %z, %x : !hk.rt<f32, 64x64, row>, !hk.rt<f32, 64x64, row>
  %v = hk.binary add %w, %y : !hk.rt<f32, 64x64, row>, !hk.rt<f32, 64x64, row>
  hk.store %v, %a[%c] : !hk.rt<f32, 64x64, row>, !hk.gl<f32>
  return
}
