//===- HKTypes.td - types of the hk dialect --------------------*- tablegen -*-===//

#ifndef HK_TYPES_TD
#define HK_TYPES_TD

include "hk/HKDialect.td"
include "hk/HKEnums.td"
include "mlir/IR/AttrTypeBase.td"

class HK_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<HK_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def HK_RegisterTileType : HK_Type<"RegisterTile", "rt"> {
  let summary = "a register tile owned by one wave";
  let description = [{
    A `rows` x `cols` tile of `elementType` spread over the lanes of one wave. `rows` and
    `cols` are multiples of 16, the base tile of every target's matrix instructions. The layout
    says how elements map to lanes (`row`: each lane holds runs along a row, the layout 16-bit
    operands must have to be read from LDS with 128-bit loads; `col`: runs along a column).
    The role is the operand the tile feeds in an MMA (`a`, `b`, `c`), set by the fragments
    pass; it is omitted while unknown. `i1` tiles are masks.

    ```mlir
    !hk.rt<bf16, 16x64, row>
    !hk.rt<f32, 16x16, row, c>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType, "int64_t":$rows, "int64_t":$cols,
                        "::mlir::hk::Layout":$layout, "::mlir::hk::Role":$role);
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$elementType, "int64_t":$rows,
        "int64_t":$cols, "::mlir::hk::Layout":$layout,
        CArg<"::mlir::hk::Role", "::mlir::hk::Role::none">:$role), [{
      return $_get(elementType.getContext(), elementType, rows, cols, layout, role);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumElements() const { return getRows() * getCols(); }
    /// The same tile with another role.
    RegisterTileType withRole(::mlir::hk::Role role) const {
      return get(getContext(), getElementType(), getRows(), getCols(), getLayout(), role);
    }
    /// The same shape and layout with another element type (and no role).
    RegisterTileType withElementType(::mlir::Type type) const {
      return get(getContext(), type, getRows(), getCols(), getLayout(), ::mlir::hk::Role::none);
    }
  }];
}

def HK_RegisterVectorType : HK_Type<"RegisterVector", "rv"> {
  let summary = "a register vector of a tile, owned by one wave";
  let description = [{
    `length` elements of `elementType` belonging to a register tile's rows or columns. A `col`
    vector holds one element per row of a tile (a row reduction yields one); a `row` vector
    holds one element per column.

    ```mlir
    !hk.rv<f32, 16, col>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType, "int64_t":$length,
                        "::mlir::hk::VecAxis":$axis);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def HK_SharedTileType : HK_Type<"SharedTile", "st"> {
  let summary = "a tile in LDS, shared by the workgroup";
  let description = [{
    A `rows` x `cols` tile of `elementType` in LDS, with `buffers` copies for multi-buffering.
    Each buffer takes rows * cols * sizeof(element) bytes (the tile library swizzles instead of
    padding).

    ```mlir
    !hk.st<bf16, 64x64, 2>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType, "int64_t":$rows, "int64_t":$cols,
                        "int64_t":$buffers);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of one buffer.
    int64_t getBufferBytes() const;
    /// Bytes of all buffers.
    int64_t getBytes() const { return getBufferBytes() * getBuffers(); }
  }];
}

def HK_SharedVectorType : HK_Type<"SharedVector", "sv"> {
  let summary = "a vector in LDS, shared by the workgroup";
  let description = [{
    ```mlir
    !hk.sv<f32, 64, 1>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType, "int64_t":$length, "int64_t":$buffers);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getBufferBytes() const;
    int64_t getBytes() const { return getBufferBytes() * getBuffers(); }
  }];
}

def HK_GlobalType : HK_Type<"Global", "gl"> {
  let summary = "a 4-D view of global memory with runtime extents";
  let description = [{
    A kernel parameter: a tensor in global memory seen as (batch, depth, rows, cols), with
    runtime extents and strides and unit stride along cols.

    `divisor` is what is known of the tensor when the kernel is compiled: its cols and every
    stride are multiples of `divisor` elements and its data address is aligned to `divisor`
    elements (a power of two; 1, the default, when nothing is known). The launcher compiles one
    specialization per divisor the tensors it is given have, so a kernel reads 16-byte rows with
    16-byte loads and leaves out column checks a whole tile does not need.

    ```mlir
    !hk.gl<bf16>
    !hk.gl<bf16, div 64>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType, DefaultValuedParameter<"int64_t", "1">:$divisor);
  let assemblyFormat = "`<` $elementType (`,` `div` $divisor^)? `>`";
  let genVerifyDecl = 1;
}

def HK_StagedTileType : HK_Type<"StagedTile", "staged"> {
  let summary = "a workgroup copy of a shared tile, in flight in registers";
  let description = [{
    What `hk.copy_issue` reads from global memory for `hk.copy_commit` to write into LDS: a
    `rows` x `cols` tile of `elementType` spread over every thread of the workgroup, each
    holding its share (16-byte chunks). It is in flight on the vector-memory counter until a
    `hk.wait_vm` covers it.

    ```mlir
    !hk.staged<bf16, 128x32>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType, "int64_t":$rows, "int64_t":$cols);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of the whole tile.
    int64_t getBytes() const;
  }];
}

def HK_CoordType : HK_Type<"Coord", "coord"> {
  let summary = "a tile coordinate (batch, depth, row, col) in units of the tile it indexes";
}

#endif // HK_TYPES_TD
