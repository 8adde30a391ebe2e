//===- Structure.cpp - hk-structure ---------------------------------------===//
//
// Workgroup-wide operations must be reached by every wave, LDS is allocated outside loops, and
// the workgroup fits the target.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "hk/HKPasses.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::hk {
#define GEN_PASS_DEF_HKSTRUCTURE
#include "hk/HKPasses.h.inc"
} // namespace mlir::hk

using namespace mlir;
using namespace mlir::hk;

namespace {

/// Values that may differ between the waves of a workgroup: anything computed from
/// hk.warp_id or hk.lane_id, through any chain of operations and loop-carried values.
class Divergence {
public:
  explicit Divergence(func::FuncOp kernel) {
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

  bool contains(Value v) const { return values.contains(v); }

  /// The innermost enclosing control flow of `op` whose path depends on a divergent value.
  Operation *divergentParent(Operation *op) const {
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

private:
  llvm::DenseSet<Value> values;
};

struct StructurePass : public hk::impl::HKStructureBase<StructurePass> {
  using HKStructureBase::HKStructureBase;

  void runOnOperation() override {
    if (!checkKernels(getOperation(), arch, [&](func::FuncOp kernel, const TargetFacts &facts) {
          return check(kernel, facts);
        }))
      signalPassFailure();
  }

  static bool check(func::FuncOp kernel, const TargetFacts &facts) {
    bool failed = false;
    int64_t warps = getKernelWarps(kernel);
    int64_t threads = warps * facts.waveSize;
    if (threads > facts.maxWorkgroupSize) {
      kernel.emitError() << "kernel @" << kernel.getSymName() << " has " << warps
                         << " warps of " << facts.waveSize << " lanes (" << threads
                         << " threads) but " << facts.arch << " allows at most "
                         << facts.maxWorkgroupSize << " threads per workgroup; use at most "
                         << facts.maxWorkgroupSize / facts.waveSize << " warps";
      failed = true;
    }
    Divergence divergence(kernel);
    kernel.walk([&](Operation *op) {
      if (!isa<BarrierOp, CopyToLdsOp, CopyIssueOp, CopyCommitOp, CopyFromLdsOp, LdsAllocOp>(op))
        return;
      if (isa<LdsAllocOp>(op)) {
        if (Operation *loop = op->getParentOfType<LoopLikeOpInterface>()) {
          InFlightDiagnostic diag =
              op->emitError() << "LDS is allocated inside a loop; allocate it once, before the loop";
          diag.attachNote(loop->getLoc()) << "the enclosing loop";
          failed = true;
          return;
        }
      }
      if (Operation *parent = divergence.divergentParent(op)) {
        InFlightDiagnostic diag = op->emitError()
                                  << "'" << op->getName()
                                  << "' is workgroup-wide but sits under control flow that "
                                     "depends on the wave's id (hk.warp_id or hk.lane_id); "
                                     "move it out of the branch so that every wave reaches it";
        diag.attachNote(parent->getLoc()) << "the divergent control flow";
        failed = true;
      }
    });
    return !failed;
  }
};

} // namespace
