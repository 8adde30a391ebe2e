//===- Structure.cpp - hk-structure ---------------------------------------===//
//
// Workgroup-wide operations must be reached by every wave, LDS is allocated outside loops, and
// the workgroup fits the target.
//
//===----------------------------------------------------------------------===//

#include "Divergence.h"
#include "PassUtils.h"
#include "hk/HKPasses.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::hk {
#define GEN_PASS_DEF_HKSTRUCTURE
#include "hk/HKPasses.h.inc"
} // namespace mlir::hk

using namespace mlir;
using namespace mlir::hk;

namespace {

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
