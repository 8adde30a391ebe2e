//===- HKDialect.cpp - the hk dialect and its types -----------------------===//

#include "hk/HKDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::hk;

#include "hk/HKDialect.cpp.inc"
#include "hk/HKEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "hk/HKTypes.cpp.inc"

void HKDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "hk/HKTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "hk/HKOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

int64_t mlir::hk::elementBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

bool mlir::hk::isSupportedElementType(Type type, bool allowMask) {
  if (isa<BFloat16Type, Float16Type, Float32Type, Float8E4M3FNType, Float8E5M2Type,
          Float8E4M3FNUZType, Float8E5M2FNUZType>(type))
    return true;
  if (type.isSignlessInteger(32) || type.isSignlessInteger(8))
    return true;
  return allowMask && type.isSignlessInteger(1);
}

bool mlir::hk::isKernel(Operation *op) {
  return isa<func::FuncOp>(op) && op->hasAttr(kKernelAttr);
}

int64_t mlir::hk::getKernelWarps(Operation *op) {
  auto func = isa<func::FuncOp>(op) ? cast<func::FuncOp>(op) : op->getParentOfType<func::FuncOp>();
  if (!func)
    return 1;
  if (auto warps = func->getAttrOfType<IntegerAttr>(kWarpsAttr))
    return warps.getInt();
  return 1;
}

void mlir::hk::forEachControlFlowTie(Operation *op, function_ref<void(Value, Value)> tie) {
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
      tie(loop.getInitArgs()[i], arg);
      tie(arg, yield.getOperand(i));
      tie(arg, loop.getResult(i));
    }
  } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    for (Region &region : ifOp->getRegions())
      if (!region.empty())
        for (auto [i, v] : llvm::enumerate(region.front().getTerminator()->getOperands()))
          tie(v, ifOp.getResult(i));
  } else if (auto loop = dyn_cast<scf::WhileOp>(op)) {
    auto yield = cast<scf::YieldOp>(loop.getAfter().front().getTerminator());
    for (auto [init, arg, yielded] : llvm::zip(loop.getInits(), loop.getBeforeArguments(), yield.getOperands())) {
      tie(init, arg);
      tie(arg, yielded);
    }
    for (auto [v, arg, result] : llvm::zip(loop.getConditionOp().getArgs(), loop.getAfterArguments(),
                                          loop.getResults())) {
      tie(v, arg);
      tie(v, result);
    }
  }
}

static const char *kElementTypes = "bf16, f16, f32, i32, i8, f8E4M3FN, f8E5M2, f8E4M3FNUZ or f8E5M2FNUZ";

static LogicalResult verifyTileShape(function_ref<InFlightDiagnostic()> emitError, int64_t rows,
                                     int64_t cols, StringRef what) {
  if (rows <= 0 || cols <= 0 || rows % 16 || cols % 16)
    return emitError() << what << " shape must be a positive multiple of 16 in each dimension but got "
                       << rows << "x" << cols;
  return success();
}

static LogicalResult verifyElement(function_ref<InFlightDiagnostic()> emitError, Type type,
                                   bool allowMask, StringRef what) {
  if (!isSupportedElementType(type, allowMask))
    return emitError() << what << " element type must be " << kElementTypes
                       << (allowMask ? " (or i1 for a mask)" : "") << " but got " << type;
  return success();
}

/// Parses `RxC` into rows and cols.
static ParseResult parseShape(AsmParser &parser, int64_t &rows, int64_t &cols) {
  SmallVector<int64_t, 2> dims;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseDimensionList(dims, /*allowDynamic=*/false, /*withTrailingX=*/false))
    return failure();
  if (dims.size() != 2)
    return parser.emitError(loc, "expected a shape ROWSxCOLS but got ") << dims.size() << " dimensions";
  rows = dims[0];
  cols = dims[1];
  return success();
}

template <typename EnumT>
static ParseResult parseEnumKeyword(AsmParser &parser, EnumT &value, StringRef what) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<EnumT> parsed = symbolizeEnum<EnumT>(keyword);
  if (!parsed)
    return parser.emitError(loc, "expected a ") << what << " but got '" << keyword << "'";
  value = *parsed;
  return success();
}

//===----------------------------------------------------------------------===//
// !hk.rt
//===----------------------------------------------------------------------===//

Type RegisterTileType::parse(AsmParser &parser) {
  Type element;
  int64_t rows = 0, cols = 0;
  Layout layout = Layout::row;
  Role role = Role::none;
  if (parser.parseLess() || parser.parseType(element) || parser.parseComma() ||
      parseShape(parser, rows, cols) || parser.parseComma() ||
      parseEnumKeyword(parser, layout, "layout (row or col)"))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      parseEnumKeyword(parser, role, "fragment role (a, b or c)"))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); }, parser.getContext(),
                    element, rows, cols, layout, role);
}

void RegisterTileType::print(AsmPrinter &printer) const {
  printer << "<" << getElementType() << ", " << getRows() << "x" << getCols() << ", "
          << stringifyLayout(getLayout());
  if (getRole() != Role::none)
    printer << ", " << stringifyRole(getRole());
  printer << ">";
}

LogicalResult RegisterTileType::verify(function_ref<InFlightDiagnostic()> emitError, Type element,
                                       int64_t rows, int64_t cols, Layout, Role) {
  if (failed(verifyElement(emitError, element, /*allowMask=*/true, "register tile")))
    return failure();
  return verifyTileShape(emitError, rows, cols, "register tile");
}

//===----------------------------------------------------------------------===//
// !hk.rv
//===----------------------------------------------------------------------===//

Type RegisterVectorType::parse(AsmParser &parser) {
  Type element;
  int64_t length = 0;
  VecAxis axis = VecAxis::col;
  if (parser.parseLess() || parser.parseType(element) || parser.parseComma() ||
      parser.parseInteger(length) || parser.parseComma() ||
      parseEnumKeyword(parser, axis, "vector axis (row or col)") || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); }, parser.getContext(),
                    element, length, axis);
}

void RegisterVectorType::print(AsmPrinter &printer) const {
  printer << "<" << getElementType() << ", " << getLength() << ", " << stringifyVecAxis(getAxis())
          << ">";
}

LogicalResult RegisterVectorType::verify(function_ref<InFlightDiagnostic()> emitError, Type element,
                                         int64_t length, VecAxis) {
  if (failed(verifyElement(emitError, element, /*allowMask=*/false, "register vector")))
    return failure();
  if (length <= 0 || length % 16)
    return emitError() << "register vector length must be a positive multiple of 16 but got "
                       << length;
  return success();
}

//===----------------------------------------------------------------------===//
// !hk.st and !hk.sv
//===----------------------------------------------------------------------===//

Type SharedTileType::parse(AsmParser &parser) {
  Type element;
  int64_t rows = 0, cols = 0, buffers = 1;
  if (parser.parseLess() || parser.parseType(element) || parser.parseComma() ||
      parseShape(parser, rows, cols) || parser.parseComma() || parser.parseInteger(buffers) ||
      parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); }, parser.getContext(),
                    element, rows, cols, buffers);
}

void SharedTileType::print(AsmPrinter &printer) const {
  printer << "<" << getElementType() << ", " << getRows() << "x" << getCols() << ", "
          << getBuffers() << ">";
}

LogicalResult SharedTileType::verify(function_ref<InFlightDiagnostic()> emitError, Type element,
                                     int64_t rows, int64_t cols, int64_t buffers) {
  if (failed(verifyElement(emitError, element, /*allowMask=*/false, "shared tile")) ||
      failed(verifyTileShape(emitError, rows, cols, "shared tile")))
    return failure();
  if (buffers < 1)
    return emitError() << "shared tile must have at least 1 buffer but got " << buffers;
  return success();
}

int64_t SharedTileType::getBufferBytes() const {
  return getRows() * getCols() * elementBytes(getElementType());
}

Type SharedVectorType::parse(AsmParser &parser) {
  Type element;
  int64_t length = 0, buffers = 1;
  if (parser.parseLess() || parser.parseType(element) || parser.parseComma() ||
      parser.parseInteger(length) || parser.parseComma() || parser.parseInteger(buffers) ||
      parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); }, parser.getContext(),
                    element, length, buffers);
}

void SharedVectorType::print(AsmPrinter &printer) const {
  printer << "<" << getElementType() << ", " << getLength() << ", " << getBuffers() << ">";
}

LogicalResult SharedVectorType::verify(function_ref<InFlightDiagnostic()> emitError, Type element,
                                       int64_t length, int64_t buffers) {
  if (failed(verifyElement(emitError, element, /*allowMask=*/false, "shared vector")))
    return failure();
  if (length <= 0 || length % 16)
    return emitError() << "shared vector length must be a positive multiple of 16 but got " << length;
  if (buffers < 1)
    return emitError() << "shared vector must have at least 1 buffer but got " << buffers;
  return success();
}

int64_t SharedVectorType::getBufferBytes() const {
  return getLength() * elementBytes(getElementType());
}

//===----------------------------------------------------------------------===//
// !hk.gl
//===----------------------------------------------------------------------===//

LogicalResult GlobalType::verify(function_ref<InFlightDiagnostic()> emitError, Type element,
                                 int64_t divisor) {
  if (failed(verifyElement(emitError, element, /*allowMask=*/false, "global view")))
    return failure();
  if (divisor < 1 || (divisor & (divisor - 1)))
    return emitError() << "global view divisor must be a positive power of two but got " << divisor;
  return success();
}

//===----------------------------------------------------------------------===//
// !hk.staged
//===----------------------------------------------------------------------===//

Type StagedTileType::parse(AsmParser &parser) {
  Type element;
  int64_t rows = 0, cols = 0;
  if (parser.parseLess() || parser.parseType(element) || parser.parseComma() ||
      parseShape(parser, rows, cols) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); }, parser.getContext(),
                    element, rows, cols);
}

void StagedTileType::print(AsmPrinter &printer) const {
  printer << "<" << getElementType() << ", " << getRows() << "x" << getCols() << ">";
}

LogicalResult StagedTileType::verify(function_ref<InFlightDiagnostic()> emitError, Type element,
                                     int64_t rows, int64_t cols) {
  // Rows of a multiple of 16 elements are whole 16-byte chunks for every element type.
  if (failed(verifyElement(emitError, element, /*allowMask=*/false, "staged tile")))
    return failure();
  return verifyTileShape(emitError, rows, cols, "staged tile");
}

int64_t StagedTileType::getBytes() const {
  return getRows() * getCols() * elementBytes(getElementType());
}

//===----------------------------------------------------------------------===//
// Kernel attributes
//===----------------------------------------------------------------------===//

LogicalResult HKDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name == kKernelAttr) {
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func)
      return op->emitError() << "'" << kKernelAttr << "' is only valid on a func.func";
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << kKernelAttr << "' must be a unit attribute";
    if (func.getFunctionType().getNumResults() != 0)
      return op->emitError() << "kernel @" << func.getSymName()
                             << " must return nothing but returns "
                             << func.getFunctionType().getNumResults() << " values";
    return success();
  }
  if (name == kWarpsAttr) {
    auto warps = dyn_cast<IntegerAttr>(attr.getValue());
    if (!warps || warps.getInt() < 1)
      return op->emitError() << "'" << kWarpsAttr << "' must be a positive integer but got "
                             << attr.getValue();
    return success();
  }
  if (name == "hk.lds_bytes" || name == "hk.tile_vgprs" || name == "hk.max_vgprs" ||
      name == "hk.min_occupancy") {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0)
      return op->emitError() << "'" << name << "' must be a non-negative integer but got "
                             << attr.getValue();
    return success();
  }
  if (name == kScalarReadsAttr || name == kWritesAttr) {
    auto func = dyn_cast<func::FuncOp>(op);
    auto args = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!func || !args)
      return op->emitError() << "'" << name
                             << "' must be an array<i64> of argument numbers on a func.func";
    for (int64_t i : args.asArrayRef())
      if (i < 0 || i >= static_cast<int64_t>(func.getNumArguments()) ||
          !isa<GlobalType>(func.getArgumentTypes()[i]))
        return op->emitError() << "'" << name << "' names argument " << i
                               << " but it is not a tensor argument of @" << func.getSymName();
    return success();
  }
  if (name == kUnrollAttr) {
    auto factor = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<scf::ForOp>(op))
      return op->emitError() << "'" << kUnrollAttr << "' is only valid on an scf.for";
    if (!factor || factor.getInt() < 1)
      return op->emitError() << "'" << kUnrollAttr << "' must be a positive integer but got "
                             << attr.getValue();
    return success();
  }
  if (name == kArchAttr) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << kArchAttr << "' must be a string but got " << attr.getValue();
    return success();
  }
  return op->emitError() << "unknown hk attribute '" << name << "'";
}
