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

// -----

func.func @copy_into_subtile(%a: !hk.gl<bf16>, %c: !hk.coord, %i: index) attributes {hk.kernel, hk.lds_bytes = 8192 : i64} {
  %s = hk.lds_alloc {offset = 0 : i64} : !hk.st<bf16, 64x64, 1>
  %q = hk.subtile %s[%i, %i, %i] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 32x64, 1>
  // expected-error @+1 {{a workgroup copy into a subtile is not supported; copy the whole shared tile}}
  hk.copy_to_lds %a[%c], %q[%i] : !hk.gl<bf16>, !hk.st<bf16, 32x64, 1>
  return
}
