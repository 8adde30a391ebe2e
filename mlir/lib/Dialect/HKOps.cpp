//===- HKOps.cpp - verifiers of the hk operations ------------------------===//
//
// Every verifier names the operand that is wrong, what was expected and what was found.
//
//===----------------------------------------------------------------------===//

#include "hk/HKDialect.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::hk;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

namespace {
/// Element type and shape of a register or shared value, ignoring layout and role.
struct Shape {
  Type element;
  int64_t rows = 0; // vectors: the length
  int64_t cols = 0; // vectors: 0
  bool isVector = false;
};
} // namespace

static Shape shapeOf(Type type) {
  if (auto rt = dyn_cast<RegisterTileType>(type))
    return {rt.getElementType(), rt.getRows(), rt.getCols(), false};
  if (auto rv = dyn_cast<RegisterVectorType>(type))
    return {rv.getElementType(), rv.getLength(), 0, true};
  if (auto st = dyn_cast<SharedTileType>(type))
    return {st.getElementType(), st.getRows(), st.getCols(), false};
  if (auto sv = dyn_cast<SharedVectorType>(type))
    return {sv.getElementType(), sv.getLength(), 0, true};
  if (auto staged = dyn_cast<StagedTileType>(type))
    return {staged.getElementType(), staged.getRows(), staged.getCols(), false};
  return {};
}

static std::string describeShape(const Shape &s) {
  return s.isVector ? std::to_string(s.rows) : std::to_string(s.rows) + "x" + std::to_string(s.cols);
}

static LogicalResult expectElement(Operation *op, StringRef what, Type expected, Type actual) {
  if (expected != actual)
    return op->emitOpError() << "expected " << what << " element type " << expected << " but got "
                             << actual;
  return success();
}

/// Register and shared values of the same kind (tile or vector), element type and shape.
static LogicalResult expectSameShape(Operation *op, StringRef what, Type expected, Type actual) {
  Shape e = shapeOf(expected), a = shapeOf(actual);
  if (e.isVector != a.isVector)
    return op->emitOpError() << "expected " << what << " to be a " << (e.isVector ? "vector" : "tile")
                             << " like " << expected << " but got " << actual;
  if (e.rows != a.rows || e.cols != a.cols)
    return op->emitOpError() << "expected " << what << " shape " << describeShape(e) << " but got "
                             << describeShape(a);
  return expectElement(op, what, e.element, a.element);
}

static bool isFloat(Type t) { return isa<FloatType>(t); }
// The matrix operand types (bf16, f16, i8 and the fp8 types): laid out as matrix operands,
// unlike every other element type (and masks).
static bool isOperandType(Type t) {
  return t.isBF16() || t.isF16() || t.isSignlessInteger(8) || isa<Float8E4M3FNType, Float8E5M2Type,
         Float8E4M3FNUZType, Float8E5M2FNUZType>(t);
}

static LogicalResult verifyIndices(Operation *op, size_t count) {
  if (count != 4)
    return op->emitOpError() << "expected 4 indices (batch, depth, row, col) but got " << count;
  return success();
}

/// A col vector of i32 row indices with one entry per row of `tile`.
static LogicalResult verifyRowIds(Operation *op, RegisterVectorType ids, RegisterTileType tile) {
  if (!ids.getElementType().isSignlessInteger(32))
    return op->emitOpError() << "expected row indices of element type i32 but got "
                             << ids.getElementType();
  if (ids.getAxis() != VecAxis::col)
    return op->emitOpError() << "expected row indices in a col vector (one per row) but got a row vector";
  if (ids.getLength() != tile.getRows())
    return op->emitOpError() << "expected " << tile.getRows() << " row indices but got "
                             << ids.getLength();
  return success();
}

//===----------------------------------------------------------------------===//
// Global memory
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::verify() {
  if (shapeOf(getType()).element.isSignlessInteger(1))
    return emitOpError() << "cannot load a mask (i1) tile from global memory";
  return expectElement(*this, "result", getSrc().getType().getElementType(),
                       shapeOf(getType()).element);
}

LogicalResult StoreOp::verify() {
  return expectElement(*this, "stored value", getDst().getType().getElementType(),
                       shapeOf(getValue().getType()).element);
}

LogicalResult GatherOp::verify() {
  if (failed(expectElement(*this, "result", getSrc().getType().getElementType(),
                           getType().getElementType())))
    return failure();
  return verifyRowIds(*this, getRowIds().getType(), getType());
}

LogicalResult ScatterOp::verify() {
  if (failed(expectElement(*this, "stored value", getDst().getType().getElementType(),
                           getValue().getType().getElementType())))
    return failure();
  return verifyRowIds(*this, getRowIds().getType(), getValue().getType());
}

LogicalResult LoadScalarOp::verify() {
  if (failed(verifyIndices(*this, getIndices().size())))
    return failure();
  return expectElement(*this, "result", getSrc().getType().getElementType(), getType());
}

LogicalResult StoreScalarOp::verify() {
  if (failed(verifyIndices(*this, getIndices().size())))
    return failure();
  return expectElement(*this, "stored value", getDst().getType().getElementType(),
                       getValue().getType());
}

LogicalResult AtomicAddOp::verify() {
  if (failed(verifyIndices(*this, getIndices().size())))
    return failure();
  Type element = getDst().getType().getElementType();
  if (!element.isF32() && !element.isSignlessInteger(32))
    return emitOpError() << "expected a global view of f32 or i32 for an atomic add but got "
                         << element;
  return expectElement(*this, "added value", element, getValue().getType());
}

//===----------------------------------------------------------------------===//
// LDS
//===----------------------------------------------------------------------===//

LogicalResult LdsAllocOp::verify() {
  if (auto offset = getOffsetAttr(); offset && offset.getInt() < 0)
    return emitOpError() << "expected a non-negative offset but got " << offset.getInt();
  return success();
}

LogicalResult SubtileOp::verify() {
  SharedTileType src = getSrc().getType(), result = getType();
  if (failed(expectElement(*this, "result", src.getElementType(), result.getElementType())))
    return failure();
  if (result.getBuffers() != 1)
    return emitOpError() << "expected a single-buffer result but got " << result.getBuffers()
                         << " buffers";
  if (src.getRows() % result.getRows() || src.getCols() % result.getCols())
    return emitOpError() << "expected a subtile shape dividing " << src.getRows() << "x"
                         << src.getCols() << " but got " << result.getRows() << "x"
                         << result.getCols();
  return success();
}

LogicalResult LdsLoadOp::verify() {
  return expectSameShape(*this, "result", getSrc().getType(), getType());
}

LogicalResult LdsStoreOp::verify() {
  return expectSameShape(*this, "stored value", getDst().getType(), getValue().getType());
}

LogicalResult CopyToLdsOp::verify() {
  return expectElement(*this, "shared tile", getSrc().getType().getElementType(),
                       getDst().getType().getElementType());
}

LogicalResult CopyIssueOp::verify() {
  return expectElement(*this, "staged tile", getSrc().getType().getElementType(),
                       getType().getElementType());
}

LogicalResult CopyCommitOp::verify() {
  if (getDst().getDefiningOp<SubtileOp>())
    return emitOpError() << "expected a shared tile from hk.lds_alloc but got a subtile; commit "
                            "into the whole shared tile";
  if (getTranspose()) {
    StagedTileType v = getValue().getType();
    SharedTileType d = getDst().getType();
    if (v.getRows() != d.getCols() || v.getCols() != d.getRows())
      return emitOpError() << "expected a staged tile of shape " << d.getCols() << "x" << d.getRows()
                           << " to commit transposed but got " << v.getRows() << "x" << v.getCols();
    return expectElement(*this, "staged tile", d.getElementType(), v.getElementType());
  }
  return expectSameShape(*this, "staged tile", getDst().getType(), getValue().getType());
}

LogicalResult CopyFromLdsOp::verify() {
  return expectElement(*this, "global view", getSrc().getType().getElementType(),
                       getDst().getType().getElementType());
}

//===----------------------------------------------------------------------===//
// MMA
//===----------------------------------------------------------------------===//

/// The layout each operand must have for each form, as HipKittens has it: a row-layout tile
/// holds runs of K for A (or of K for B stored transposed), a col-layout tile runs of K down a
/// column.
static Layout requiredLayout(MmaKind kind, bool isA) {
  switch (kind) {
  case MmaKind::AB:
    return isA ? Layout::row : Layout::col;
  case MmaKind::ABt:
    return Layout::row;
  case MmaKind::AtB:
    return Layout::col;
  case MmaKind::AtBt:
    return isA ? Layout::col : Layout::row;
  }
  llvm_unreachable("unknown mma kind");
}

LogicalResult MmaOp::verify() {
  RegisterTileType a = getA().getType(), b = getB().getType(), c = getC().getType();
  int64_t m = transposesA() ? a.getCols() : a.getRows();
  int64_t ka = transposesA() ? a.getRows() : a.getCols();
  int64_t kb = transposesB() ? b.getCols() : b.getRows();
  int64_t n = transposesB() ? b.getRows() : b.getCols();
  StringRef kind = stringifyMmaKind(getKind());
  if (ka != kb)
    return emitOpError() << "expected the reduction dimensions of a and b to agree for " << kind
                         << " but got " << ka << " and " << kb;
  if (c.getRows() != m || c.getCols() != n)
    return emitOpError() << "expected an accumulator of shape " << m << "x" << n << " for " << kind
                         << " but got " << c.getRows() << "x" << c.getCols();
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "expected a and b of the same element type but got "
                         << a.getElementType() << " and " << b.getElementType();
  Type in = a.getElementType();
  bool isInt8 = in.isSignlessInteger(8);
  if (!isInt8 && (!isFloat(in) || in.isF32()))
    return emitOpError() << "expected 16-bit or 8-bit operands (bf16, f16, f8, i8) but got " << in;
  Type acc = c.getElementType();
  if (isInt8 ? !acc.isSignlessInteger(32) : !acc.isF32())
    return emitOpError() << "expected an " << (isInt8 ? "i32" : "f32")
                         << " accumulator for " << in << " operands but got " << acc;
  for (auto [isA, type] : {std::pair{true, a}, std::pair{false, b}}) {
    Layout need = requiredLayout(getKind(), isA);
    if (type.getLayout() != need)
      return emitOpError() << "operand " << (isA ? "a" : "b") << " of mma " << kind << " must be in "
                           << stringifyLayout(need) << " layout but is "
                           << stringifyLayout(type.getLayout());
  }
  if (c.getLayout() != Layout::row)
    return emitOpError() << "expected the accumulator in row layout but got col";
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult UnaryOp::verify() {
  Type element = shapeOf(getX().getType()).element;
  switch (getFn()) {
  case UnaryFn::abs:
  case UnaryFn::neg:
  case UnaryFn::relu:
    if (element.isSignlessInteger(1))
      return emitOpError() << stringifyUnaryFn(getFn()) << " is not defined on masks";
    return success();
  default:
    if (!isFloat(element))
      return emitOpError() << "expected a floating-point operand for " << stringifyUnaryFn(getFn())
                           << " but got " << element;
    return success();
  }
}

/// A scalar combined with every element: a float with a float tile, an integer with an
/// integer tile.
static LogicalResult verifyScalarOperand(Operation *op, Type element, Type scalar) {
  if (isFloat(element) != isFloat(scalar))
    return op->emitOpError() << "expected a " << (isFloat(element) ? "floating-point" : "integer")
                             << " scalar for elements of type " << element << " but got "
                             << scalar;
  return success();
}

static bool isBitwise(BinaryFn fn) {
  return fn == BinaryFn::band || fn == BinaryFn::bor || fn == BinaryFn::bxor || fn == BinaryFn::shl ||
         fn == BinaryFn::shr;
}

LogicalResult BinaryOp::verify() {
  Type lhs = getLhs().getType(), rhs = getRhs().getType();
  if (shapeOf(lhs).element.isSignlessInteger(1))
    return emitOpError() << "arithmetic is not defined on masks";
  if (getFn() == BinaryFn::pow && !isFloat(shapeOf(lhs).element))
    return emitOpError() << "expected a floating-point operand for pow but got "
                         << shapeOf(lhs).element;
  if (isBitwise(getFn()) && !shapeOf(lhs).element.isSignlessInteger(32))
    return emitOpError() << "expected an i32 operand for " << stringifyBinaryFn(getFn()) << " but got "
                         << shapeOf(lhs).element;
  if (isa<RegisterTileType, RegisterVectorType>(rhs))
    return expectSameShape(*this, "rhs", lhs, rhs);
  return verifyScalarOperand(*this, shapeOf(lhs).element, rhs);
}

LogicalResult CmpOp::verify() {
  RegisterTileType lhs = getLhs().getType(), result = getType();
  if (!result.getElementType().isSignlessInteger(1))
    return emitOpError() << "expected an i1 mask result but got element type "
                         << result.getElementType();
  if (result.getRows() != lhs.getRows() || result.getCols() != lhs.getCols())
    return emitOpError() << "expected a mask of shape " << lhs.getRows() << "x" << lhs.getCols()
                         << " but got " << result.getRows() << "x" << result.getCols();
  // A mask is laid out as 32-bit tiles are, which 16- and 8-bit tiles are not.
  if (isOperandType(lhs.getElementType()))
    return emitOpError() << "cannot compare " << lhs.getElementType()
                         << " tiles: a mask is laid out as a 32-bit tile; compare f32 or i32 copies (hk.cast)";
  if (auto rhs = dyn_cast<RegisterTileType>(getRhs().getType()))
    return expectSameShape(*this, "rhs", lhs, rhs);
  if (isa<RegisterVectorType>(getRhs().getType()))
    return emitOpError() << "expected a tile or a scalar rhs but got a vector";
  return verifyScalarOperand(*this, lhs.getElementType(), getRhs().getType());
}

LogicalResult SelectOp::verify() {
  RegisterTileType mask = getMask().getType(), value = getTrueValue().getType();
  if (!mask.getElementType().isSignlessInteger(1))
    return emitOpError() << "expected an i1 mask but got element type " << mask.getElementType();
  if (mask.getRows() != value.getRows() || mask.getCols() != value.getCols())
    return emitOpError() << "expected a mask of shape " << value.getRows() << "x" << value.getCols()
                         << " but got " << mask.getRows() << "x" << mask.getCols();
  if (isOperandType(value.getElementType()))
    return emitOpError() << "cannot select between " << value.getElementType()
                         << " tiles: a mask is laid out as a 32-bit tile; select between f32 or i32 copies (hk.cast)";
  return success();
}

/// A vector that spans `tile`: a col vector has one element per row, a row vector one per column.
static LogicalResult verifyVectorOfTile(Operation *op, RegisterVectorType vec, RegisterTileType tile,
                                        StringRef what) {
  int64_t expected = vec.getAxis() == VecAxis::col ? tile.getRows() : tile.getCols();
  if (vec.getLength() != expected)
    return op->emitOpError() << "expected a " << stringifyVecAxis(vec.getAxis()) << " vector of length "
                             << expected << " for " << what << " of shape " << tile.getRows() << "x"
                             << tile.getCols() << " but got length " << vec.getLength();
  return expectElement(op, "vector", tile.getElementType(), vec.getElementType());
}

LogicalResult BroadcastBinaryOp::verify() {
  if (getFn() == BinaryFn::pow || isBitwise(getFn()))
    return emitOpError() << stringifyBinaryFn(getFn()) << " is not a row or column operation";
  return verifyVectorOfTile(*this, getVec().getType(), getTile().getType(), "a tile");
}

LogicalResult BroadcastOp::verify() {
  return verifyVectorOfTile(*this, getVec().getType(), getType(), "a result");
}

//===----------------------------------------------------------------------===//
// Fills, masks, indices
//===----------------------------------------------------------------------===//

/// `hk.fill(VALUE) : TYPE`: the value is written without its type, which the result's element
/// type gives; the parentheses keep the literal from taking the result type as its own.
/// Special floats use MLIR's hexadecimal bit-pattern form (0xFF800000 is -inf).
ParseResult FillOp::parse(OpAsmParser &parser, OperationState &result) {
  SMLoc loc = parser.getCurrentLocation();
  Attribute raw;
  Type type;
  if (parser.parseLParen() || parser.parseAttribute(raw) || parser.parseRParen() ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColonType(type))
    return failure();
  Type element = shapeOf(type).element;
  if (!element)
    return parser.emitError(loc, "expected a register tile or vector type but got ") << type;
  TypedAttr value;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    if (auto f = dyn_cast<FloatAttr>(raw)) {
      APFloat v = f.getValue();
      bool lost = false;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      value = FloatAttr::get(floatType, v);
    } else if (auto i = dyn_cast<IntegerAttr>(raw)) {
      unsigned width = floatType.getWidth();
      APInt bits = i.getValue().zextOrTrunc(width);
      value = FloatAttr::get(floatType, APFloat(floatType.getFloatSemantics(), bits));
    }
  } else if (auto i = dyn_cast<IntegerAttr>(raw)) {
    value = IntegerAttr::get(element, i.getValue().sextOrTrunc(element.getIntOrFloatBitWidth()));
  }
  if (!value)
    return parser.emitError(loc, "expected a fill value of element type ") << element << " but got "
                                                                           << raw;
  result.addAttribute(getValueAttrName(result.name), value);
  result.addTypes(type);
  return success();
}

void FillOp::print(OpAsmPrinter &printer) {
  printer << "(";
  if (auto f = dyn_cast<FloatAttr>(getValue()))
    printer.printFloat(f.getValue());
  else if (auto i = dyn_cast<IntegerAttr>(getValue()))
    printer << i.getValue();
  else
    printer.printAttributeWithoutType(getValue());
  printer << ")";
  printer.printOptionalAttrDict((*this)->getAttrs(), {getValueAttrName()});
  printer << " : " << getType();
}

LogicalResult FillOp::verify() {
  return expectElement(*this, "fill value", shapeOf(getType()).element, getValue().getType());
}

LogicalResult MaskOp::verify() {
  return expectElement(*this, "mask value", getX().getType().getElementType(), getValue().getType());
}

LogicalResult IotaOp::verify() {
  if (!getType().getElementType().isSignlessInteger(32))
    return emitOpError() << "expected an i32 result but got element type "
                         << getType().getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions, conversions, random numbers
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  if (failed(verifyVectorOfTile(*this, getType(), getX().getType(), "reducing a tile")))
    return failure();
  if (getInit() && getInit().getType() != getType())
    return emitOpError() << "expected init of type " << getType() << " but got "
                         << getInit().getType();
  if (getX().getType().getElementType().isSignlessInteger(1))
    return emitOpError() << "cannot reduce a mask";
  return success();
}

LogicalResult CastOp::verify() {
  Shape from = shapeOf(getX().getType()), to = shapeOf(getType());
  if (from.isVector != to.isVector || from.rows != to.rows || from.cols != to.cols)
    return emitOpError() << "expected a result of shape " << describeShape(from) << " but got "
                         << describeShape(to);
  if (from.isVector && cast<RegisterVectorType>(getX().getType()).getAxis() !=
                           cast<RegisterVectorType>(getType()).getAxis())
    return emitOpError() << "cannot change a vector's axis by a cast";
  if (getFinite() && (!from.element.isF32() || !isa<BFloat16Type, Float16Type>(to.element)))
    return emitOpError() << "finite narrows f32 to bf16 or f16, not " << from.element << " to "
                         << to.element;
  return success();
}

LogicalResult TransposeOp::verify() {
  RegisterTileType x = getX().getType(), result = getType();
  if (result.getRows() != x.getCols() || result.getCols() != x.getRows())
    return emitOpError() << "expected a result of shape " << x.getCols() << "x" << x.getRows()
                         << " but got " << result.getRows() << "x" << result.getCols();
  return expectElement(*this, "result", x.getElementType(), result.getElementType());
}

LogicalResult RandOp::verify() {
  RegisterTileType offsets = getOffsets().getType(), result = getType();
  if (!offsets.getElementType().isSignlessInteger(32))
    return emitOpError() << "expected i32 offsets but got element type " << offsets.getElementType();
  if (!result.getElementType().isF32())
    return emitOpError() << "expected an f32 result but got element type "
                         << result.getElementType();
  if (result.getRows() != offsets.getRows() || result.getCols() != offsets.getCols())
    return emitOpError() << "expected a result of shape " << offsets.getRows() << "x"
                         << offsets.getCols() << " but got " << result.getRows() << "x"
                         << result.getCols();
  return success();
}

#define GET_OP_CLASSES
#include "hk/HKOps.cpp.inc"
