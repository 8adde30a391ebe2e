// RUN: hk-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the hk dialect's types, operations and kernel attributes.

// expected-error @+1 {{register tile shape must be a positive multiple of 16 in each dimension but got 16x10}}
func.func private @f(!hk.rt<bf16, 16x10, row>)

// -----

// expected-error @+1 {{register tile element type must be bf16, f16, f32, i32, i8, f8E4M3FN, f8E5M2, f8E4M3FNUZ or f8E5M2FNUZ (or i1 for a mask) but got 'f64'}}
func.func private @f(!hk.rt<f64, 16x16, row>)

// -----

// expected-error @+1 {{expected a layout (row or col) but got 'diag'}}
func.func private @f(!hk.rt<f32, 16x16, diag>)

// -----

// expected-error @+1 {{expected a fragment role (a, b or c) but got 'd'}}
func.func private @f(!hk.rt<f32, 16x16, row, d>)

// -----

// expected-error @+1 {{expected a shape ROWSxCOLS but got 1 dimensions}}
func.func private @f(!hk.rt<f32, 16, row>)

// -----

// expected-error @+1 {{register vector length must be a positive multiple of 16 but got 12}}
func.func private @f(!hk.rv<f32, 12, col>)

// -----

// expected-error @+1 {{register vector element type must be bf16, f16, f32, i32, i8, f8E4M3FN, f8E5M2, f8E4M3FNUZ or f8E5M2FNUZ but got 'i1'}}
func.func private @f(!hk.rv<i1, 16, col>)

// -----

// expected-error @+1 {{shared tile must have at least 1 buffer but got 0}}
func.func private @f(!hk.st<bf16, 64x64, 0>)

// -----

// expected-error @+1 {{shared vector length must be a positive multiple of 16 but got 8}}
func.func private @f(!hk.sv<f32, 8, 1>)

// -----

// expected-error @+1 {{global view element type must be bf16, f16, f32, i32, i8, f8E4M3FN, f8E5M2, f8E4M3FNUZ or f8E5M2FNUZ but got 'i1'}}
func.func private @f(!hk.gl<i1>)

// -----

func.func @f(%a: !hk.gl<f32>, %c: !hk.coord) {
  // expected-error @+1 {{'hk.load' op expected result element type 'f32' but got 'bf16'}}
  %t = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<bf16, 16x64, row>
  return
}

// -----

func.func @f(%a: !hk.gl<bf16>, %c: !hk.coord, %t: !hk.rt<f32, 16x64, row>) {
  // expected-error @+1 {{'hk.store' op expected stored value element type 'bf16' but got 'f32'}}
  hk.store %t, %a[%c] : !hk.rt<f32, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

func.func @f(%a: !hk.gl<bf16>, %c: !hk.coord, %ids: !hk.rv<f32, 16, col>) {
  // expected-error @+1 {{'hk.gather' op expected row indices of element type i32 but got 'f32'}}
  %t = hk.gather %a[%c] rows %ids : !hk.gl<bf16>, !hk.rv<f32, 16, col> -> !hk.rt<bf16, 16x64, row>
  return
}

// -----

func.func @f(%a: !hk.gl<bf16>, %c: !hk.coord, %ids: !hk.rv<i32, 64, row>) {
  // expected-error @+1 {{'hk.gather' op expected row indices in a col vector (one per row) but got a row vector}}
  %t = hk.gather %a[%c] rows %ids : !hk.gl<bf16>, !hk.rv<i32, 64, row> -> !hk.rt<bf16, 16x64, row>
  return
}

// -----

func.func @f(%a: !hk.gl<bf16>, %c: !hk.coord, %ids: !hk.rv<i32, 32, col>, %t: !hk.rt<bf16, 16x64, row>) {
  // expected-error @+1 {{'hk.scatter' op expected 16 row indices but got 32}}
  hk.scatter %t, %a[%c] rows %ids : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>, !hk.rv<i32, 32, col>
  return
}

// -----

func.func @f(%a: !hk.gl<f32>, %i: index) {
  // expected-error @+1 {{'hk.load_scalar' op expected 4 indices (batch, depth, row, col) but got 3}}
  %v = hk.load_scalar %a[%i, %i, %i] : !hk.gl<f32> -> f32
  return
}

// -----

func.func @f(%a: !hk.gl<f32>, %i: index) {
  // expected-error @+1 {{'hk.load_scalar' op expected result element type 'f32' but got 'f16'}}
  %v = hk.load_scalar %a[%i, %i, %i, %i] : !hk.gl<f32> -> f16
  return
}

// -----

func.func @f(%a: !hk.gl<f32>, %i: index, %v: i32) {
  // expected-error @+1 {{'hk.store_scalar' op expected stored value element type 'f32' but got 'i32'}}
  hk.store_scalar %v, %a[%i, %i, %i, %i] : i32, !hk.gl<f32>
  return
}

// -----

func.func @f(%a: !hk.gl<bf16>, %i: index, %v: bf16) {
  // expected-error @+1 {{'hk.atomic_add' op expected a global view of f32 or i32 for an atomic add but got 'bf16'}}
  hk.atomic_add %v, %a[%i, %i, %i, %i] : bf16, !hk.gl<bf16>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'hk.lds_alloc' op expected a non-negative offset but got -16}}
  %s = hk.lds_alloc {offset = -16 : i64} : !hk.st<bf16, 64x64, 1>
  return
}

// -----

func.func @f(%s: !hk.st<bf16, 64x64, 2>, %i: index) {
  // expected-error @+1 {{'hk.subtile' op expected a single-buffer result but got 2 buffers}}
  %q = hk.subtile %s[%i, %i, %i] : !hk.st<bf16, 64x64, 2> -> !hk.st<bf16, 16x64, 2>
  return
}

// -----

func.func @f(%s: !hk.st<bf16, 64x64, 2>, %i: index) {
  // expected-error @+1 {{'hk.subtile' op expected a subtile shape dividing 64x64 but got 48x64}}
  %q = hk.subtile %s[%i, %i, %i] : !hk.st<bf16, 64x64, 2> -> !hk.st<bf16, 48x64, 1>
  return
}

// -----

func.func @f(%s: !hk.st<bf16, 64x64, 1>, %i: index) {
  // expected-error @+1 {{'hk.lds_load' op expected result shape 64x64 but got 16x64}}
  %t = hk.lds_load %s[%i] : !hk.st<bf16, 64x64, 1> -> !hk.rt<bf16, 16x64, row>
  return
}

// -----

func.func @f(%s: !hk.sv<f32, 64, 1>, %i: index) {
  // expected-error @+1 {{'hk.lds_load' op expected result to be a vector like '!hk.sv<f32, 64, 1>' but got '!hk.rt<f32, 64x64, row>'}}
  %t = hk.lds_load %s[%i] : !hk.sv<f32, 64, 1> -> !hk.rt<f32, 64x64, row>
  return
}

// -----

func.func @f(%s: !hk.st<bf16, 64x64, 1>, %i: index, %t: !hk.rt<f16, 64x64, row>) {
  // expected-error @+1 {{'hk.lds_store' op expected stored value element type 'bf16' but got 'f16'}}
  hk.lds_store %t, %s[%i] : !hk.rt<f16, 64x64, row>, !hk.st<bf16, 64x64, 1>
  return
}

// -----

func.func @f(%a: !hk.gl<f16>, %c: !hk.coord, %s: !hk.st<bf16, 64x64, 1>, %i: index) {
  // expected-error @+1 {{'hk.copy_to_lds' op expected shared tile element type 'f16' but got 'bf16'}}
  hk.copy_to_lds %a[%c], %s[%i] : !hk.gl<f16>, !hk.st<bf16, 64x64, 1>
  return
}

// -----

// expected-error @+1 {{global view divisor must be a positive power of two but got 12}}
func.func private @f(!hk.gl<bf16, div 12>)

// -----

// expected-error @+1 {{staged tile shape must be a positive multiple of 16 in each dimension but got 32x24}}
func.func private @f(!hk.staged<bf16, 32x24>)

// -----

func.func @f(%a: !hk.gl<f16>, %c: !hk.coord) {
  // expected-error @+1 {{'hk.copy_issue' op expected staged tile element type 'f16' but got 'bf16'}}
  %t = hk.copy_issue %a[%c] : !hk.gl<f16> -> !hk.staged<bf16, 64x64>
  return
}

// -----

func.func @f(%t: !hk.staged<bf16, 64x32>, %s: !hk.st<bf16, 64x64, 2>, %i: index) {
  // expected-error @+1 {{'hk.copy_commit' op expected staged tile shape 64x64 but got 64x32}}
  hk.copy_commit %t, %s[%i] : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x64, 2>
  return
}

// -----

func.func @f(%t: !hk.staged<bf16, 16x64>, %i: index) {
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 1>
  %q = hk.subtile %s[%i, %i, %i] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 16x64, 1>
  // expected-error @+1 {{'hk.copy_commit' op expected a shared tile from hk.lds_alloc but got a subtile; commit into the whole shared tile}}
  hk.copy_commit %t, %q[%i] : !hk.staged<bf16, 16x64>, !hk.st<bf16, 16x64, 1>
  return
}

// -----

func.func @f(%t: !hk.staged<bf16, 64x32>, %s: !hk.st<bf16, 64x32, 2>, %i: index) {
  // expected-error @+1 {{'hk.copy_commit' op expected a staged tile of shape 32x64 to commit transposed but got 64x32}}
  hk.copy_commit %t, %s[%i] transpose : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x32, 2>
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'hk.unroll' must be a positive integer but got 0 : i64}}
  scf.for %k = %c0 to %n step %c1 {
  } {hk.unroll = 0 : i64}
  return
}

// -----

// expected-error @+1 {{'hk.unroll' is only valid on an scf.for}}
func.func @f() attributes {hk.unroll = 2 : i64} {
  return
}

// -----

func.func @f(%a: !hk.gl<f16>, %c: !hk.coord, %s: !hk.st<bf16, 64x64, 1>, %i: index) {
  // expected-error @+1 {{'hk.copy_from_lds' op expected global view element type 'bf16' but got 'f16'}}
  hk.copy_from_lds %s[%i], %a[%c] : !hk.st<bf16, 64x64, 1>, !hk.gl<f16>
  return
}

// -----

func.func @f(%a: !hk.rt<bf16, 16x32, row>, %b: !hk.rt<bf16, 16x16, col>, %c: !hk.rt<f32, 16x16, row>) {
  // expected-error @+1 {{'hk.mma' op expected the reduction dimensions of a and b to agree for AB but got 32 and 16}}
  %d = hk.mma AB %a, %b, %c : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 16x16, col>, !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%a: !hk.rt<bf16, 16x32, row>, %b: !hk.rt<bf16, 32x32, col>, %c: !hk.rt<f32, 16x16, row>) {
  // expected-error @+1 {{'hk.mma' op expected an accumulator of shape 16x32 for AB but got 16x16}}
  %d = hk.mma AB %a, %b, %c : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 32x32, col>, !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%a: !hk.rt<bf16, 16x32, row>, %b: !hk.rt<f16, 32x16, col>, %c: !hk.rt<f32, 16x16, row>) {
  // expected-error @+1 {{'hk.mma' op expected a and b of the same element type but got 'bf16' and 'f16'}}
  %d = hk.mma AB %a, %b, %c : !hk.rt<bf16, 16x32, row>, !hk.rt<f16, 32x16, col>, !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%a: !hk.rt<f32, 16x32, row>, %b: !hk.rt<f32, 32x16, col>, %c: !hk.rt<f32, 16x16, row>) {
  // expected-error @+1 {{'hk.mma' op expected 16-bit or 8-bit operands (bf16, f16, f8, i8) but got 'f32'}}
  %d = hk.mma AB %a, %b, %c : !hk.rt<f32, 16x32, row>, !hk.rt<f32, 32x16, col>, !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%a: !hk.rt<bf16, 16x32, row>, %b: !hk.rt<bf16, 32x16, col>, %c: !hk.rt<i32, 16x16, row>) {
  // expected-error @+1 {{'hk.mma' op expected an f32 accumulator for 'bf16' operands but got 'i32'}}
  %d = hk.mma AB %a, %b, %c : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 32x16, col>, !hk.rt<i32, 16x16, row>
  return
}

// -----

func.func @f(%a: !hk.rt<bf16, 16x32, row>, %b: !hk.rt<bf16, 32x16, row>, %c: !hk.rt<f32, 16x16, row>) {
  // expected-error @+1 {{'hk.mma' op operand b of mma AB must be in col layout but is row}}
  %d = hk.mma AB %a, %b, %c : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 32x16, row>, !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%a: !hk.rt<bf16, 32x16, row>, %b: !hk.rt<bf16, 32x16, col>, %c: !hk.rt<f32, 16x16, row>) {
  // expected-error @+1 {{'hk.mma' op operand a of mma AtB must be in col layout but is row}}
  %d = hk.mma AtB %a, %b, %c : !hk.rt<bf16, 32x16, row>, !hk.rt<bf16, 32x16, col>, !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%a: !hk.rt<bf16, 16x32, row>, %b: !hk.rt<bf16, 32x16, col>, %c: !hk.rt<f32, 16x16, col>) {
  // expected-error @+1 {{'hk.mma' op expected the accumulator in row layout but got col}}
  %d = hk.mma AB %a, %b, %c : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 32x16, col>, !hk.rt<f32, 16x16, col>
  return
}

// -----

func.func @f(%t: !hk.rt<i32, 16x16, row>) {
  // expected-error @+1 {{'hk.unary' op expected a floating-point operand for exp but got 'i32'}}
  %e = hk.unary exp %t : !hk.rt<i32, 16x16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<i1, 16x16, row>) {
  // expected-error @+1 {{'hk.unary' op neg is not defined on masks}}
  %e = hk.unary neg %t : !hk.rt<i1, 16x16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x16, row>, %u: !hk.rt<f32, 16x32, row>) {
  // expected-error @+1 {{'hk.binary' op expected rhs shape 16x16 but got 16x32}}
  %e = hk.binary add %t, %u : !hk.rt<f32, 16x16, row>, !hk.rt<f32, 16x32, row>
  return
}

// -----

func.func @f(%t: !hk.rt<i32, 16x16, row>, %x: f32) {
  // expected-error @+1 {{'hk.binary' op expected a integer scalar for elements of type 'i32' but got 'f32'}}
  %e = hk.binary add %t, %x : !hk.rt<i32, 16x16, row>, f32
  return
}

// -----

func.func @f(%t: !hk.rt<i32, 16x16, row>, %u: !hk.rt<i32, 16x16, row>) {
  // expected-error @+1 {{'hk.binary' op expected a floating-point operand for pow but got 'i32'}}
  %e = hk.binary pow %t, %u : !hk.rt<i32, 16x16, row>, !hk.rt<i32, 16x16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x16, row>, %v: !hk.rv<f32, 16, col>) {
  // expected-error @+1 {{'hk.broadcast_binary' op pow is not a row or column operation}}
  %e = hk.broadcast_binary pow %t, %v : !hk.rt<f32, 16x16, row>, !hk.rv<f32, 16, col>
  return
}

// -----

func.func @f(%t: !hk.rt<i1, 16x16, row>, %u: !hk.rt<i1, 16x16, row>) {
  // expected-error @+1 {{'hk.binary' op arithmetic is not defined on masks}}
  %e = hk.binary add %t, %u : !hk.rt<i1, 16x16, row>, !hk.rt<i1, 16x16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x16, row>, %x: f32) {
  // expected-error @+1 {{'hk.cmp' op expected an i1 mask result but got element type 'f32'}}
  %m = hk.cmp gt %t, %x : !hk.rt<f32, 16x16, row>, f32 -> !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x16, row>, %x: f32) {
  // expected-error @+1 {{'hk.cmp' op expected a mask of shape 16x16 but got 16x32}}
  %m = hk.cmp gt %t, %x : !hk.rt<f32, 16x16, row>, f32 -> !hk.rt<i1, 16x32, row>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x16, row>, %v: !hk.rv<f32, 16, col>) {
  // expected-error @+1 {{'hk.cmp' op expected a tile or a scalar rhs but got a vector}}
  %m = hk.cmp gt %t, %v : !hk.rt<f32, 16x16, row>, !hk.rv<f32, 16, col> -> !hk.rt<i1, 16x16, row>
  return
}

// -----

func.func @f(%m: !hk.rt<f32, 16x16, row>, %t: !hk.rt<f32, 16x16, row>) {
  // expected-error @+1 {{'hk.select' op expected an i1 mask but got element type 'f32'}}
  %r = hk.select %m, %t, %t : !hk.rt<f32, 16x16, row>, !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<bf16, 16x16, row>, %x: bf16) {
  // expected-error @+1 {{'hk.cmp' op cannot compare 'bf16' tiles: a mask is laid out as a 32-bit tile; compare f32 or i32 copies (hk.cast)}}
  %m = hk.cmp gt %t, %x : !hk.rt<bf16, 16x16, row>, bf16 -> !hk.rt<i1, 16x16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<i8, 16x16, row>, %x: i8) {
  // expected-error @+1 {{'hk.cmp' op cannot compare 'i8' tiles: a mask is laid out as a 32-bit tile; compare f32 or i32 copies (hk.cast)}}
  %m = hk.cmp gt %t, %x : !hk.rt<i8, 16x16, row>, i8 -> !hk.rt<i1, 16x16, row>
  return
}

// -----

func.func @f(%m: !hk.rt<i1, 16x16, row>, %t: !hk.rt<f16, 16x16, col>) {
  // expected-error @+1 {{'hk.select' op cannot select between 'f16' tiles: a mask is laid out as a 32-bit tile; select between f32 or i32 copies (hk.cast)}}
  %r = hk.select %m, %t, %t : !hk.rt<i1, 16x16, row>, !hk.rt<f16, 16x16, col>
  return
}

// -----

func.func @f(%m: !hk.rt<i1, 16x16, row>, %t: !hk.rt<f8E4M3FN, 16x16, row>) {
  // expected-error @+1 {{'hk.select' op cannot select between 'f8E4M3FN' tiles: a mask is laid out as a 32-bit tile; select between f32 or i32 copies (hk.cast)}}
  %r = hk.select %m, %t, %t : !hk.rt<i1, 16x16, row>, !hk.rt<f8E4M3FN, 16x16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x64, row>, %v: !hk.rv<f32, 64, col>) {
  // expected-error @+1 {{'hk.broadcast_binary' op expected a col vector of length 16 for a tile of shape 16x64 but got length 64}}
  %r = hk.broadcast_binary sub %t, %v : !hk.rt<f32, 16x64, row>, !hk.rv<f32, 64, col>
  return
}

// -----

func.func @f(%v: !hk.rv<f32, 16, row>) {
  // expected-error @+1 {{'hk.broadcast' op expected a row vector of length 64 for a result of shape 16x64 but got length 16}}
  %r = hk.broadcast %v : !hk.rv<f32, 16, row> -> !hk.rt<f32, 16x64, row>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'hk.fill' op expected fill value element type 'f32' but got 'f16'}}
  %r = "hk.fill"() {value = 1.0 : f16} : () -> !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x16, row>, %i: index) {
  // expected-error @+1 {{'hk.mask' op expected mask value element type 'f32' but got 'i32'}}
  %r = hk.mask causal %t, %i, %i {value = 0 : i32} : !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'hk.iota' op expected an i32 result but got element type 'f32'}}
  %r = hk.iota row : !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x64, row>) {
  // expected-error @+1 {{'hk.reduce' op expected a row vector of length 64 for reducing a tile of shape 16x64 but got length 16}}
  %r = hk.reduce sum %t : !hk.rt<f32, 16x64, row> -> !hk.rv<f32, 16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<i1, 16x64, row>) {
  // expected-error @+1 {{register vector element type must be bf16, f16, f32, i32, i8, f8E4M3FN, f8E5M2, f8E4M3FNUZ or f8E5M2FNUZ but got 'i1'}}
  %r = hk.reduce sum %t : !hk.rt<i1, 16x64, row> -> !hk.rv<i1, 16, col>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x64, row>) {
  // expected-error @+1 {{'hk.cast' op expected a result of shape 16x64 but got 64x16}}
  %r = hk.cast %t : !hk.rt<f32, 16x64, row> -> !hk.rt<bf16, 64x16, row>
  return
}

// -----

func.func @f(%v: !hk.rv<f32, 16, col>) {
  // expected-error @+1 {{'hk.cast' op cannot change a vector's axis by a cast}}
  %r = hk.cast %v : !hk.rv<f32, 16, col> -> !hk.rv<f32, 16, row>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x64, row>) {
  // expected-error @+1 {{'hk.binary' op expected an i32 operand for band but got 'f32'}}
  %r = hk.binary band %t, %t : !hk.rt<f32, 16x64, row>, !hk.rt<f32, 16x64, row>
  return
}

// -----

func.func @f(%t: !hk.rt<i32, 16x64, row>, %v: !hk.rv<i32, 16, col>) {
  // expected-error @+1 {{'hk.broadcast_binary' op shl is not a row or column operation}}
  %r = hk.broadcast_binary shl %t, %v : !hk.rt<i32, 16x64, row>, !hk.rv<i32, 16, col>
  return
}

// -----

func.func @f(%t: !hk.rt<bf16, 16x64, row>) {
  // expected-error @+1 {{'hk.cast' op finite narrows f32 to bf16 or f16, not 'bf16' to 'f32'}}
  %r = hk.cast %t finite : !hk.rt<bf16, 16x64, row> -> !hk.rt<f32, 16x64, row>
  return
}

// -----

func.func @f(%t: !hk.rt<f32, 16x64, row>) {
  // expected-error @+1 {{'hk.transpose' op expected a result of shape 64x16 but got 16x64}}
  %r = hk.transpose %t : !hk.rt<f32, 16x64, row> -> !hk.rt<f32, 16x64, row>
  return
}

// -----

func.func @f(%s: i32, %o: !hk.rt<f32, 16x16, row>) {
  // expected-error @+1 {{'hk.rand' op expected i32 offsets but got element type 'f32'}}
  %r = hk.rand %s, %o : i32, !hk.rt<f32, 16x16, row> -> !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @f(%s: i32, %o: !hk.rt<i32, 16x16, row>) {
  // expected-error @+1 {{'hk.rand' op expected an f32 result but got element type 'bf16'}}
  %r = hk.rand %s, %o : i32, !hk.rt<i32, 16x16, row> -> !hk.rt<bf16, 16x16, row>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'hk.set_prio' op attribute 'priority' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 0 whose maximum value is 3}}
  hk.set_prio 5
  return
}

// -----

// expected-error @+1 {{'hk.kernel' is only valid on a func.func}}
module attributes {hk.kernel} {}

// -----

// expected-error @+1 {{kernel @k must return nothing but returns 1 values}}
func.func @k() -> i32 attributes {hk.kernel} {
  %c = arith.constant 0 : i32
  return %c : i32
}

// -----

// expected-error @+1 {{'hk.warps' must be a positive integer but got 0 : i32}}
func.func @k() attributes {hk.kernel, hk.warps = 0 : i32} {
  return
}

// -----

// expected-error @+1 {{'hk.scalar_reads' names argument 1 but it is not a tensor argument of @k}}
func.func @k(%t: !hk.gl<i32>, %n: index) attributes {hk.kernel, hk.scalar_reads = array<i64: 1>} {
  return
}

// -----

// expected-error @+1 {{'hk.writes' must be an array<i64> of argument numbers on a func.func}}
func.func @k(%t: !hk.gl<i32>) attributes {hk.kernel, hk.writes = [0]} {
  return
}

// -----

// expected-error @+1 {{unknown hk attribute 'hk.wraps'}}
func.func @k() attributes {hk.kernel, hk.wraps = 4 : i32} {
  return
}

