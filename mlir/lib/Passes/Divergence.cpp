//===- Divergence.cpp - values that differ between the waves --------------===//

#include "Divergence.h"

#include "hk/HKDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::hk;

Divergence::Divergence(func::FuncOp kernel) {
  bool changed = true;
  while (changed) {
    changed = false;
    kernel.walk([&](Operation *op) {
      bool divergent = isa<WarpIdOp, LaneIdOp>(op) ||
                       llvm::any_of(op->getOperands(), [&](Value v) { return values.contains(v); });
      if (divergent)
        for (Value r : op->getResults())
          changed |= values.insert(r).second;
      // A loop-carried value is divergent when its initial or yielded value is.
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
        for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
          if (values.contains(loop.getInitArgs()[i]) || values.contains(yield.getOperand(i))) {
            changed |= values.insert(arg).second;
            changed |= values.insert(loop.getResult(i)).second;
          }
        }
      }
    });
  }
}

Operation *Divergence::divergentParent(Operation *op) const {
  for (Operation *parent = op->getParentOp(); parent && !isa<func::FuncOp>(parent);
       parent = parent->getParentOp()) {
    if (auto ifOp = dyn_cast<scf::IfOp>(parent); ifOp && contains(ifOp.getCondition()))
      return parent;
    if (auto forOp = dyn_cast<scf::ForOp>(parent);
        forOp && (contains(forOp.getLowerBound()) || contains(forOp.getUpperBound()) ||
                  contains(forOp.getStep())))
      return parent;
    if (auto whileOp = dyn_cast<scf::WhileOp>(parent)) {
      Value cond = whileOp.getConditionOp().getCondition();
      if (contains(cond))
        return parent;
    }
  }
  return nullptr;
}
