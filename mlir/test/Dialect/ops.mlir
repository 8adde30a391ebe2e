// RUN: hk-opt %s | hk-opt | FileCheck %s
// RUN: hk-opt %s --mlir-print-op-generic | hk-opt | FileCheck %s

// Every type and every operation of the hk dialect, printed and parsed back.

// CHECK-LABEL: func.func private @types
// CHECK-SAME: !hk.rt<bf16, 16x64, row>
// CHECK-SAME: !hk.rt<f32, 16x16, row, c>
// CHECK-SAME: !hk.rt<f16, 32x16, col, b>
// CHECK-SAME: !hk.rt<i1, 16x16, row>
// CHECK-SAME: !hk.rv<f32, 16, col>
// CHECK-SAME: !hk.rv<i32, 64, row>
// CHECK-SAME: !hk.st<bf16, 64x64, 2>
// CHECK-SAME: !hk.sv<f32, 64, 1>
// CHECK-SAME: !hk.gl<f8E4M3FN>
// CHECK-SAME: !hk.gl<f8E5M2>
// CHECK-SAME: !hk.gl<i8>
// CHECK-SAME: !hk.gl<bf16, div 64>
// CHECK-SAME: !hk.staged<bf16, 128x32>
// CHECK-SAME: !hk.coord
func.func private @types(!hk.rt<bf16, 16x64, row>, !hk.rt<f32, 16x16, row, c>,
                         !hk.rt<f16, 32x16, col, b>, !hk.rt<i1, 16x16, row>,
                         !hk.rv<f32, 16, col>, !hk.rv<i32, 64, row>, !hk.st<bf16, 64x64, 2>,
                         !hk.sv<f32, 64, 1>, !hk.gl<f8E4M3FN>, !hk.gl<f8E5M2>, !hk.gl<i8>,
                         !hk.gl<bf16, div 64>, !hk.staged<bf16, 128x32>, !hk.coord)

// CHECK-LABEL: func.func @indexing
func.func @indexing(%a: !hk.gl<bf16>) attributes {hk.kernel, hk.warps = 4 : i32} {
  // CHECK: hk.block_idx x
  %x = hk.block_idx x
  // CHECK: hk.grid_dim y
  %n = hk.grid_dim y
  // CHECK: hk.warp_id
  %w = hk.warp_id
  // CHECK: hk.lane_id
  %l = hk.lane_id
  // CHECK: hk.num_warps
  %nw = hk.num_warps
  // CHECK: hk.extent rows %{{.*}} : !hk.gl<bf16>
  %r = hk.extent rows %a : !hk.gl<bf16>
  // CHECK: hk.tile_coord %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}
  %c = hk.tile_coord %x, %n, %w, %l
  return
}

// CHECK-LABEL: func.func @global_memory
func.func @global_memory(%a: !hk.gl<bf16>, %f: !hk.gl<f32>, %i: index, %c: !hk.coord,
                         %ids: !hk.rv<i32, 16, col>) attributes {hk.kernel} {
  // CHECK: hk.load %{{.*}}[%{{.*}}] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  %t = hk.load %a[%c] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
  // CHECK: hk.load %{{.*}}[%{{.*}}] : !hk.gl<f32> -> !hk.rv<f32, 64, row>
  %v = hk.load %f[%c] : !hk.gl<f32> -> !hk.rv<f32, 64, row>
  // CHECK: hk.store %{{.*}}, %{{.*}}[%{{.*}}] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  hk.store %t, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  // CHECK: hk.gather %{{.*}}[%{{.*}}] rows %{{.*}} : !hk.gl<bf16>, !hk.rv<i32, 16, col> -> !hk.rt<bf16, 16x64, row>
  %g = hk.gather %a[%c] rows %ids : !hk.gl<bf16>, !hk.rv<i32, 16, col> -> !hk.rt<bf16, 16x64, row>
  // CHECK: hk.scatter %{{.*}}, %{{.*}}[%{{.*}}] rows %{{.*}} : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>, !hk.rv<i32, 16, col>
  hk.scatter %g, %a[%c] rows %ids : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>, !hk.rv<i32, 16, col>
  // CHECK: hk.load_scalar %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !hk.gl<f32> -> f32
  %s = hk.load_scalar %f[%i, %i, %i, %i] : !hk.gl<f32> -> f32
  // CHECK: hk.store_scalar %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : f32, !hk.gl<f32>
  hk.store_scalar %s, %f[%i, %i, %i, %i] : f32, !hk.gl<f32>
  // CHECK: hk.atomic_add %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : f32, !hk.gl<f32>
  hk.atomic_add %s, %f[%i, %i, %i, %i] : f32, !hk.gl<f32>
  return
}

// CHECK-LABEL: func.func @lds
func.func @lds(%a: !hk.gl<bf16>, %c: !hk.coord, %i: index) attributes {hk.kernel} {
  // CHECK: hk.lds_alloc : !hk.st<bf16, 64x64, 2>
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 2>
  // CHECK: hk.lds_alloc {offset = 16384 : i64} : !hk.sv<f32, 64, 1>
  %sv = hk.lds_alloc {offset = 16384 : i64} : !hk.sv<f32, 64, 1>
  // CHECK: hk.subtile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !hk.st<bf16, 64x64, 2> -> !hk.st<bf16, 16x64, 1>
  %q = hk.subtile %s[%i, %i, %i] : !hk.st<bf16, 64x64, 2> -> !hk.st<bf16, 16x64, 1>
  // CHECK: hk.copy_to_lds %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 2>
  hk.copy_to_lds %a[%c], %s[%i] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 2>
  // CHECK: hk.lds_load %{{.*}}[%{{.*}}] : !hk.st<bf16, 64x64, 2> -> !hk.rt<bf16, 64x64, row>
  %t = hk.lds_load %s[%i] : !hk.st<bf16, 64x64, 2> -> !hk.rt<bf16, 64x64, row>
  // CHECK: hk.lds_load %{{.*}}[%{{.*}}] : !hk.sv<f32, 64, 1> -> !hk.rv<f32, 64, row>
  %v = hk.lds_load %sv[%i] : !hk.sv<f32, 64, 1> -> !hk.rv<f32, 64, row>
  // CHECK: hk.lds_store %{{.*}}, %{{.*}}[%{{.*}}] : !hk.rt<bf16, 64x64, row>, !hk.st<bf16, 64x64, 2>
  hk.lds_store %t, %s[%i] : !hk.rt<bf16, 64x64, row>, !hk.st<bf16, 64x64, 2>
  // CHECK: hk.copy_from_lds %{{.*}}[%{{.*}}], %{{.*}}[%{{.*}}] : !hk.st<bf16, 64x64, 2>, !hk.gl<bf16>
  hk.copy_from_lds %s[%i], %a[%c] : !hk.st<bf16, 64x64, 2>, !hk.gl<bf16>
  // CHECK: hk.wait_lds 0 for %{{.*}} : !hk.rt<bf16, 64x64, row>
  hk.wait_lds 0 for %t : !hk.rt<bf16, 64x64, row>
  // CHECK: hk.wait_vm 2{{$}}
  hk.wait_vm 2
  // CHECK: hk.barrier
  hk.barrier
  // CHECK: hk.sched_barrier 0
  hk.sched_barrier 0
  // CHECK: hk.set_prio 1
  hk.set_prio 1
  return
}

// CHECK-LABEL: func.func @staged_copies
func.func @staged_copies(%a: !hk.gl<bf16, div 64>, %c: !hk.coord, %n: index) attributes {hk.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = hk.lds_alloc : !hk.st<bf16, 128x32, 2>
  // CHECK: %[[T:.*]] = hk.copy_issue %{{.*}}[%{{.*}}] : !hk.gl<bf16, div 64> -> !hk.staged<bf16, 128x32>
  %t = hk.copy_issue %a[%c] : !hk.gl<bf16, div 64> -> !hk.staged<bf16, 128x32>
  // CHECK: hk.wait_vm 0 for %[[T]] : !hk.staged<bf16, 128x32>
  hk.wait_vm 0 for %t : !hk.staged<bf16, 128x32>
  // CHECK: hk.copy_commit %[[T]], %{{.*}}[%{{.*}}] : !hk.staged<bf16, 128x32>, !hk.st<bf16, 128x32, 2>
  hk.copy_commit %t, %s[%c0] : !hk.staged<bf16, 128x32>, !hk.st<bf16, 128x32, 2>
  // CHECK: hk.copy_commit %{{.*}}, %{{.*}}[%{{.*}}] transpose : !hk.staged<bf16, 32x128>, !hk.st<bf16, 128x32, 2>
  %u = hk.copy_issue %a[%c] : !hk.gl<bf16, div 64> -> !hk.staged<bf16, 32x128>
  hk.wait_vm 0 for %u : !hk.staged<bf16, 32x128>
  hk.copy_commit %u, %s[%c1] transpose : !hk.staged<bf16, 32x128>, !hk.st<bf16, 128x32, 2>
  // CHECK: hk.wait_lds 1 {younger = [!hk.rt<bf16, 16x32, row>]}
  hk.wait_lds 1 {younger = [!hk.rt<bf16, 16x32, row>]}
  // CHECK: scf.for
  // CHECK: } {hk.unroll = 2 : i64}
  scf.for %k = %c0 to %n step %c1 {
    hk.barrier
  } {hk.unroll = 2 : i64}
  return
}

// CHECK-LABEL: func.func @mma
func.func @mma(%a: !hk.rt<bf16, 16x32, row>, %b: !hk.rt<bf16, 32x16, col>,
               %bt: !hk.rt<bf16, 16x32, row>, %at: !hk.rt<bf16, 32x16, col>,
               %c: !hk.rt<f32, 16x16, row>) {
  // CHECK: hk.mma AB %{{.*}}, %{{.*}}, %{{.*}} : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 32x16, col>, !hk.rt<f32, 16x16, row>
  %0 = hk.mma AB %a, %b, %c : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 32x16, col>, !hk.rt<f32, 16x16, row>
  // CHECK: hk.mma ABt
  %1 = hk.mma ABt %a, %bt, %0 : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 16x32, row>, !hk.rt<f32, 16x16, row>
  // CHECK: hk.mma AtB
  %2 = hk.mma AtB %at, %b, %1 : !hk.rt<bf16, 32x16, col>, !hk.rt<bf16, 32x16, col>, !hk.rt<f32, 16x16, row>
  // CHECK: hk.mma AtBt
  %3 = hk.mma AtBt %at, %bt, %2 : !hk.rt<bf16, 32x16, col>, !hk.rt<bf16, 16x32, row>, !hk.rt<f32, 16x16, row>
  return
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%t: !hk.rt<f32, 16x64, row>, %u: !hk.rt<f32, 16x64, row>,
                       %col: !hk.rv<f32, 16, col>, %row: !hk.rv<f32, 64, row>, %x: f32,
                       %i: index) {
  // CHECK-COUNT-11: hk.unary {{exp|exp2|log|log2|abs|neg|relu|gelu|silu|sqrt|rsqrt}} %{{.*}} : !hk.rt<f32, 16x64, row>
  %0 = hk.unary exp %t : !hk.rt<f32, 16x64, row>
  %1 = hk.unary exp2 %0 : !hk.rt<f32, 16x64, row>
  %2 = hk.unary log %1 : !hk.rt<f32, 16x64, row>
  %3 = hk.unary log2 %2 : !hk.rt<f32, 16x64, row>
  %4 = hk.unary abs %3 : !hk.rt<f32, 16x64, row>
  %5 = hk.unary neg %4 : !hk.rt<f32, 16x64, row>
  %6 = hk.unary relu %5 : !hk.rt<f32, 16x64, row>
  %7 = hk.unary gelu %6 : !hk.rt<f32, 16x64, row>
  %8 = hk.unary silu %7 : !hk.rt<f32, 16x64, row>
  %9 = hk.unary sqrt %8 : !hk.rt<f32, 16x64, row>
  %10 = hk.unary rsqrt %9 : !hk.rt<f32, 16x64, row>
  // CHECK-COUNT-7: hk.unary {{round|floor|sin|cos|tanh|sigmoid|exp2_ftz}} %{{.*}} : !hk.rt<f32, 16x64, row>
  %r0 = hk.unary round %10 : !hk.rt<f32, 16x64, row>
  %r1 = hk.unary floor %r0 : !hk.rt<f32, 16x64, row>
  %r2 = hk.unary sin %r1 : !hk.rt<f32, 16x64, row>
  %r3 = hk.unary cos %r2 : !hk.rt<f32, 16x64, row>
  %r4 = hk.unary tanh %r3 : !hk.rt<f32, 16x64, row>
  %r5 = hk.unary sigmoid %r4 : !hk.rt<f32, 16x64, row>
  %r7 = hk.unary exp2_ftz %r5 : !hk.rt<f32, 16x64, row>
  // CHECK: hk.binary pow %{{.*}}, %{{.*}} : !hk.rt<f32, 16x64, row>, f32
  %r6 = hk.binary pow %r7, %x : !hk.rt<f32, 16x64, row>, f32
  // CHECK: hk.binary add %{{.*}}, %{{.*}} : !hk.rt<f32, 16x64, row>, !hk.rt<f32, 16x64, row>
  %11 = hk.binary add %10, %u : !hk.rt<f32, 16x64, row>, !hk.rt<f32, 16x64, row>
  // CHECK: hk.binary mul %{{.*}}, %{{.*}} : !hk.rt<f32, 16x64, row>, f32
  %12 = hk.binary mul %11, %x : !hk.rt<f32, 16x64, row>, f32
  // CHECK: hk.binary max %{{.*}}, %{{.*}} : !hk.rv<f32, 16, col>, !hk.rv<f32, 16, col>
  %13 = hk.binary max %col, %col : !hk.rv<f32, 16, col>, !hk.rv<f32, 16, col>
  // CHECK: hk.cmp gt %{{.*}}, %{{.*}} : !hk.rt<f32, 16x64, row>, f32 -> !hk.rt<i1, 16x64, row>
  %m = hk.cmp gt %12, %x : !hk.rt<f32, 16x64, row>, f32 -> !hk.rt<i1, 16x64, row>
  // CHECK: hk.select %{{.*}}, %{{.*}}, %{{.*}} : !hk.rt<i1, 16x64, row>, !hk.rt<f32, 16x64, row>
  %14 = hk.select %m, %12, %u : !hk.rt<i1, 16x64, row>, !hk.rt<f32, 16x64, row>
  // CHECK: hk.broadcast_binary sub %{{.*}}, %{{.*}} : !hk.rt<f32, 16x64, row>, !hk.rv<f32, 16, col>
  %15 = hk.broadcast_binary sub %14, %col : !hk.rt<f32, 16x64, row>, !hk.rv<f32, 16, col>
  // CHECK: hk.broadcast_binary mul %{{.*}}, %{{.*}} : !hk.rt<f32, 16x64, row>, !hk.rv<f32, 64, row>
  %16 = hk.broadcast_binary mul %15, %row : !hk.rt<f32, 16x64, row>, !hk.rv<f32, 64, row>
  // CHECK: hk.broadcast %{{.*}} : !hk.rv<f32, 16, col> -> !hk.rt<f32, 16x64, row>
  %17 = hk.broadcast %col : !hk.rv<f32, 16, col> -> !hk.rt<f32, 16x64, row>
  // CHECK: hk.fill(0.000000e+00) : !hk.rt<f32, 16x64, row>
  %18 = hk.fill(0.0) : !hk.rt<f32, 16x64, row>
  // CHECK: hk.fill(0xFF800000) : !hk.rv<f32, 16, col>
  %19 = hk.fill(0xFF800000) : !hk.rv<f32, 16, col>
  // CHECK: hk.fill(7) : !hk.rt<i32, 16x16, row>
  %20 = hk.fill(7) : !hk.rt<i32, 16x16, row>
  // CHECK: hk.mask causal %{{.*}}, %{{.*}}, %{{.*}} {value = 0xFF800000 : f32} : !hk.rt<f32, 16x64, row>
  %21 = hk.mask causal %17, %i, %i {value = 0xFF800000 : f32} : !hk.rt<f32, 16x64, row>
  // CHECK: hk.mask triu %{{.*}}, %{{.*}}, %{{.*}} {diagonal = 1 : i64, value = 0.000000e+00 : f32}
  %22 = hk.mask triu %21, %i, %i {diagonal = 1 : i64, value = 0.0 : f32} : !hk.rt<f32, 16x64, row>
  // CHECK: hk.mask tril
  %23 = hk.mask tril %22, %i, %i {value = 0.0 : f32} : !hk.rt<f32, 16x64, row>
  // CHECK: hk.iota row : !hk.rt<i32, 16x64, row>
  %24 = hk.iota row : !hk.rt<i32, 16x64, row>
  // CHECK: hk.iota col : !hk.rt<i32, 16x64, row>
  %25 = hk.iota col : !hk.rt<i32, 16x64, row>
  return
}

// CHECK-LABEL: func.func @reductions_and_conversions
func.func @reductions_and_conversions(%t: !hk.rt<f32, 16x64, row>, %acc: !hk.rv<f32, 16, col>,
                                      %offs: !hk.rt<i32, 16x64, row>, %seed: i32) {
  // CHECK: hk.reduce max %{{.*}} : !hk.rt<f32, 16x64, row> -> !hk.rv<f32, 16, col>
  %0 = hk.reduce max %t : !hk.rt<f32, 16x64, row> -> !hk.rv<f32, 16, col>
  // CHECK: hk.reduce sum %{{.*}} init %{{.*}} : !hk.rt<f32, 16x64, row> -> !hk.rv<f32, 16, col>
  %1 = hk.reduce sum %t init %acc : !hk.rt<f32, 16x64, row> -> !hk.rv<f32, 16, col>
  // CHECK: hk.reduce min %{{.*}} : !hk.rt<f32, 16x64, row> -> !hk.rv<f32, 64, row>
  %2 = hk.reduce min %t : !hk.rt<f32, 16x64, row> -> !hk.rv<f32, 64, row>
  // CHECK: hk.cast %{{.*}} : !hk.rt<f32, 16x64, row> -> !hk.rt<bf16, 16x64, col>
  %3 = hk.cast %t : !hk.rt<f32, 16x64, row> -> !hk.rt<bf16, 16x64, col>
  // CHECK: hk.binary shr %{{.*}}, %{{.*}} : !hk.rt<i32, 16x64, row>, !hk.rt<i32, 16x64, row>
  %7 = hk.binary shr %offs, %offs : !hk.rt<i32, 16x64, row>, !hk.rt<i32, 16x64, row>
  // CHECK: hk.cast %{{.*}} finite : !hk.rt<f32, 16x64, row> -> !hk.rt<bf16, 16x64, col>
  %6 = hk.cast %t finite : !hk.rt<f32, 16x64, row> -> !hk.rt<bf16, 16x64, col>
  // CHECK: hk.transpose %{{.*}} : !hk.rt<f32, 16x64, row> -> !hk.rt<f32, 64x16, row>
  %4 = hk.transpose %t : !hk.rt<f32, 16x64, row> -> !hk.rt<f32, 64x16, row>
  // CHECK: hk.rand %{{.*}}, %{{.*}} : i32, !hk.rt<i32, 16x64, row> -> !hk.rt<f32, 16x64, row>
  %5 = hk.rand %seed, %offs : i32, !hk.rt<i32, 16x64, row> -> !hk.rt<f32, 16x64, row>
  return
}
