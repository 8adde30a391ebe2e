//===- HKOps.td - operations of the hk dialect -----------------*- tablegen -*-===//

#ifndef HK_OPS_TD
#define HK_OPS_TD

include "hk/HKDialect.td"
include "hk/HKEnums.td"
include "hk/HKTypes.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class HK_Op<string mnemonic, list<Trait> traits = []> : Op<HK_Dialect, mnemonic, traits>;

def HK_AnyRegister : AnyTypeOf<[HK_RegisterTileType, HK_RegisterVectorType]>;
def HK_Guardable : AnyTypeOf<[HK_RegisterTileType, HK_RegisterVectorType, HK_StagedTileType]>;
def HK_AnyShared : AnyTypeOf<[HK_SharedTileType, HK_SharedVectorType]>;
def HK_Scalar : AnyTypeOf<[AnyFloat, AnySignlessInteger, Index]>;
def HK_RegisterOrScalar : AnyTypeOf<[HK_RegisterTileType, HK_RegisterVectorType, AnyFloat,
                                     AnySignlessInteger, Index]>;

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

def HK_BlockIdxOp : HK_Op<"block_idx", [Pure]> {
  let summary = "the workgroup's index along a grid dimension";
  let description = [{
    ```mlir
    %x = hk.block_idx x
    ```
  }];
  let arguments = (ins HK_Dim:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

def HK_GridDimOp : HK_Op<"grid_dim", [Pure]> {
  let summary = "the number of workgroups along a grid dimension";
  let description = [{
    ```mlir
    %n = hk.grid_dim y
    ```
  }];
  let arguments = (ins HK_Dim:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

def HK_WarpIdOp : HK_Op<"warp_id", [Pure]> {
  let summary = "the index of the running wave within its workgroup";
  let description = [{
    Differs between the waves of a workgroup: control flow that depends on it is divergent,
    and workgroup-wide operations must not sit under it.

    ```mlir
    %w = hk.warp_id
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def HK_LaneIdOp : HK_Op<"lane_id", [Pure]> {
  let summary = "the index of the running lane within its wave";
  let description = [{
    ```mlir
    %l = hk.lane_id
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def HK_NumWarpsOp : HK_Op<"num_warps", [Pure]> {
  let summary = "the number of waves in the workgroup (the kernel's hk.warps)";
  let description = [{
    ```mlir
    %n = hk.num_warps
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def HK_ExtentOp : HK_Op<"extent", [Pure]> {
  let summary = "a runtime extent of a global view";
  let description = [{
    ```mlir
    %rows = hk.extent rows %a : !hk.gl<bf16>
    ```
  }];
  let arguments = (ins HK_Extent:$dim, HK_GlobalType:$src);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim $src attr-dict `:` qualified(type($src))";
}

def HK_TileCoordOp : HK_Op<"tile_coord", [Pure]> {
  let summary = "a tile coordinate (batch, depth, row, col)";
  let description = [{
    Row and column are in units of the tile the coordinate indexes: row `r` of a 16-row tile
    is rows 16r to 16r+15 of the tensor.

    ```mlir
    %idx = hk.tile_coord %b, %d, %r, %c
    ```
  }];
  let arguments = (ins Index:$batch, Index:$depth, Index:$row, Index:$col);
  let results = (outs HK_CoordType:$result);
  let assemblyFormat = "$batch `,` $depth `,` $row `,` $col attr-dict";
}

//===----------------------------------------------------------------------===//
// Global memory
//===----------------------------------------------------------------------===//

def HK_LoadOp : HK_Op<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "load a register tile or vector from global memory";
  let description = [{
    Reads the tile at `coord` (in units of the result's shape). Elements outside the tensor's
    extents read as zero, so ragged edges need no special case. The load is in flight on the
    vector-memory counter until a `hk.wait_vm` covers it.

    ```mlir
    %t = hk.load %a[%idx] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
    ```
  }];
  let arguments = (ins HK_GlobalType:$src, HK_CoordType:$coord);
  let results = (outs HK_AnyRegister:$result);
  let assemblyFormat = "$src `[` $coord `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def HK_StoreOp : HK_Op<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "store a register tile or vector to global memory";
  let description = [{
    Writes the tile at `coord`; elements outside the tensor's extents are not written.

    ```mlir
    hk.store %t, %o[%idx] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
    ```
  }];
  let arguments = (ins HK_AnyRegister:$value, HK_GlobalType:$dst, HK_CoordType:$coord);
  let assemblyFormat = "$value `,` $dst `[` $coord `]` attr-dict `:` qualified(type($value)) `,` qualified(type($dst))";
  let hasVerifier = 1;
}

def HK_GatherOp : HK_Op<"gather", [MemoryEffects<[MemRead]>]> {
  let summary = "load the rows of a tile from row indices";
  let description = [{
    Row `i` of the result is row `rows[i]` of the tensor, in batch and depth of `coord` and in
    the column tile `coord` names; the row part of `coord` is ignored. A negative index reads
    zeros.

    ```mlir
    %t = hk.gather %table[%idx] rows %ids : !hk.gl<bf16>, !hk.rv<i32, 16, col> -> !hk.rt<bf16, 16x64, row>
    ```
  }];
  let arguments = (ins HK_GlobalType:$src, HK_CoordType:$coord, HK_RegisterVectorType:$rowIds);
  let results = (outs HK_RegisterTileType:$result);
  let assemblyFormat = [{
    $src `[` $coord `]` `rows` $rowIds attr-dict `:` qualified(type($src)) `,` qualified(type($rowIds)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def HK_ScatterOp : HK_Op<"scatter", [MemoryEffects<[MemWrite]>]> {
  let summary = "store the rows of a tile to row indices";
  let description = [{
    Row `i` of `value` goes to row `rows[i]` of the tensor; a negative index drops the row
    (padding slots of a KV cache write, for instance).

    ```mlir
    hk.scatter %t, %cache[%idx] rows %slots : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>, !hk.rv<i32, 16, col>
    ```
  }];
  let arguments = (ins HK_RegisterTileType:$value, HK_GlobalType:$dst, HK_CoordType:$coord,
                       HK_RegisterVectorType:$rowIds);
  let assemblyFormat = [{
    $value `,` $dst `[` $coord `]` `rows` $rowIds attr-dict `:` qualified(type($value)) `,` qualified(type($dst)) `,` qualified(type($rowIds))
  }];
  let hasVerifier = 1;
}

def HK_LoadScalarOp : HK_Op<"load_scalar", [MemoryEffects<[MemRead]>]> {
  let summary = "load one element of a global view";
  let description = [{
    With `scalar_cache` (set by hk-scalar-reads, for tensors the kernel never writes) the
    element is read through the scalar cache: one scalar load that the kernel's vector loads
    in flight do not wait behind.

    ```mlir
    %v = hk.load_scalar %a[%b, %d, %r, %c] : !hk.gl<f32> -> f32
    %s = hk.load_scalar %t[%b, %d, %r, %c] {scalar_cache} : !hk.gl<i32> -> i32
    ```
  }];
  let arguments = (ins HK_GlobalType:$src, Variadic<Index>:$indices, UnitAttr:$scalar_cache);
  let results = (outs HK_Scalar:$result);
  let assemblyFormat = "$src `[` $indices `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def HK_StoreScalarOp : HK_Op<"store_scalar", [MemoryEffects<[MemWrite]>]> {
  let summary = "store one element of a global view";
  let description = [{
    ```mlir
    hk.store_scalar %v, %a[%b, %d, %r, %c] : f32, !hk.gl<f32>
    ```
  }];
  let arguments = (ins HK_Scalar:$value, HK_GlobalType:$dst, Variadic<Index>:$indices);
  let assemblyFormat = "$value `,` $dst `[` $indices `]` attr-dict `:` qualified(type($value)) `,` qualified(type($dst))";
  let hasVerifier = 1;
}

def HK_AtomicAddOp : HK_Op<"atomic_add", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "atomically add to one element of a global view";
  let description = [{
    Once per wave: like every hk operation it acts for the whole wave, so a counter bumped by
    `n` waves grows by `n`, not by `n` times the wave size.

    ```mlir
    hk.atomic_add %v, %a[%b, %d, %r, %c] : f32, !hk.gl<f32>
    ```
  }];
  let arguments = (ins HK_Scalar:$value, HK_GlobalType:$dst, Variadic<Index>:$indices);
  let assemblyFormat = "$value `,` $dst `[` $indices `]` attr-dict `:` qualified(type($value)) `,` qualified(type($dst))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// LDS
//===----------------------------------------------------------------------===//

def HK_LdsAllocOp : HK_Op<"lds_alloc", [MemoryEffects<[MemAlloc]>]> {
  let summary = "allocate a shared tile or vector in LDS";
  let description = [{
    Workgroup-wide: every wave gets the same allocation. The LDS allocation pass assigns the
    byte `offset`; allocations must not sit in loops or under divergent control flow.

    ```mlir
    %s = hk.lds_alloc : !hk.st<bf16, 64x64, 2>
    %s = hk.lds_alloc {offset = 0 : i64} : !hk.st<bf16, 64x64, 2>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs HK_AnyShared:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def HK_SubtileOp : HK_Op<"subtile", [Pure]> {
  let summary = "a view of one tile of one buffer of a shared tile";
  let description = [{
    The (`row`, `col`) tile of the result's shape within buffer `buffer` of `src`.

    ```mlir
    %q = hk.subtile %s[%buf, %i, %j] : !hk.st<bf16, 64x64, 2> -> !hk.st<bf16, 16x64, 1>
    ```
  }];
  let arguments = (ins HK_SharedTileType:$src, Index:$buffer, Index:$row, Index:$col);
  let results = (outs HK_SharedTileType:$result);
  let assemblyFormat = [{
    $src `[` $buffer `,` $row `,` $col `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def HK_LdsLoadOp : HK_Op<"lds_load", [MemoryEffects<[MemRead]>]> {
  let summary = "load a register tile or vector from LDS";
  let description = [{
    Reads buffer `buffer` of a shared tile (or vector) into registers. In flight on the LDS
    counter until a `hk.wait_lds` covers it. 16-bit tiles in `col` layout take eight times the
    instructions of `row` layout; the fragments pass flags them.

    ```mlir
    %t = hk.lds_load %s[%buf] : !hk.st<bf16, 64x64, 2> -> !hk.rt<bf16, 64x64, row>
    ```
  }];
  let arguments = (ins HK_AnyShared:$src, Index:$buffer);
  let results = (outs HK_AnyRegister:$result);
  let assemblyFormat = "$src `[` $buffer `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def HK_LdsStoreOp : HK_Op<"lds_store", [MemoryEffects<[MemWrite]>]> {
  let summary = "store a register tile or vector to LDS";
  let description = [{
    In flight on the LDS counter until a `hk.wait_lds` covers it; a barrier must not be
    reached with it in flight.

    ```mlir
    hk.lds_store %t, %s[%buf] : !hk.rt<bf16, 64x64, row>, !hk.st<bf16, 64x64, 2>
    ```
  }];
  let arguments = (ins HK_AnyRegister:$value, HK_AnyShared:$dst, Index:$buffer);
  let assemblyFormat = "$value `,` $dst `[` $buffer `]` attr-dict `:` qualified(type($value)) `,` qualified(type($dst))";
  let hasVerifier = 1;
}

def HK_CopyToLdsOp : HK_Op<"copy_to_lds", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "workgroup copy of a tile from global memory into LDS";
  let description = [{
    All waves of the workgroup cooperate. On CDNA targets with asynchronous global-to-LDS
    loads the copy is in flight on the vector-memory counter; the translation follows it by
    its `vmcnt` wait before the next barrier.

    ```mlir
    hk.copy_to_lds %a[%idx], %s[%buf] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 2>
    ```
  }];
  let arguments = (ins HK_GlobalType:$src, HK_CoordType:$coord, HK_SharedTileType:$dst,
                       Index:$buffer);
  let assemblyFormat = [{
    $src `[` $coord `]` `,` $dst `[` $buffer `]` attr-dict `:` qualified(type($src)) `,` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def HK_CopyIssueOp : HK_Op<"copy_issue", [MemoryEffects<[MemRead]>]> {
  let summary = "start a workgroup copy of a tile from global memory into LDS: the loads";
  let description = [{
    All waves of the workgroup read their share of the tile at `coord` (in units of the
    result's shape) into registers; `hk.copy_commit` later writes it into a shared tile. The
    loads are in flight on the vector-memory counter until a `hk.wait_vm` covers the result, so
    computing between the two overlaps the copy. Rows and columns past the tensor's edge read
    as zero, as `hk.copy_to_lds` has them.

    ```mlir
    %next = hk.copy_issue %a[%idx] : !hk.gl<bf16, div 64> -> !hk.staged<bf16, 128x32>
    ```
  }];
  let arguments = (ins HK_GlobalType:$src, HK_CoordType:$coord);
  let results = (outs HK_StagedTileType:$result);
  let assemblyFormat = "$src `[` $coord `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def HK_CopyCommitOp : HK_Op<"copy_commit", [MemoryEffects<[MemWrite]>]> {
  let summary = "finish a workgroup copy: write a staged tile into a buffer of a shared tile";
  let description = [{
    The LDS writes are in flight on the LDS counter; a barrier must not be reached before they
    complete (the waits pass derives the wait), after which every wave may read the tile. With
    `transpose` the staged R x C tile is written transposed into a C x R shared tile (one 16-bit
    write per element): an operand stored the other way round is then read in row layout.

    ```mlir
    hk.copy_commit %next, %s[%buf] : !hk.staged<bf16, 128x32>, !hk.st<bf16, 128x32, 2>
    hk.copy_commit %v, %vt[%buf] transpose : !hk.staged<bf16, 64x128>, !hk.st<bf16, 128x64, 2>
    ```
  }];
  let arguments = (ins HK_StagedTileType:$value, HK_SharedTileType:$dst, Index:$buffer,
                       UnitAttr:$transpose);
  let assemblyFormat = [{
    $value `,` $dst `[` $buffer `]` (`transpose` $transpose^)? attr-dict `:` qualified(type($value)) `,` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def HK_CopyFromLdsOp : HK_Op<"copy_from_lds", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "workgroup copy of a tile from LDS to global memory";
  let description = [{
    ```mlir
    hk.copy_from_lds %s[%buf], %o[%idx] : !hk.st<bf16, 64x64, 2>, !hk.gl<bf16>
    ```
  }];
  let arguments = (ins HK_SharedTileType:$src, Index:$buffer, HK_GlobalType:$dst,
                       HK_CoordType:$coord);
  let assemblyFormat = [{
    $src `[` $buffer `]` `,` $dst `[` $coord `]` attr-dict `:` qualified(type($src)) `,` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Waits, barriers and scheduling
//===----------------------------------------------------------------------===//

class HK_WaitOp<string mnemonic, string counter> : HK_Op<mnemonic> {
  let summary = "wait until at most `count` " # counter # " operations are in flight";
  let description = [{
    `count` counts hk operations. The values listed after `for` are the ones whose loads this
    wait completes; the translation binds each of them after the wait, so no instruction that
    reads them can be scheduled above it. `younger`, when present, describes operations the
    wait leaves in flight (the type each moves: a register tile, a staged tile, a shared tile):
    the hardware counts instructions, so the translation waits for the instructions those
    operations issue, a lower bound the tile library states per type. Without it the wait waits
    for everything. The waits pass fills both (and derives the wait itself when the kernel
    leaves it out).

    ```mlir
    hk.wait_lds 0 for %a, %b : !hk.rt<bf16, 16x16, row>, !hk.rt<bf16, 16x16, row>
    hk.wait_lds 1 for %a : !hk.rt<bf16, 16x16, row> {younger = [!hk.rt<bf16, 16x16, row>]}
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntNonNegative]>:$count,
                       Variadic<HK_Guardable>:$guarded, OptionalAttr<TypeArrayAttr>:$younger);
  let assemblyFormat = "$count (`for` $guarded^ `:` qualified(type($guarded)))? attr-dict";
}

def HK_WaitLdsOp : HK_WaitOp<"wait_lds", "LDS (lgkm)">;
def HK_WaitVmOp : HK_WaitOp<"wait_vm", "vector-memory (vm)">;

def HK_BarrierOp : HK_Op<"barrier"> {
  let summary = "workgroup barrier";
  let description = [{
    All waves of the workgroup meet; LDS writes issued before it are visible after it. It
    must not sit under divergent control flow, and no LDS write may be in flight when it is
    reached.

    ```mlir
    hk.barrier
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def HK_SchedBarrierOp : HK_Op<"sched_barrier"> {
  let summary = "scheduling hint: what the compiler may move across this point";
  let description = [{
    `mask` is the AMDGPU sched_barrier mask (0: nothing crosses).

    ```mlir
    hk.sched_barrier 0
    ```
  }];
  let arguments = (ins I32Attr:$mask);
  let assemblyFormat = "$mask attr-dict";
}

def HK_SetPrioOp : HK_Op<"set_prio"> {
  let summary = "scheduling hint: the wave's issue priority (0-3)";
  let description = [{
    ```mlir
    hk.set_prio 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<3>]>:$priority);
  let assemblyFormat = "$priority attr-dict";
}

//===----------------------------------------------------------------------===//
// Matrix multiply
//===----------------------------------------------------------------------===//

def HK_MmaOp : HK_Op<"mma", [Pure, AllTypesMatch<["c", "result"]>]> {
  let summary = "matrix multiply-accumulate on register tiles: D = op(A) op(B) + C";
  let description = [{
    `AB`: A is MxK, B is KxN. `ABt`: B is stored NxK. `AtB`: A is stored KxM. `AtBt`: both.
    The accumulator and result are fp32 (i32 for 8-bit integer operands) MxN tiles. The
    operand dtype and the instruction shape must be ones the target's matrix cores have.

    ```mlir
    %d = hk.mma ABt %a, %b, %c : !hk.rt<bf16, 16x32, row>, !hk.rt<bf16, 16x32, row>, !hk.rt<f32, 16x16, row>
    ```
  }];
  let arguments = (ins HK_MmaKind:$kind, HK_RegisterTileType:$a, HK_RegisterTileType:$b,
                       HK_RegisterTileType:$c);
  let results = (outs HK_RegisterTileType:$result);
  let assemblyFormat = "$kind $a `,` $b `,` $c attr-dict `:` qualified(type($a)) `,` qualified(type($b)) `,` qualified(type($c))";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool transposesA() { return getKind() == MmaKind::AtB || getKind() == MmaKind::AtBt; }
    bool transposesB() { return getKind() == MmaKind::ABt || getKind() == MmaKind::AtBt; }
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def HK_UnaryOp : HK_Op<"unary", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise unary function of a register tile or vector";
  let description = [{
    ```mlir
    %e = hk.unary exp %t : !hk.rt<f32, 16x64, row>
    ```
  }];
  let arguments = (ins HK_UnaryFn:$fn, HK_AnyRegister:$x);
  let results = (outs HK_AnyRegister:$result);
  let assemblyFormat = "$fn $x attr-dict `:` qualified(type($x))";
  let hasVerifier = 1;
}

def HK_BinaryOp : HK_Op<"binary", [Pure, AllTypesMatch<["lhs", "result"]>]> {
  let summary = "elementwise binary function of register tiles or vectors, or with a scalar";
  let description = [{
    `rhs` is a tile or vector of the same shape and element type as `lhs`, or a scalar that
    every element is combined with.

    ```mlir
    %s = hk.binary add %a, %b : !hk.rt<bf16, 16x64, row>, !hk.rt<bf16, 16x64, row>
    %h = hk.binary mul %a, %half : !hk.rt<f32, 16x64, row>, f32
    ```
  }];
  let arguments = (ins HK_BinaryFn:$fn, HK_AnyRegister:$lhs, HK_RegisterOrScalar:$rhs);
  let results = (outs HK_AnyRegister:$result);
  let assemblyFormat = "$fn $lhs `,` $rhs attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs))";
  let hasVerifier = 1;
}

def HK_CmpOp : HK_Op<"cmp", [Pure]> {
  let summary = "elementwise comparison producing a mask tile";
  let description = [{
    ```mlir
    %m = hk.cmp gt %t, %zero : !hk.rt<f32, 16x64, row>, f32 -> !hk.rt<i1, 16x64, row>
    ```
  }];
  let arguments = (ins HK_CmpPredicate:$predicate, HK_RegisterTileType:$lhs,
                       HK_RegisterOrScalar:$rhs);
  let results = (outs HK_RegisterTileType:$result);
  let assemblyFormat = [{
    $predicate $lhs `,` $rhs attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def HK_SelectOp : HK_Op<"select", [Pure, AllTypesMatch<["trueValue", "falseValue", "result"]>]> {
  let summary = "elementwise choice between two tiles under a mask";
  let description = [{
    ```mlir
    %r = hk.select %m, %a, %b : !hk.rt<i1, 16x64, row>, !hk.rt<f32, 16x64, row>
    ```
  }];
  let arguments = (ins HK_RegisterTileType:$mask, HK_RegisterTileType:$trueValue,
                       HK_RegisterTileType:$falseValue);
  let results = (outs HK_RegisterTileType:$result);
  let assemblyFormat = [{
    $mask `,` $trueValue `,` $falseValue attr-dict `:` qualified(type($mask)) `,` qualified(type($trueValue))
  }];
  let hasVerifier = 1;
}

def HK_BroadcastBinaryOp : HK_Op<"broadcast_binary", [Pure, AllTypesMatch<["tile", "result"]>]> {
  let summary = "combine every row (or column) of a tile with one element of a vector";
  let description = [{
    With a `col` vector (one element per row), row `i` of the tile is combined with
    `vec[i]` (HipKittens' sub_row and friends); with a `row` vector, column `j` with `vec[j]`.

    ```mlir
    %r = hk.broadcast_binary sub %t, %max : !hk.rt<f32, 16x64, row>, !hk.rv<f32, 16, col>
    ```
  }];
  let arguments = (ins HK_BinaryFn:$fn, HK_RegisterTileType:$tile,
                       HK_RegisterVectorType:$vec);
  let results = (outs HK_RegisterTileType:$result);
  let assemblyFormat = "$fn $tile `,` $vec attr-dict `:` qualified(type($tile)) `,` qualified(type($vec))";
  let hasVerifier = 1;
}

def HK_BroadcastOp : HK_Op<"broadcast", [Pure]> {
  let summary = "a tile whose rows (or columns) repeat a vector's elements";
  let description = [{
    ```mlir
    %t = hk.broadcast %v : !hk.rv<f32, 16, col> -> !hk.rt<f32, 16x64, row>
    ```
  }];
  let arguments = (ins HK_RegisterVectorType:$vec);
  let results = (outs HK_RegisterTileType:$result);
  let assemblyFormat = "$vec attr-dict `:` qualified(type($vec)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fills, masks, indices
//===----------------------------------------------------------------------===//

def HK_FillOp : HK_Op<"fill", [Pure]> {
  let summary = "a register tile or vector with every element equal to `value`";
  let description = [{
    ```mlir
    %z = hk.fill(0.000000e+00) : !hk.rt<f32, 16x16, row>
    %m = hk.fill(0xFF800000) : !hk.rv<f32, 16, col>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs HK_AnyRegister:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def HK_MaskOp : HK_Op<"mask", [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "set the elements outside a triangle to `value`";
  let description = [{
    Element (i, j) of the tile sits at (row0 + i, col0 + j) of the full matrix. `tril` keeps
    col - row <= diagonal, `triu` keeps col - row >= diagonal, `causal` is `tril` with
    diagonal 0. Other elements become `value` (typically -inf before a softmax).

    ```mlir
    %s = hk.mask causal %t, %r0, %c0 {diagonal = 0 : i64, value = 0xFF800000 : f32} : !hk.rt<f32, 16x16, row>
    ```
  }];
  let arguments = (ins HK_MaskKind:$kind, HK_RegisterTileType:$x, Index:$row0, Index:$col0,
                       DefaultValuedAttr<I64Attr, "0">:$diagonal, TypedAttrInterface:$value);
  let results = (outs HK_RegisterTileType:$result);
  let assemblyFormat = "$kind $x `,` $row0 `,` $col0 attr-dict `:` qualified(type($x))";
  let hasVerifier = 1;
}

def HK_IotaOp : HK_Op<"iota", [Pure]> {
  let summary = "an i32 tile holding each element's row (or column) index within the tile";
  let description = [{
    ```mlir
    %rows = hk.iota row : !hk.rt<i32, 16x64, row>
    ```
  }];
  let arguments = (ins HK_TileIndex:$index);
  let results = (outs HK_RegisterTileType:$result);
  let assemblyFormat = "$index attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions, conversions, random numbers
//===----------------------------------------------------------------------===//

def HK_ReduceOp : HK_Op<"reduce", [Pure,
    OptionalTypesMatchWith<"init has the result's type", "result", "init", "$_self">]> {
  let summary = "reduce every row (or column) of a tile to a vector";
  let description = [{
    A `col` result (one element per row) reduces along each row; a `row` result along each
    column. With `init`, the vector is folded into the result.

    ```mlir
    %m = hk.reduce max %t : !hk.rt<f32, 16x64, row> -> !hk.rv<f32, 16, col>
    %s = hk.reduce sum %t init %acc : !hk.rt<f32, 16x64, row> -> !hk.rv<f32, 16, col>
    ```
  }];
  let arguments = (ins HK_ReduceFn:$fn, HK_RegisterTileType:$x,
                       Optional<HK_RegisterVectorType>:$init);
  let results = (outs HK_RegisterVectorType:$result);
  let assemblyFormat = "$fn $x (`init` $init^)? attr-dict `:` qualified(type($x)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def HK_CastOp : HK_Op<"cast", [Pure]> {
  let summary = "convert a register tile or vector to another element type and/or layout";
  let description = [{
    Rounds to nearest even when narrowing floats; converts layouts with cross-lane moves.
    `finite` narrows an f32 tile whose NaNs need not survive (e.g. the exponentials of a
    softmax, whose NaNs reach the sum anyway): on targets that round bf16 in integer arithmetic
    it skips the NaN test, and a NaN may come out as a NaN or a zero.

    ```mlir
    %b = hk.cast %t : !hk.rt<f32, 16x64, row> -> !hk.rt<bf16, 16x64, row>
    %p = hk.cast %e finite : !hk.rt<f32, 16x16, row> -> !hk.rt<bf16, 16x16, col>
    ```
  }];
  let arguments = (ins HK_AnyRegister:$x, UnitAttr:$finite);
  let results = (outs HK_AnyRegister:$result);
  let assemblyFormat = "$x (`finite` $finite^)? attr-dict `:` qualified(type($x)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def HK_TransposeOp : HK_Op<"transpose", [Pure]> {
  let summary = "transpose a register tile";
  let description = [{
    ```mlir
    %t = hk.transpose %x : !hk.rt<bf16, 16x32, row> -> !hk.rt<bf16, 32x16, row>
    ```
  }];
  let arguments = (ins HK_RegisterTileType:$x);
  let results = (outs HK_RegisterTileType:$result);
  let assemblyFormat = "$x attr-dict `:` qualified(type($x)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def HK_RandOp : HK_Op<"rand", [Pure]> {
  let summary = "uniform random floats in [0, 1), the same draws as Triton's tl.rand";
  let description = [{
    Philox 4x32-10 of (`seed`, `offsets`) as Triton computes it, so hk.rand and tl.rand give
    bit-identical floats for the same seed and offsets.

    ```mlir
    %u = hk.rand %seed, %offs : i32, !hk.rt<i32, 16x64, row> -> !hk.rt<f32, 16x64, row>
    ```
  }];
  let arguments = (ins AnySignlessInteger:$seed, HK_RegisterTileType:$offsets);
  let results = (outs HK_RegisterTileType:$result);
  let assemblyFormat = "$seed `,` $offsets attr-dict `:` qualified(type($seed)) `,` qualified(type($offsets)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

#endif // HK_OPS_TD
