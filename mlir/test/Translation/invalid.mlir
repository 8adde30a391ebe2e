// RUN: hk-translate --hk-to-cpp %s -split-input-file -verify-diagnostics

func.func @no_offset() attributes {hk.kernel} {
  // expected-error @+1 {{LDS allocation has no offset; run hk-lds-allocation (or hk-kernel-pipeline) before translating}}
  %s = hk.lds_alloc : !hk.st<bf16, 16x16, 1>
  return
}

// -----

// expected-error @+1 {{no kernel to translate: mark a func.func with the hk.kernel attribute}}
module {
  func.func @helper() {
    return
  }
}

// -----

func.func @tile_param(%t: !hk.rt<f32, 16x16, row>) attributes {hk.kernel} {
  return
}
// expected-error @-3 {{kernel parameter 0 has type '!hk.rt<f32, 16x16, row>'; kernels take global views and scalars only}}

// -----

func.func @unknown_op(%x: f32) attributes {hk.kernel} {
  // expected-error @+1 {{hk-to-cpp cannot translate 'arith.remf'}}
  %y = arith.remf %x, %x : f32
  return
}

// -----

// expected-error @+1 {{unknown target architecture 'gfx803'; use one of gfx1100, gfx1201, gfx942, gfx950}}
module attributes {hk.arch = "gfx803"} {
  func.func @k() attributes {hk.kernel} {
    return
  }
}
