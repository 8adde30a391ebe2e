// RUN: hk-translate --hk-to-cpp %s -split-input-file | FileCheck %s

// The spec's vector add: launch bounds from hk.warps, one statement per op, and the bind of
// every tile a wait completes (the first trap: nothing that reads them moves above the wait).
// CHECK: #include "hk/hk.cuh"
// The C++ name is prefixed (no clash with C library names); the symbol stays `add`.
// CHECK: extern "C" __global__ void __launch_bounds__(32)
// CHECK-NEXT: hk_kernel_add(hk::gl<hk::bf16> {{.*}}) __asm__("add");
// CHECK: extern "C" __global__ void __launch_bounds__(32)
// CHECK-NEXT: hk_kernel_add(hk::gl<hk::bf16> [[A:v[0-9]+]], hk::gl<hk::bf16> [[B:v[0-9]+]], hk::gl<hk::bf16> [[O:v[0-9]+]]) {
// CHECK: const int [[Z:v[0-9]+]] = static_cast<int>(blockIdx.z);
// CHECK: const hk::coord [[C:c[0-9]+]]{[[Z]], {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}};
// CHECK: hk::rt<hk::bf16, 16, 64, hk::row_l> [[TA:t[0-9]+]];
// CHECK-NEXT: hk::load([[TA]], [[A]], [[C]]);
// CHECK: hk::load([[TB:t[0-9]+]], [[B]], [[C]]);
// CHECK-NEXT: hk::wait_vm<0>();
// CHECK-NEXT: hk::bind([[TA]]);
// CHECK-NEXT: hk::bind([[TB]]);
// CHECK: hk::add([[S:t[0-9]+]], [[TA]], [[TB]]);
// CHECK-NEXT: hk::store([[O]], [[S]], [[C]]);
// CHECK-NEXT: return;
module {
  func.func @add(%a: !hk.gl<bf16>, %b: !hk.gl<bf16>, %o: !hk.gl<bf16>) attributes {hk.kernel, hk.warps = 1 : i32} {
    %z = hk.block_idx z
    %y = hk.block_idx y
    %x = hk.block_idx x
    %c0 = arith.constant 0 : index
    %idx = hk.tile_coord %z, %c0, %y, %x
    %ta = hk.load %a[%idx] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
    %tb = hk.load %b[%idx] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
    hk.wait_vm 0 for %ta, %tb : !hk.rt<bf16, 16x64, row>, !hk.rt<bf16, 16x64, row>
    %s = hk.binary add %ta, %tb : !hk.rt<bf16, 16x64, row>, !hk.rt<bf16, 16x64, row>
    hk.store %s, %o[%idx] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
    return
  }
}

// -----

// Loops carry their values through variables, assigned through temporaries at the yield;
// branches declare their results first. Scalars become C++ expressions.
// CHECK-LABEL: hk_kernel_rowsum({{.*}}) {
// CHECK: hk::rt<float, 16, 16, hk::row_l> [[ACC:t[0-9]+]] = [[INIT:t[0-9]+]];
// CHECK-NEXT: for (int [[I:v[0-9]+]] = {{v[0-9]+}}; [[I]] < {{v[0-9]+}}; [[I]] += {{v[0-9]+}}) {
// CHECK: hk::add([[NEXT:t[0-9]+]], [[ACC]], {{t[0-9]+}});
// CHECK: hk::rt<float, 16, 16, hk::row_l> [[ACC]]_next = [[NEXT]];
// CHECK-NEXT: [[ACC]] = [[ACC]]_next;
// CHECK-NEXT: }
// CHECK: hk::row_sum([[SUM:t[0-9]+]], [[ACC]]);
// CHECK: const bool [[P:v[0-9]+]] = {{v[0-9]+}} < {{v[0-9]+}};
// The branch result is the vector of the tile it was reduced from.
// CHECK: hk::col_vec<hk::rt<float, 16, 16, hk::row_l>, float> [[R:t[0-9]+]];
// CHECK-NEXT: if ([[P]]) {
// CHECK: [[R]] = [[SUM]];
// CHECK-NEXT: } else {
// CHECK: hk::neg_infty(
module {
  func.func @rowsum(%a: !hk.gl<f32>, %c: !hk.coord, %n: index) attributes {hk.kernel, hk.warps = 2 : i32} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = hk.fill(0.0) : !hk.rt<f32, 16x16, row>
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%t = %zero) -> (!hk.rt<f32, 16x16, row>) {
      %x = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 16x16, row>
      hk.wait_vm 0 for %x : !hk.rt<f32, 16x16, row>
      %s = hk.binary add %t, %x : !hk.rt<f32, 16x16, row>, !hk.rt<f32, 16x16, row>
      scf.yield %s : !hk.rt<f32, 16x16, row>
    }
    %sum = hk.reduce sum %acc : !hk.rt<f32, 16x16, row> -> !hk.rv<f32, 16, col>
    %w = hk.warp_id
    %p = arith.cmpi slt, %w, %c1 : index
    %r = scf.if %p -> (!hk.rv<f32, 16, col>) {
      scf.yield %sum : !hk.rv<f32, 16, col>
    } else {
      %m = hk.fill(0xFF800000) : !hk.rv<f32, 16, col>
      scf.yield %m : !hk.rv<f32, 16, col>
    }
    hk.store %r, %a[%c] : !hk.rv<f32, 16, col>, !hk.gl<f32>
    return
  }
}

// -----

// Shared tiles are placed in one static LDS array at the offsets the allocation pass chose;
// the tile library's types must have exactly the bytes the pass counted.
// CHECK-LABEL: hk_kernel_staged({{.*}}) {
// CHECK: __shared__ __attribute__((aligned(16))) unsigned char hk_lds[8192];
// CHECK: static_assert(sizeof(hk::st<hk::bf16, 32, 64>) == 4096
// CHECK-NEXT: hk::st<hk::bf16, 32, 64>* [[S:s[0-9]+]] = reinterpret_cast<hk::st<hk::bf16, 32, 64>*>(hk_lds + 0);
// CHECK: hk::group<4>::load([[S]][{{v[0-9]+}}],
// CHECK: hk::barrier();
// CHECK: hk::load({{t[0-9]+}}, [[S]][{{v[0-9]+}}]);
module attributes {hk.arch = "gfx1100"} {
  func.func @staged(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel, hk.warps = 4 : i32, hk.lds_bytes = 8192 : i64} {
    %c1 = arith.constant 1 : index
    %s = hk.lds_alloc {offset = 0 : i64} : !hk.st<bf16, 32x64, 2>
    hk.copy_to_lds %a[%c], %s[%c1] : !hk.gl<bf16>, !hk.st<bf16, 32x64, 2>
    hk.barrier
    %t = hk.lds_load %s[%c1] : !hk.st<bf16, 32x64, 2> -> !hk.rt<bf16, 32x64, row>
    hk.wait_lds 0 for %t : !hk.rt<bf16, 32x64, row>
    hk.store %t, %a[%c] : !hk.rt<bf16, 32x64, row>, !hk.gl<bf16>
    return
  }
}

// -----

// A subtile is addressed through its root allocation: the view emits nothing, and loads and
// stores through it (even through a view of a view) pass the row and column offsets.
// CHECK-LABEL: hk_kernel_quarters({{.*}}) {
// CHECK: hk::st<hk::bf16, 64, 64>* [[S:s[0-9]+]] = reinterpret_cast
// CHECK-NOT: subtile
// CHECK: hk::load({{t[0-9]+}}, [[S]][[[B:v[0-9]+]]], [[I:v[0-9]+]] * 16, [[J:v[0-9]+]] * 64);
// CHECK: hk::store([[S]][[[B]]], {{t[0-9]+}}, [[J]] * 16 + [[I]] * 32, [[I]] * 32 + [[J]] * 32);
// CHECK-NOT: subtile
module attributes {hk.arch = "gfx1100"} {
  func.func @quarters(%a: !hk.gl<bf16>, %c: !hk.coord, %b: index, %i: index, %j: index) attributes {hk.kernel, hk.lds_bytes = 16384 : i64} {
    %s = hk.lds_alloc {offset = 0 : i64} : !hk.st<bf16, 64x64, 2>
    %q = hk.subtile %s[%b, %i, %j] : !hk.st<bf16, 64x64, 2> -> !hk.st<bf16, 16x64, 1>
    %t = hk.lds_load %q[%j] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
    hk.wait_lds 0 for %t : !hk.rt<bf16, 16x64, row>
    %h = hk.subtile %s[%b, %i, %j] : !hk.st<bf16, 64x64, 2> -> !hk.st<bf16, 32x32, 1>
    %r = hk.subtile %h[%i, %j, %i] : !hk.st<bf16, 32x32, 1> -> !hk.st<bf16, 16x32, 1>
    %u = hk.lds_load %r[%i] : !hk.st<bf16, 16x32, 1> -> !hk.rt<bf16, 16x32, row>
    hk.wait_lds 0 for %u : !hk.rt<bf16, 16x32, row>
    hk.lds_store %u, %r[%i] : !hk.rt<bf16, 16x32, row>, !hk.st<bf16, 16x32, 1>
    return
  }
}

// -----

// A kernel's max_vgprs becomes the compiler's VGPR limit, and the occupancy it implies:
// 48 VGPRs in gfx1100's granules of 24 leave room for 1536 / 48 = 32 waves, capped at 16.
// CHECK-LABEL: kernel capped:
// CHECK: __launch_bounds__(64) __attribute__((amdgpu_num_vgpr(48), amdgpu_waves_per_eu(16)))
module {
  func.func @capped() attributes {hk.kernel, hk.warps = 2 : i32, hk.max_vgprs = 48 : i64} {
    return
  }
}

// -----

// Integer scalars wrap and divide with defined results (hk/common/ints.cuh); a float scalar
// converts to i32 saturating, as tiles do.
// CHECK-LABEL: hk_kernel_ints({{.*}}) {
// CHECK: const int [[S:v[0-9]+]] = hk::wrap_add([[N:v[0-9]+]], {{v[0-9]+}});
// CHECK-NEXT: const int [[P:v[0-9]+]] = hk::wrap_mul([[S]], [[N]]);
// CHECK-NEXT: const int [[D:v[0-9]+]] = hk::div_s([[P]], [[N]]);
// CHECK-NEXT: const int [[R:v[0-9]+]] = hk::rem_s([[D]], [[N]]);
// CHECK-NEXT: const int [[U:v[0-9]+]] = hk::ceil_div_s([[R]], [[N]]);
// CHECK-NEXT: const int [[L:v[0-9]+]] = hk::shl_s([[U]], [[N]]);
// CHECK-NEXT: const int {{v[0-9]+}} = hk::shr_s([[L]], [[N]]);
// CHECK: const int32_t {{v[0-9]+}} = hk::float_to_int({{v[0-9]+}});
// CHECK: const bool {{v[0-9]+}} = {{v[0-9]+}} & {{v[0-9]+}};
module {
  func.func @ints(%o: !hk.gl<i32>, %n: index, %f: f32) attributes {hk.kernel, hk.warps = 1 : i32} {
    %c7 = arith.constant 7 : index
    %s = arith.addi %n, %c7 : index
    %p = arith.muli %s, %n : index
    %d = arith.divsi %p, %n : index
    %r = arith.remsi %d, %n : index
    %u = arith.ceildivsi %r, %n : index
    %l = arith.shli %u, %n : index
    %h = arith.shrsi %l, %n : index
    %i = arith.fptosi %f : f32 to i32
    %a = arith.cmpi slt, %h, %n : index
    %b = arith.cmpi sgt, %h, %n : index
    %both = arith.andi %a, %b : i1
    %c0 = arith.constant 0 : index
    hk.store_scalar %i, %o[%c0, %c0, %c0, %c0] : i32, !hk.gl<i32>
    return
  }
}

// -----

// Float scalar comparisons: C++'s operators are ordered but for !=, which is unordered (une);
// one and the other unordered predicates are written so that a NaN operand gives what arith says.
// CHECK-LABEL: hk_kernel_float_compares({{.*}}) {
// CHECK: const bool {{v[0-9]+}} = [[A:v[0-9]+]] == [[B:v[0-9]+]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] != [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] < [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] <= [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] > [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = [[A]] >= [[B]];
// CHECK-NEXT: const bool {{v[0-9]+}} = ([[A]] < [[B]] || [[A]] > [[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = !([[A]] < [[B]] || [[A]] > [[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = !([[A]] >= [[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = !([[A]] > [[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = !([[A]] <= [[B]]);
// CHECK-NEXT: const bool {{v[0-9]+}} = !([[A]] < [[B]]);
module {
  func.func @float_compares(%a: f32, %b: f32) attributes {hk.kernel, hk.warps = 1 : i32} {
    %oeq = arith.cmpf oeq, %a, %b : f32
    %une = arith.cmpf une, %a, %b : f32
    %olt = arith.cmpf olt, %a, %b : f32
    %ole = arith.cmpf ole, %a, %b : f32
    %ogt = arith.cmpf ogt, %a, %b : f32
    %oge = arith.cmpf oge, %a, %b : f32
    %one = arith.cmpf one, %a, %b : f32
    %ueq = arith.cmpf ueq, %a, %b : f32
    %ult = arith.cmpf ult, %a, %b : f32
    %ule = arith.cmpf ule, %a, %b : f32
    %ugt = arith.cmpf ugt, %a, %b : f32
    %uge = arith.cmpf uge, %a, %b : f32
    return
  }
}

// -----

// Split copies: the global view's divisor picks the tile library's load path at compile time;
// the staging is the workgroup's (4 warps). A wait that leaves operations in flight counts the
// instructions they issue, as the tile library states them. A loop with hk.unroll = 2 writes
// its body twice per iteration (the index of each copy is k + i), then the iteration left.
// CHECK-LABEL: hk_kernel_staged(
// CHECK: hk::staging<hk::st<hk::bf16, 64, 32>, 4> [[T:t[0-9]+]];
// CHECK-NEXT: hk::group<4>::issue<64>([[T]], {{v[0-9]+}}, {{c[0-9]+}});
// CHECK: hk::wait_vm<0>();
// CHECK-NEXT: hk::bind([[T]]);
// CHECK-NEXT: hk::group<4>::commit({{s[0-9]+}}[{{v[0-9]+}}], [[T]]);
// CHECK: hk::group<4>::commit_transposed({{s[0-9]+}}[{{v[0-9]+}}], {{t[0-9]+}});
// CHECK: hk::wait_lds<hk::lds_insts<hk::rt<hk::bf16, 16, 64, hk::row_l>>() + hk::lds_insts<hk::staging<hk::st<hk::bf16, 64, 32>, 4>>()>();
// CHECK: int [[K:v[0-9]+]]_k = {{v[0-9]+}};
// CHECK-NEXT: for (; [[K]]_k + 1 * [[STEP:v[0-9]+]] < [[N:v[0-9]+]]; [[K]]_k += 2 * [[STEP]]) {
// CHECK-NEXT: {
// CHECK-NEXT: const int [[K]] = [[K]]_k + 0 * [[STEP]];
// CHECK: hk::barrier();
// CHECK: {
// CHECK-NEXT: const int [[K]] = [[K]]_k + 1 * [[STEP]];
// CHECK: hk::barrier();
// CHECK: for (; [[K]]_k < [[N]]; [[K]]_k += [[STEP]]) {
// CHECK-NEXT: {
// CHECK-NEXT: const int [[K]] = [[K]]_k;
// CHECK: hk::barrier();
module {
  func.func @staged(%a: !hk.gl<bf16, div 64>, %c: !hk.coord, %n: index) attributes {hk.kernel, hk.warps = 4 : i32, hk.lds_bytes = 12288 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s = hk.lds_alloc {offset = 0 : i64} : !hk.st<bf16, 64x32, 2>
    %q = hk.lds_alloc {offset = 8192 : i64} : !hk.st<bf16, 16x64, 2>
    %t = hk.copy_issue %a[%c] : !hk.gl<bf16, div 64> -> !hk.staged<bf16, 64x32>
    hk.wait_vm 0 for %t : !hk.staged<bf16, 64x32>
    hk.copy_commit %t, %s[%c0] : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x32, 2>
    %u = hk.copy_issue %a[%c] : !hk.gl<bf16, div 64> -> !hk.staged<bf16, 32x64>
    hk.wait_vm 0 for %u : !hk.staged<bf16, 32x64>
    hk.copy_commit %u, %s[%c1] transpose : !hk.staged<bf16, 32x64>, !hk.st<bf16, 64x32, 2>
    %x = hk.lds_load %q[%c0] : !hk.st<bf16, 16x64, 2> -> !hk.rt<bf16, 16x64, row>
    hk.wait_lds 2 {younger = [!hk.rt<bf16, 16x64, row>, !hk.staged<bf16, 64x32>]}
    scf.for %k = %c0 to %n step %c1 {
      hk.barrier
    } {hk.unroll = 2 : i64}
    return
  }
}

// -----

// Gathers and scatters take the tensor's divisor as copies do: rows of 16-byte multiples move in
// 16-byte pieces, with no element path compiled beside them.
// CHECK-LABEL: hk_kernel_indexed
// CHECK: hk::gather_rows<64>({{t[0-9]+}}, {{v[0-9]+}}, {{t[0-9]+}}, {{c[0-9]+}});
// CHECK: hk::scatter_rows<1>({{v[0-9]+}}, {{t[0-9]+}}, {{t[0-9]+}}, {{c[0-9]+}});
module {
  func.func @indexed(%a: !hk.gl<bf16, div 64>, %i: !hk.gl<i32>, %o: !hk.gl<bf16>) attributes {hk.kernel} {
    %c0 = arith.constant 0 : index
    %c = hk.tile_coord %c0, %c0, %c0, %c0
    %ids = hk.load %i[%c] : !hk.gl<i32> -> !hk.rv<i32, 16, col>
    hk.wait_vm 0 for %ids : !hk.rv<i32, 16, col>
    %g = hk.gather %a[%c] rows %ids : !hk.gl<bf16, div 64>, !hk.rv<i32, 16, col> -> !hk.rt<bf16, 16x64, row>
    hk.wait_vm 0 for %g : !hk.rt<bf16, 16x64, row>
    hk.scatter %g, %o[%c] rows %ids : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>, !hk.rv<i32, 16, col>
    return
  }
}

// -----

// A finite narrowing is its own copy (no NaN test where bf16 rounds in integer arithmetic).
// CHECK-LABEL: hk_kernel_finite
// CHECK: hk::copy_finite([[P:t[0-9]+]], {{t[0-9]+}});
// CHECK: hk::copy({{t[0-9]+}}, {{t[0-9]+}});
module {
  func.func @finite(%a: !hk.gl<f32>, %o: !hk.gl<bf16>) attributes {hk.kernel} {
    %c0 = arith.constant 0 : index
    %c = hk.tile_coord %c0, %c0, %c0, %c0
    %t = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 16x16, row>
    hk.wait_vm 0 for %t : !hk.rt<f32, 16x16, row>
    %p = hk.cast %t finite : !hk.rt<f32, 16x16, row> -> !hk.rt<bf16, 16x16, col>
    %q = hk.cast %t : !hk.rt<f32, 16x16, row> -> !hk.rt<bf16, 16x16, col>
    %s = hk.binary add %p, %q : !hk.rt<bf16, 16x16, col>, !hk.rt<bf16, 16x16, col>
    hk.store %s, %o[%c] : !hk.rt<bf16, 16x16, col>, !hk.gl<bf16>
    return
  }
}

// -----

// A vector tied to tiles of two distributions (an fp32 tile's row maximum, converted, subtracted
// from a bf16 tile) takes the first in program order, whatever the values' addresses; the tile
// library redistributes it for the other.
// CHECK-LABEL: hk_kernel_two_dists({{.*}}) {
// CHECK: hk::col_vec<hk::rt<float, 16, 32, hk::row_l>, float> [[M:t[0-9]+]];
// CHECK: hk::row_max([[M]], {{t[0-9]+}});
// CHECK: hk::col_vec<hk::rt<float, 16, 32, hk::row_l>, hk::bf16> [[MB:t[0-9]+]];
// CHECK: hk::sub_row({{t[0-9]+}}, {{t[0-9]+}}, [[MB]]);
module {
  func.func @two_dists(%a: !hk.gl<f32>, %c: !hk.coord) attributes {hk.kernel, hk.warps = 1 : i32} {
    %s = hk.load %a[%c] : !hk.gl<f32> -> !hk.rt<f32, 16x32, row>
    hk.wait_vm 0 for %s : !hk.rt<f32, 16x32, row>
    %m = hk.reduce max %s : !hk.rt<f32, 16x32, row> -> !hk.rv<f32, 16, col>
    %p = hk.cast %s : !hk.rt<f32, 16x32, row> -> !hk.rt<bf16, 16x32, row>
    %mb = hk.cast %m : !hk.rv<f32, 16, col> -> !hk.rv<bf16, 16, col>
    %d = hk.broadcast_binary sub %p, %mb : !hk.rt<bf16, 16x32, row>, !hk.rv<bf16, 16, col>
    %f = hk.cast %d : !hk.rt<bf16, 16x32, row> -> !hk.rt<f32, 16x32, row>
    hk.store %f, %a[%c] : !hk.rt<f32, 16x32, row>, !hk.gl<f32>
    return
  }
}

// -----

// Each 8-bit float type is its own tile-library type (one format on every target): OCP
// f8E4M3FN / f8E5M2 and FNUZ f8E4M3FNUZ / f8E5M2FNUZ.
// CHECK-LABEL: hk_kernel_fp8_types(hk::gl<hk::fp8e4m3> {{v[0-9]+}}, hk::gl<hk::fp8e5m2> {{v[0-9]+}}, hk::gl<hk::fp8e4m3fnuz> {{v[0-9]+}}, hk::gl<hk::fp8e5m2fnuz> {{v[0-9]+}}) {
func.func @fp8_types(%a: !hk.gl<f8E4M3FN>, %b: !hk.gl<f8E5M2>, %c: !hk.gl<f8E4M3FNUZ>, %d: !hk.gl<f8E5M2FNUZ>) attributes {hk.kernel, hk.warps = 1 : i32} {
  return
}

// -----

// A read hk-scalar-reads marked goes through the scalar cache; the others stay global loads.
// CHECK-LABEL: // kernel scalar_reads:
// CHECK: hk_kernel_scalar_reads(hk::gl<int32_t> [[T:v[0-9]+]], hk::gl<int32_t> [[O:v[0-9]+]]) {
// CHECK: const int32_t {{v[0-9]+}} = hk::load_scalar_cached([[T]], {{.*}});
// CHECK-NEXT: const int32_t {{v[0-9]+}} = hk::load_scalar([[O]], {{.*}});
module {
  func.func @scalar_reads(%t: !hk.gl<i32>, %o: !hk.gl<i32>) attributes {hk.kernel, hk.warps = 1 : i32} {
    %c0 = arith.constant 0 : index
    %s = hk.load_scalar %t[%c0, %c0, %c0, %c0] {scalar_cache} : !hk.gl<i32> -> i32
    %n = hk.load_scalar %o[%c0, %c0, %c0, %c0] : !hk.gl<i32> -> i32
    %sum = arith.addi %s, %n : i32
    hk.store_scalar %sum, %o[%c0, %c0, %c0, %c0] : i32, !hk.gl<i32>
    return
  }
}
