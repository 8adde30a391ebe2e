//===- HKDialect.td - the hk dialect ---------------------------*- tablegen -*-===//
//
// The hk dialect: tile-level AMD GPU kernels in the HipKittens model. Register tiles are owned
// by one wave; shared tiles live in LDS; global views are 4-D tensors with runtime extents.
//
//===----------------------------------------------------------------------===//

#ifndef HK_DIALECT_TD
#define HK_DIALECT_TD

include "mlir/IR/DialectBase.td"

def HK_Dialect : Dialect {
  let name = "hk";
  let cppNamespace = "::mlir::hk";
  let summary = "Tile-level AMD GPU kernels: register and shared tiles, MMAs and explicit waits";
  let description = [{
    A kernel is a `func.func` carrying the `hk.kernel` unit attribute and `hk.warps`, the number
    of waves per workgroup. Every wave runs the body; register tiles (`!hk.rt`) and register
    vectors (`!hk.rv`) belong to the wave that computes them. Shared tiles (`!hk.st`) are
    allocated once per workgroup in LDS. Global memory is reached through `!hk.gl` views with
    four runtime extents (batch, depth, rows, cols).

    ```mlir
    func.func @add(%a: !hk.gl<bf16>, %b: !hk.gl<bf16>, %o: !hk.gl<bf16>)
        attributes {hk.kernel, hk.warps = 1 : i32} {
      %z = hk.block_idx z
      %y = hk.block_idx y
      %x = hk.block_idx x
      %c0 = arith.constant 0 : index
      %idx = hk.tile_coord %z, %c0, %y, %x
      %ta = hk.load %a[%idx] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
      %tb = hk.load %b[%idx] : !hk.gl<bf16> -> !hk.rt<bf16, 16x64, row>
      %s = hk.binary add %ta, %tb : !hk.rt<bf16, 16x64, row>, !hk.rt<bf16, 16x64, row>
      hk.store %s, %o[%idx] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
      return
    }
    ```
  }];
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // HK_DIALECT_TD
