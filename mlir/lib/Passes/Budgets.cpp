//===- Budgets.cpp - hk-budgets -------------------------------------------===//
//
// Refuses a kernel whose live register tiles need more VGPRs than the target (or the kernel's
// hk.max_vgprs) allows, before any compiler runs: on the GPU the excess would be spilled, and a
// spill reorders against hand-placed waits.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "hk/HKPasses.h"

#include "mlir/Analysis/Liveness.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::hk {
#define GEN_PASS_DEF_HKBUDGETS
#include "hk/HKPasses.h.inc"
} // namespace mlir::hk

using namespace mlir;
using namespace mlir::hk;

int64_t mlir::hk::vgprsOf(Type type, const TargetFacts &facts, int64_t warps) {
  auto perLane = [&](int64_t elements, Type element) {
    int64_t bits = element.isSignlessInteger(1) ? 8 : element.getIntOrFloatBitWidth();
    return llvm::divideCeil(elements * bits / facts.waveSize, 32);
  };
  if (auto rt = dyn_cast<RegisterTileType>(type)) {
    int64_t vgprs = perLane(rt.getNumElements(), rt.getElementType());
    // RDNA3's WMMA wants lanes 16-31 to repeat lanes 0-15 of its A and B operands.
    if (facts.family == "rdna3" && (rt.getRole() == Role::a || rt.getRole() == Role::b))
      vgprs *= 2;
    return vgprs;
  }
  if (auto rv = dyn_cast<RegisterVectorType>(type))
    // A vector of a tile is held like a column of 16 elements per entry (each lane keeps the
    // entries of the rows or columns it owns).
    return perLane(rv.getLength() * 16, rv.getElementType());
  if (auto staged = dyn_cast<StagedTileType>(type)) {
    // Each thread holds whole 16-byte chunks of the tile, 4 VGPRs each.
    int64_t threads = warps * facts.waveSize;
    return llvm::divideCeil(staged.getBytes() / 16, threads) * 4;
  }
  return 0;
}

/// How close to the budget a peak may come before the pass warns. The estimate counts tiles
/// only; the compiled kernel also keeps addresses, indices, loop counters and the compiler's
/// temporaries in VGPRs, 10 to 120 more over the kernel library. On gfx1100 kernels whose peak
/// was above 224 of 256 spilled, while the library's largest (its GEMMs, at 224) build to 250;
/// the headroom is the budget's last 32, which no library kernel enters.
static constexpr int64_t kSpillHeadroom = 32;

namespace {

struct BudgetsPass : public hk::impl::HKBudgetsBase<BudgetsPass> {
  using HKBudgetsBase::HKBudgetsBase;

  void runOnOperation() override {
    if (!checkKernels(getOperation(), arch,
                      [&](func::FuncOp kernel, const TargetFacts &facts) { return check(kernel, facts); }))
      signalPassFailure();
  }

  /// Register values live just before `op` (`after` = false) or just after it, including the
  /// values live across each of its ancestors: the set the diagnostic at the peak lists.
  static llvm::SetVector<Value> liveAround(Liveness &liveness, Operation *op, func::FuncOp kernel,
                                           bool after) {
    llvm::SetVector<Value> live;
    bool innermost = true;
    for (Operation *at = op; at && at != kernel.getOperation(); at = at->getParentOp()) {
      Block *block = at->getBlock();
      const LivenessBlockInfo *info = liveness.getLiveness(block);
      if (!info)
        continue;
      for (Value v : info->currentlyLiveValues(at)) {
        if (!isa<RegisterTileType, RegisterVectorType, StagedTileType>(v.getType()))
          continue;
        Operation *start = info->getStartOperation(v);
        Operation *end = info->getEndOperation(v, start);
        bool definedBefore = v.getParentBlock() != block || isa<BlockArgument>(v) ||
                             start->isBeforeInBlock(at);
        bool definedAtOrBefore = definedBefore || start == at;
        bool usedAtOrAfter = end == at || at->isBeforeInBlock(end) || info->isLiveOut(v);
        bool usedAfter = (end != at && at->isBeforeInBlock(end)) || info->isLiveOut(v);
        if (!innermost) {
          // Around an ancestor only what lives through it counts; its body counts the rest.
          if (definedBefore && usedAfter)
            live.insert(v);
        } else if (after ? (definedAtOrBefore && usedAfter) : (definedBefore && usedAtOrAfter)) {
          live.insert(v);
        }
      }
      innermost = false;
    }
    return live;
  }

  /// VGPRs of the register values live before and after every operation, in one backward scan
  /// per block (linear in the kernel's size, where asking Liveness per operation is quadratic).
  /// A value counts once however many levels it is live at: the counts say how many.
  struct Totals {
    const TargetFacts &facts;
    int64_t warps;
    Liveness &liveness;
    llvm::DenseMap<Value, int> count;
    int64_t sum = 0;
    llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>> at;  // op -> (before, after)

    Totals(const TargetFacts &facts, int64_t warps, Liveness &liveness)
        : facts(facts), warps(warps), liveness(liveness) {}

    void add(Value v) {
      if (count[v]++ == 0)
        sum += vgprsOf(v.getType(), facts, warps);
    }
    void remove(Value v) {
      auto it = count.find(v);
      if (--it->second == 0) {
        sum -= vgprsOf(v.getType(), facts, warps);
        count.erase(it);
      }
    }

    /// Scans `block` with the values live through its ancestors already counted.
    void scan(Block &block) {
      llvm::SmallDenseSet<Value, 16> live;
      auto insert = [&](Value v) {
        if (isa<RegisterTileType, RegisterVectorType, StagedTileType>(v.getType()) && live.insert(v).second)
          add(v);
      };
      auto erase = [&](Value v) {
        if (live.erase(v))
          remove(v);
      };
      if (const LivenessBlockInfo *info = liveness.getLiveness(&block))
        for (Value v : info->out())
          insert(v);
      for (Operation &op : llvm::reverse(block)) {
        int64_t after = sum;
        for (Value r : op.getResults())
          erase(r);
        // What is live now lives through `op`: its regions see it on top of their own.
        for (Region &region : op.getRegions())
          for (Block &inner : region)
            scan(inner);
        for (Value v : op.getOperands())
          insert(v);
        op.walk([&](Operation *nested) {
          if (nested == &op)
            return;
          for (Value v : nested->getOperands())
            if (!op.isAncestor(v.getParentRegion()->getParentOp()))
              insert(v);  // used inside op's regions, defined outside: used at op
        });
        at[&op] = {sum, after};
      }
      for (Value v : live)
        remove(v);
    }
  };

  bool check(func::FuncOp kernel, const TargetFacts &facts) {
    int64_t budget = facts.maxVgprs + facts.maxAgprs;
    StringRef source = "the target's";
    if (auto cap = kernel->getAttrOfType<IntegerAttr>("hk.max_vgprs");
        cap && cap.getInt() < budget) {
      budget = cap.getInt();
      source = "the kernel's max_vgprs";
    }
    int64_t warps = getKernelWarps(kernel);
    Liveness liveness(kernel);
    Totals totals(facts, warps, liveness);
    totals.scan(kernel.front());
    int64_t peak = 0;
    Operation *peakOp = nullptr;
    bool peakAfter = false;
    kernel.walk([&](Operation *op) {
      auto it = totals.at.find(op);
      if (it == totals.at.end())
        return;
      for (bool after : {false, true}) {
        int64_t total = after ? it->second.second : it->second.first;
        if (total > peak) {
          peak = total;
          peakOp = op;
          peakAfter = after;
        }
      }
    });
    kernel->setAttr("hk.tile_vgprs", IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), peak));
    if (peak <= budget) {
      if (peakOp && peak > budget - kSpillHeadroom) {
        InFlightDiagnostic diag =
            kernel.emitWarning() << "register tiles live at the peak need " << peak << " of the "
                                 << budget << " VGPRs per lane " << source << " budget on "
                                 << facts.arch << " allows; the compiled kernel also keeps "
                                 << "addresses, indices and temporaries in VGPRs, so it may "
                                    "spill, which the resource gate refuses";
        diag.attachNote(peakOp->getLoc()) << "the peak";
      }
      return true;
    }
    llvm::SetVector<Value> peakValues = liveAround(liveness, peakOp, kernel, peakAfter);
    SmallVector<Value> largest(peakValues.begin(), peakValues.end());
    llvm::stable_sort(largest, [&](Value a, Value b) {
      return vgprsOf(a.getType(), facts, warps) > vgprsOf(b.getType(), facts, warps);
    });
    InFlightDiagnostic diag =
        peakOp->emitError() << "register tiles live here need " << peak << " VGPRs per lane but "
                            << source << " budget on " << facts.arch << " is " << budget
                            << "; the compiler would spill, and spills reorder against the "
                               "kernel's waits. Use smaller tiles, fewer buffers in registers, "
                               "or more warps each holding less";
    for (Value v : llvm::ArrayRef(largest).take_front(4)) {
      Location loc = v.getDefiningOp() ? v.getDefiningOp()->getLoc() : kernel.getLoc();
      diag.attachNote(loc) << v.getType() << " takes " << vgprsOf(v.getType(), facts, warps) << " VGPRs";
    }
    return false;
  }
};

} // namespace
