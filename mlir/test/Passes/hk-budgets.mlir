// RUN: hk-opt %s -split-input-file -verify-diagnostics --hk-budgets="arch=gfx1100"

// Three live 64x64 fp32 tiles take 3 x 128 VGPRs per lane in wave32: over gfx1100's 256.
func.func @too_many(%a: !hk.gl<f32>, %c: !hk.coord) attributes {hk.kernel} {
  // expected-note @+1 {{'!hk.rt<f32, 64x64, row>' takes 128 VGPRs}}
  %x = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 64x64, row>
  // expected-note @+1 {{'!hk.rt<f32, 64x64, row>' takes 128 VGPRs}}
  %y = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 64x64, row>
  // expected-error @+2 {{register tiles live here need 384 VGPRs per lane but the target's budget on gfx1100 is 256}}
  // expected-note @+1 {{'!hk.rt<f32, 64x64, row>' takes 128 VGPRs}}
  %z = hk.binary add %x, %y : !hk.rt<f32, 64x64, row>, !hk.rt<f32, 64x64, row>
  %w = hk.binary add %z, %x : !hk.rt<f32, 64x64, row>, !hk.rt<f32, 64x64, row>
  %v = hk.binary add %w, %y : !hk.rt<f32, 64x64, row>, !hk.rt<f32, 64x64, row>
  hk.store %v, %a[%c] : !hk.rt<f32, 64x64, row>, !hk.gl<f32>
  return
}

// -----

// A kernel's max_vgprs lowers the budget.
func.func @capped(%a: !hk.gl<f32>, %c: !hk.coord) attributes {hk.kernel, hk.max_vgprs = 64 : i64} {
  // expected-note @+1 {{takes 32 VGPRs}}
  %x = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 32x32, row>
  // expected-note @+1 {{takes 32 VGPRs}}
  %y = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 32x32, row>
  // expected-error @+2 {{register tiles live here need 96 VGPRs per lane but the kernel's max_vgprs budget on gfx1100 is 64}}
  // expected-note @+1 {{takes 32 VGPRs}}
  %z = hk.binary add %x, %y : !hk.rt<f32, 32x32, row>, !hk.rt<f32, 32x32, row>
  %w = hk.binary add %z, %x : !hk.rt<f32, 32x32, row>, !hk.rt<f32, 32x32, row>
  %v = hk.binary add %w, %y : !hk.rt<f32, 32x32, row>, !hk.rt<f32, 32x32, row>
  hk.store %v, %a[%c] : !hk.rt<f32, 32x32, row>, !hk.gl<f32>
  return
}
