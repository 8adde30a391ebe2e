//===- Divergence.h - values that differ between the waves ------*- C++ -*-===//

#ifndef HK_LIB_PASSES_DIVERGENCE_H
#define HK_LIB_PASSES_DIVERGENCE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::hk {

/// Values that may differ between the waves of a workgroup: anything computed from
/// hk.warp_id or hk.lane_id, through any chain of operations and loop-carried values.
class Divergence {
public:
  explicit Divergence(func::FuncOp kernel);

  bool contains(Value v) const { return values.contains(v); }

  /// The innermost enclosing control flow of `op` whose path depends on a divergent value.
  Operation *divergentParent(Operation *op) const;

private:
  llvm::DenseSet<Value> values;
};

} // namespace mlir::hk

#endif // HK_LIB_PASSES_DIVERGENCE_H
