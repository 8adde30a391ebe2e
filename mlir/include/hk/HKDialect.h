//===- HKDialect.h - the hk dialect -----------------------------*- C++ -*-===//
//
// Everything a user of the hk dialect includes: the dialect, its enums, types and ops.
//
//===----------------------------------------------------------------------===//

#ifndef HK_HKDIALECT_H
#define HK_HKDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "hk/HKDialect.h.inc"
#include "hk/HKEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "hk/HKTypes.h.inc"

#define GET_OP_CLASSES
#include "hk/HKOps.h.inc"

namespace mlir::hk {

/// Names of the attributes hk puts on a kernel's func.func.
inline constexpr llvm::StringLiteral kKernelAttr = "hk.kernel";
inline constexpr llvm::StringLiteral kWarpsAttr = "hk.warps";
inline constexpr llvm::StringLiteral kArchAttr = "hk.arch";
/// Set by hk-scalar-reads: the kernel's tensor arguments read through the scalar cache, and
/// those it writes (argument numbers).
inline constexpr llvm::StringLiteral kScalarReadsAttr = "hk.scalar_reads";
inline constexpr llvm::StringLiteral kWritesAttr = "hk.writes";
/// On an scf.for: the translation writes the loop's body this many times per iteration (with
/// the remaining iterations after it), so that indices like `k % 2` become constants.
inline constexpr llvm::StringLiteral kUnrollAttr = "hk.unroll";

/// Bytes of one element of a tile or view of `type` (i1 masks count one byte).
int64_t elementBytes(Type type);

/// Whether `type` is an element type tiles and views may hold.
bool isSupportedElementType(Type type, bool allowMask);

/// Whether `op` is a kernel: a func.func with the hk.kernel attribute.
bool isKernel(Operation *op);

/// The waves per workgroup of the kernel enclosing `op` (1 when unset).
int64_t getKernelWarps(Operation *op);

/// Calls `tie(a, b)` for each pair of values the control-flow op `op` (scf.for, scf.if,
/// scf.while) requires to be of one type: a loop's initial value, region argument, value
/// yielded back and result; a branch's yielded values and its result.
void forEachControlFlowTie(Operation *op, function_ref<void(Value, Value)> tie);

} // namespace mlir::hk

#endif // HK_HKDIALECT_H
