//===- HKEnums.td - enumerations of the hk dialect -------------*- tablegen -*-===//

#ifndef HK_ENUMS_TD
#define HK_ENUMS_TD

include "hk/HKDialect.td"
include "mlir/IR/EnumAttr.td"

// Enumerations are plain I32 enum attributes, printed as their bare keyword.
class HK_Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::hk";
}

// How a register tile's elements are spread over a wave's lanes (HipKittens' row_l / col_l).
def HK_Layout : HK_Enum<"Layout", "register tile layout", [
  I32EnumAttrCase<"row", 0>, I32EnumAttrCase<"col", 1>]>;

// The operand a register tile feeds in a matrix instruction, once the fragments pass knows it.
def HK_Role : HK_Enum<"Role", "MMA fragment role", [
  I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"a", 1>, I32EnumAttrCase<"b", 2>,
  I32EnumAttrCase<"c", 3>]>;

// The axis of a register vector: `col` holds one element per row of a tile (a column vector,
// what a row reduction yields); `row` holds one element per column.
def HK_VecAxis : HK_Enum<"VecAxis", "register vector axis", [
  I32EnumAttrCase<"row", 0>, I32EnumAttrCase<"col", 1>]>;

// Which index hk.iota gives each element of a tile.
def HK_TileIndex : HK_Enum<"TileIndex", "element index within a tile", [
  I32EnumAttrCase<"row", 0>, I32EnumAttrCase<"col", 1>]>;

def HK_Dim : HK_Enum<"Dim", "grid dimension", [
  I32EnumAttrCase<"x", 0>, I32EnumAttrCase<"y", 1>, I32EnumAttrCase<"z", 2>]>;

def HK_Extent : HK_Enum<"Extent", "extent of a global view", [
  I32EnumAttrCase<"batch", 0>, I32EnumAttrCase<"depth", 1>, I32EnumAttrCase<"rows", 2>,
  I32EnumAttrCase<"cols", 3>]>;

def HK_UnaryFn : HK_Enum<"UnaryFn", "elementwise unary function", [
  I32EnumAttrCase<"exp", 0>, I32EnumAttrCase<"exp2", 1>, I32EnumAttrCase<"log", 2>,
  I32EnumAttrCase<"log2", 3>, I32EnumAttrCase<"abs", 4>, I32EnumAttrCase<"neg", 5>,
  I32EnumAttrCase<"relu", 6>, I32EnumAttrCase<"gelu", 7>, I32EnumAttrCase<"silu", 8>,
  I32EnumAttrCase<"sqrt", 9>, I32EnumAttrCase<"rsqrt", 10>, I32EnumAttrCase<"round", 11>,
  I32EnumAttrCase<"floor", 12>, I32EnumAttrCase<"sin", 13>, I32EnumAttrCase<"cos", 14>,
  I32EnumAttrCase<"tanh", 15>, I32EnumAttrCase<"sigmoid", 16>, I32EnumAttrCase<"exp2_ftz", 17>]>;

// band .. shr: bitwise, on integer elements only; shifts take the amount modulo the width (the
// hardware's), shr is arithmetic.
def HK_BinaryFn : HK_Enum<"BinaryFn", "elementwise binary function", [
  I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"sub", 1>, I32EnumAttrCase<"mul", 2>,
  I32EnumAttrCase<"div", 3>, I32EnumAttrCase<"max", 4>, I32EnumAttrCase<"min", 5>,
  I32EnumAttrCase<"pow", 6>, I32EnumAttrCase<"band", 7>, I32EnumAttrCase<"bor", 8>,
  I32EnumAttrCase<"bxor", 9>, I32EnumAttrCase<"shl", 10>, I32EnumAttrCase<"shr", 11>]>;

def HK_CmpPredicate : HK_Enum<"CmpPredicate", "elementwise comparison", [
  I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>, I32EnumAttrCase<"lt", 2>,
  I32EnumAttrCase<"le", 3>, I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]>;

def HK_ReduceFn : HK_Enum<"ReduceFn", "reduction", [
  I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>, I32EnumAttrCase<"min", 2>]>;

// D = op(A) * op(B) + C, where t transposes the operand as stored.
def HK_MmaKind : HK_Enum<"MmaKind", "matrix multiply form", [
  I32EnumAttrCase<"AB", 0>, I32EnumAttrCase<"ABt", 1>, I32EnumAttrCase<"AtB", 2>,
  I32EnumAttrCase<"AtBt", 3>]>;

def HK_MaskKind : HK_Enum<"MaskKind", "structural mask", [
  I32EnumAttrCase<"causal", 0>, I32EnumAttrCase<"tril", 1>, I32EnumAttrCase<"triu", 2>]>;

#endif // HK_ENUMS_TD
