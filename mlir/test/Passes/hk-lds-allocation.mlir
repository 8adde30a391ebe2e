// RUN: hk-opt %s -split-input-file -verify-diagnostics --hk-lds-allocation="arch=gfx1100" | FileCheck %s

// Offsets in program order, 16-byte aligned; the total is recorded on the kernel.
// CHECK-LABEL: func.func @placed
// CHECK-SAME: hk.lds_bytes = 16736 : i64
// CHECK: hk.lds_alloc {offset = 0 : i64} : !hk.st<bf16, 64x64, 2>
// CHECK: hk.lds_alloc {offset = 16384 : i64} : !hk.sv<bf16, 16, 1>
// CHECK: hk.lds_alloc {offset = 16416 : i64} : !hk.st<i8, 16x16, 1>
// CHECK: hk.lds_alloc {offset = 16672 : i64} : !hk.sv<f32, 16, 1>
func.func @placed() attributes {hk.kernel} {
  %a = hk.lds_alloc : !hk.st<bf16, 64x64, 2>
  %b = hk.lds_alloc : !hk.sv<bf16, 16, 1>
  %c = hk.lds_alloc : !hk.st<i8, 16x16, 1>
  %d = hk.lds_alloc : !hk.sv<f32, 16, 1>
  return
}

// -----

// 2 x 64x128 bf16 buffers (32768 bytes) + 128x128 bf16 (32768) + 16 f32 exceed gfx1100's 64 KiB.
// expected-error @+1 {{kernel @too_much needs 65600 bytes of LDS but gfx1100 has 65536 per workgroup; use fewer buffers or smaller shared tiles}}
func.func @too_much() attributes {hk.kernel} {
  // expected-note @+1 {{allocation of '!hk.st<bf16, 64x128, 2>': 32768 bytes at offset 0}}
  %a = hk.lds_alloc : !hk.st<bf16, 64x128, 2>
  // expected-note @+1 {{allocation of '!hk.st<bf16, 128x128, 1>': 32768 bytes at offset 32768}}
  %b = hk.lds_alloc : !hk.st<bf16, 128x128, 1>
  // expected-note @+1 {{allocation of '!hk.sv<f32, 16, 1>': 64 bytes at offset 65536}}
  %c = hk.lds_alloc : !hk.sv<f32, 16, 1>
  return
}
