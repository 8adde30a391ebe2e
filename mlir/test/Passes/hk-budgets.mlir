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

// -----

// Above the budget less 32 VGPRs: the tiles fit, but what the compiled kernel keeps besides them
// may not. A warning at the kernel, with a note at the peak: 128 + 64 + 32 + 16 = 240.
// expected-warning @+1 {{register tiles live at the peak need 240 of the 256 VGPRs per lane the target's budget on gfx1100 allows; the compiled kernel also keeps addresses, indices and temporaries in VGPRs, so it may spill, which the resource gate refuses}}
func.func @near(%a: !hk.gl<f32>, %c: !hk.coord) attributes {hk.kernel} {
  %x = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 64x64, row>
  %y = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 32x64, row>
  %z = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 16x64, row>
  // expected-note @+1 {{the peak}}
  %w = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 16x32, row>
  hk.store %x, %a[%c] : !hk.rt<f32, 64x64, row>, !hk.gl<f32>
  hk.store %y, %a[%c] : !hk.rt<f32, 32x64, row>, !hk.gl<f32>
  hk.store %z, %a[%c] : !hk.rt<f32, 16x64, row>, !hk.gl<f32>
  hk.store %w, %a[%c] : !hk.rt<f32, 16x32, row>, !hk.gl<f32>
  return
}

// -----

// At the edge of the headroom (224 of 256), no warning.
func.func @not_near(%a: !hk.gl<f32>, %c: !hk.coord) attributes {hk.kernel} {
  %x = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 64x64, row>
  %y = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 32x64, row>
  %z = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 16x64, row>
  hk.store %x, %a[%c] : !hk.rt<f32, 64x64, row>, !hk.gl<f32>
  hk.store %y, %a[%c] : !hk.rt<f32, 32x64, row>, !hk.gl<f32>
  hk.store %z, %a[%c] : !hk.rt<f32, 16x64, row>, !hk.gl<f32>
  return
}

// -----

// The headroom counts from a kernel's max_vgprs too: 72 is above 96 less 32.
// expected-warning @+1 {{need 72 of the 96 VGPRs per lane the kernel's max_vgprs budget on gfx1100 allows}}
func.func @near_the_cap(%a: !hk.gl<f32>, %c: !hk.coord) attributes {hk.kernel, hk.max_vgprs = 96 : i64} {
  %x = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 32x64, row>
  // expected-note @+1 {{the peak}}
  %y = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 16x16, row>
  hk.store %x, %a[%c] : !hk.rt<f32, 32x64, row>, !hk.gl<f32>
  hk.store %y, %a[%c] : !hk.rt<f32, 16x16, row>, !hk.gl<f32>
  return
}
