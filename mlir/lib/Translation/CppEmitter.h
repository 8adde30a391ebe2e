//===- CppEmitter.h - the state of one hk-to-C++ translation ----*- C++ -*-===//

#ifndef HK_LIB_TRANSLATION_CPPEMITTER_H
#define HK_LIB_TRANSLATION_CPPEMITTER_H

#include "hk/HKDialect.h"
#include "hk/TargetFacts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::hk {

/// Writes one kernel: names every SSA value, spells types, and indents.
class CppEmitter {
public:
  CppEmitter(llvm::raw_ostream &os, const TargetFacts &facts) : os(os), facts(facts) {}

  llvm::raw_ostream &os;
  const TargetFacts &facts;
  int64_t warps = 1;

  /// The C++ spelling of an element, scalar, tile, vector, shared or global type; failure
  /// (with a diagnostic at `loc`) for a type the translation does not know.
  FailureOr<std::string> typeName(Type type, Location loc);

  /// The variable holding `v`, named on first sight (t3 for tiles, s3 for shared, v3 else).
  std::string name(Value v);
  /// Gives `v` the same variable as `existing` (loop-carried values, branch results).
  void alias(Value v, Value existing) { names[v] = name(existing); }
  bool hasName(Value v) const { return names.count(v); }

  /// A line at the current indentation.
  llvm::raw_ostream &line() { return os.indent(indent * 2); }
  int indent = 1;

  /// The C++ type of `v`'s variable: typeName, except that a vector names its tile.
  FailureOr<std::string> valueTypeName(Value v, Location loc);

  /// Declares the variable of a register result (`hk::rt<...> t3;`).
  LogicalResult declare(Value v, Location loc);

  /// `hk::bf16`, `float`, ... for an element type, or "" when unknown.
  static std::string elementName(Type element);

  /// Decides which register tile each register vector belongs to. In the tile library a vector's
  /// lanes follow a tile's register layout, so a vector is spelled hk::col_vec<RT, T> (or
  /// row_vec) for the tile RT it is reduced from, broadcast against or indexes rows of; vectors
  /// combined or carried together share one tile, the first such in program order (the library
  /// redistributes a vector used with a tile of another distribution).
  void assignVectorTiles(func::FuncOp kernel);

  /// Whether an asynchronous global->LDS copy may still be in flight at this point of the
  /// emission (CDNA): the next barrier is preceded by its vmcnt wait.
  bool asyncCopyPending = false;

private:
  llvm::DenseMap<Value, std::string> names;
  llvm::DenseMap<Value, RegisterTileType> vectorTiles;
  int counter = 0;
};

} // namespace mlir::hk

#endif // HK_LIB_TRANSLATION_CPPEMITTER_H
