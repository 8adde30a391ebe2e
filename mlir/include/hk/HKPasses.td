//===- HKPasses.td - the verifying passes of hk ----------------*- tablegen -*-===//
//
// The passes of hk-kernel-pipeline. Each refuses, before any compiler runs, one class of the
// silent failures of hand-written tile code.
//
//===----------------------------------------------------------------------===//

#ifndef HK_PASSES_TD
#define HK_PASSES_TD

include "mlir/Pass/PassBase.td"

def HKStructure : Pass<"hk-structure", "ModuleOp"> {
  let summary = "check the structure of kernels: uniform workgroup-wide operations, sizes";
  let description = [{
    Workgroup-wide operations (`hk.barrier`, `hk.copy_to_lds`, `hk.copy_from_lds`,
    `hk.lds_alloc`) must be reached by every wave of the workgroup, so they may not sit under
    control flow whose condition or bounds depend on `hk.warp_id` or `hk.lane_id`. LDS is
    allocated once, outside every loop. The workgroup (hk.warps waves of the target's wave
    size) must fit the target's maximum workgroup size.

    ```mlir
    %w = hk.warp_id
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %w, %c0 : index
    scf.if %first {
      hk.barrier   // error: workgroup-wide operation under divergent control flow
    }
    ```
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"gfx1100\"", "target architecture">,
  ];
  let dependentDialects = ["::mlir::hk::HKDialect"];
}

def HKLdsRaces : Pass<"hk-lds-races", "ModuleOp"> {
  let summary = "refuse LDS accesses of different waves that no barrier orders";
  let description = [{
    The waves of a workgroup are ordered only by barriers. Between two `hk.barrier`s, a read
    of LDS that another wave writes, or a write over LDS that another wave reads or writes, is
    a race. The pass compares every LDS access (`hk.lds_load`, `hk.lds_store`, the workgroup
    copies `hk.copy_to_lds`, `hk.copy_commit`, `hk.copy_from_lds`) with the accesses since the
    last barrier, for every pair of different waves of the kernel's `hk.warps`: the allocation,
    the buffer, and the rows and columns of the subtiles, their indices evaluated for each
    wave. Each wave moves a share of a workgroup copy, so a copy races with any other access to
    its buffer. Accesses carried over a loop's back edge are compared as the previous
    iteration made them. A race whatever the indices' values is an error; one the indices
    cannot rule out (they depend on values the pass cannot see through) is a warning.

    ```mlir
    %w = hk.warp_id
    %c3 = arith.constant 3 : index
    %other = arith.subi %c3, %w : index
    hk.copy_to_lds %a[%idx], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 1>
    %v = hk.subtile %s[%c0, %other, %c0] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 16x64, 1>
    // error: reads LDS that another wave writes, with no barrier between them
    %t = hk.lds_load %v[%c0] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
    ```
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"gfx1100\"", "target architecture">,
  ];
  let dependentDialects = ["::mlir::hk::HKDialect"];
}

def HKFragments : Pass<"hk-fragments", "ModuleOp"> {
  let summary = "assign MMA fragment roles; refuse incompatible roles and slow operand layouts";
  let description = [{
    Gives every register tile that feeds an `hk.mma` its fragment role (`a`, `b` or `c`) in its
    type, and refuses a tile used in two roles that need different register layouts. Checks
    that the target's matrix cores have the operation's operand type and shape.

    A 16-bit tile loaded from LDS in `col` layout is read with 16-bit LDS loads, eight times
    the instructions of the 128-bit loads a `row` tile gets: a warning naming the fix
    (store the operand transposed and use the `t` form of the MMA), or an error with
    `strict=true`.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"gfx1100\"", "target architecture">,
    Option<"strict", "strict", "bool", /*default=*/"false",
           "make slow column-layout LDS reads an error instead of a warning">,
  ];
  let dependentDialects = ["::mlir::hk::HKDialect"];
}

def HKLdsAllocation : Pass<"hk-lds-allocation", "ModuleOp"> {
  let summary = "place every LDS allocation at an aligned offset within the target's LDS";
  let description = [{
    Assigns each `hk.lds_alloc` of a kernel a byte `offset`, aligned to 16 bytes (128-bit LDS
    accesses), in program order, and records the total on the kernel as `hk.lds_bytes`. A
    kernel that needs more than the target's LDS is an error that lists every allocation.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"gfx1100\"", "target architecture">,
  ];
  let dependentDialects = ["::mlir::hk::HKDialect"];
}

def HKWaits : Pass<"hk-waits", "ModuleOp"> {
  let summary = "derive or check every wait on the LDS and vector-memory counters";
  let description = [{
    Models the operations in flight on each counter as the hardware counts them, in order:
    `hk.lds_load` and `hk.lds_store` on the LDS counter; `hk.load`, `hk.gather` and, on targets
    with asynchronous global-to-LDS copies, `hk.copy_to_lds` on the vector-memory counter.

    With `derive=true` (the default) a use of a value whose load is in flight gets the
    weakest wait that completes it, and a barrier reached with LDS writes in flight gets the
    wait that drains them. With `derive=false` each of these is an error. Either way: a wait
    that names nothing in flight, a kernel that ends with loads in flight, and a loop whose
    in-flight state does not reach a steady state are errors. Every wait lists the values it
    completes (`for ...`), which the translation binds after it.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"gfx1100\"", "target architecture">,
    Option<"derive", "derive", "bool", /*default=*/"true",
           "insert the waits a kernel leaves out instead of refusing it">,
  ];
  let dependentDialects = ["::mlir::hk::HKDialect"];
}

def HKScalarReads : Pass<"hk-scalar-reads", "ModuleOp"> {
  let summary = "read the tensors a kernel never writes through the scalar cache";
  let description = [{
    A `hk.load_scalar` compiles to a vector load and a wait for every vector load in flight,
    the tile loads just issued included, before the value reaches a scalar register. A read
    through the scalar cache waits for nothing but itself, but that cache does not see the
    kernel's own stores: it is safe only for memory the kernel does not write while it runs.

    The pass gives `scalar_cache` to every `hk.load_scalar` of a tensor argument that no
    operation of the kernel writes (`hk.store`, `hk.scatter`, `hk.store_scalar`,
    `hk.atomic_add`, `hk.copy_from_lds`; any other use of a tensor the pass does not know
    counts as a write). It records on the kernel the arguments so read, `hk.scalar_reads`,
    and the arguments it writes, `hk.writes` (argument numbers), so that a launch can refuse
    a call whose tensors overlap: one argument read through the scalar cache and another,
    over the same memory, written.

    ```mlir
    func.func @k(%tables: !hk.gl<i32>, %o: !hk.gl<f32>) attributes {hk.kernel, hk.warps = 1 : i32} {
      // becomes {scalar_cache}: %tables is never written
      %s = hk.load_scalar %tables[%c0, %c0, %c0, %c0] : !hk.gl<i32> -> i32
      ...
    }
    // the kernel gets hk.scalar_reads = array<i64: 0>, hk.writes = array<i64: 1>
    ```
  }];
  let dependentDialects = ["::mlir::hk::HKDialect"];
}

def HKBudgets : Pass<"hk-budgets", "ModuleOp"> {
  let summary = "refuse kernels whose live register tiles exceed the target's VGPRs";
  let description = [{
    Computes, at every point of a kernel, the VGPRs the live register tiles and vectors take
    per lane (on RDNA3, 16-bit MMA operands take twice: their lanes are duplicated) and
    refuses the kernel when the peak exceeds the budget: the target's VGPRs, or the kernel's
    `hk.max_vgprs` when lower. The error gives the peak, the budget and the largest tiles. A
    peak above the budget less 32 VGPRs is a warning at the kernel: the compiled kernel keeps
    addresses, indices and temporaries in VGPRs too, and may spill.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"gfx1100\"", "target architecture">,
  ];
  let dependentDialects = ["::mlir::hk::HKDialect"];
}

#endif // HK_PASSES_TD
