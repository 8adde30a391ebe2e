//===- Waits.cpp - hk-waits -----------------------------------------------===//
//
// Models what is in flight on the LDS and vector-memory counters, in issue order, the way the
// hardware counts it, and derives (or checks) the wait before every read of an in-flight value
// and before every barrier reached with LDS writes in flight.
//
// Analysis and rewriting are separate: the analysis runs loop bodies several times (from the
// state before the loop and from the loop's steady state) and keeps, for each place a wait is
// needed, the smallest count any run asked for; the rewrite then inserts one wait per place.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "hk/HKPasses.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::hk {
#define GEN_PASS_DEF_HKWAITS
#include "hk/HKPasses.h.inc"
} // namespace mlir::hk

using namespace mlir;
using namespace mlir::hk;

namespace {

enum Counter { kLds = 0, kVm = 1, kNumCounters = 2 };

const char *counterName(int c) { return c == kLds ? "LDS" : "vector-memory"; }
const char *waitName(int c) { return c == kLds ? "hk.wait_lds" : "hk.wait_vm"; }

/// One operation in flight.
struct Entry {
  Operation *issuer;
  /// The register value it loads, or the shared allocation it writes; after a loop back edge
  /// the loop-carried names of the same value. Empty once no name reaches it.
  SmallVector<Value, 2> names;
  bool isLoad;    // completes a register value
  bool writesLds; // completes an LDS write other waves will read after a barrier
  /// The type that decides how many instructions the operation issues (see hk.wait_lds's
  /// `younger`), or null when the translation should count none for it.
  Type insts;
};

struct State {
  SmallVector<Entry> queue[kNumCounters];
};

/// The shared allocation a shared value views (through hk.subtile).
Value rootOf(Value shared) {
  while (auto sub = shared.getDefiningOp<SubtileOp>())
    shared = sub.getSrc();
  return shared;
}

/// The operations a wait leaves in flight, as their instruction-deciding types: across the
/// analysis' runs of a loop body, the ones every run has (a multiset intersection), so the
/// instructions they add up to are a lower bound for every run.
struct Younger {
  bool set = false;
  SmallVector<Type> types;

  void meet(ArrayRef<Type> run) {
    if (!set) {
      types.assign(run.begin(), run.end());
      set = true;
      return;
    }
    SmallVector<Type> left(run.begin(), run.end()), kept;
    for (Type t : types) {
      auto it = llvm::find(left, t);
      if (it == left.end())
        continue;
      kept.push_back(t);
      left.erase(it);
    }
    types = std::move(kept);
  }
};

/// A wait the rewrite will insert.
struct PlannedWait {
  int64_t count;
  llvm::SetVector<Value> guarded;
  Younger younger;
};

/// The instruction-deciding types of entries j+1.. of a queue (what a wait for entry j leaves).
SmallVector<Type> youngerThan(ArrayRef<Entry> queue, int j) {
  SmallVector<Type> types;
  for (const Entry &e : queue.drop_front(j + 1))
    if (e.insts)
      types.push_back(e.insts);
  return types;
}

class WaitAnalysis {
public:
  WaitAnalysis(const TargetFacts &facts, bool derive) : facts(facts), derive(derive) {}

  bool failed = false;
  llvm::MapVector<std::pair<Operation *, int>, PlannedWait> plan;
  llvm::DenseMap<Operation *, llvm::SetVector<Value>> explicitGuards;
  llvm::DenseMap<Operation *, Younger> explicitYounger;

  void runKernel(func::FuncOp kernel) {
    State s = runBlock(kernel.getBody().front(), State());
    if (failed)
      return; // a loop that never settles also ends with its loads in flight: one error is enough
    // A load whose value is never waited for: nothing will ever read it. (An if's result is only
    // maybe in flight: a conditional prefetch whose last branch was not taken.)
    for (int c = 0; c < kNumCounters; ++c)
      for (const Entry &e : s.queue[c])
        if (e.isLoad && !isa<scf::IfOp>(e.issuer) && report(e.issuer, "end")) {
          InFlightDiagnostic diag =
              kernel.emitError() << "kernel @" << kernel.getSymName()
                                 << " ends with a load in flight on the " << counterName(c)
                                 << " counter; its value is never waited for, so remove the load "
                                    "or use its value";
          diag.attachNote(e.issuer->getLoc()) << "the load";
        }
  }

private:
  const TargetFacts &facts;
  bool derive;
  llvm::DenseSet<std::pair<Operation *, StringRef>> reported;

  /// Whether this error was not yet reported (loop bodies are analysed several times).
  bool report(Operation *op, StringRef kind) {
    failed = true;
    return reported.insert({op, kind}).second;
  }

  static int find(const State &s, int c, Value name, bool loadsOnly) {
    for (int j = s.queue[c].size() - 1; j >= 0; --j) {
      const Entry &e = s.queue[c][j];
      if (loadsOnly && !e.isLoad)
        continue;
      if (llvm::is_contained(e.names, name))
        return j;
    }
    return -1;
  }

  /// Pops entries 0..j of counter c (in-order completion); returns the register values they load.
  static SmallVector<Value> complete(State &s, int c, int j) {
    SmallVector<Value> values;
    for (int i = 0; i <= j; ++i)
      if (s.queue[c][i].isLoad)
        for (Value v : s.queue[c][i].names)
          if (isa<RegisterTileType, RegisterVectorType, StagedTileType>(v.getType()))
            values.push_back(v);
    s.queue[c].erase(s.queue[c].begin(), s.queue[c].begin() + j + 1);
    return values;
  }

  /// Entry j of counter c must complete before `op`: plan the wait (or refuse the kernel).
  void needWait(State &s, int c, int j, Operation *op, Value read, bool barrier) {
    int64_t count = s.queue[c].size() - j - 1;
    Operation *issuer = s.queue[c][j].issuer;
    SmallVector<Type> younger = youngerThan(s.queue[c], j);
    SmallVector<Value> values = complete(s, c, j);
    if (derive) {
      auto [it, inserted] = plan.try_emplace({op, c}, PlannedWait{count, {}, {}});
      it->second.count = std::min(it->second.count, count);
      it->second.guarded.insert(values.begin(), values.end());
      it->second.younger.meet(younger);
      return;
    }
    if (!report(op, barrier ? "barrier" : "read"))
      return;
    InFlightDiagnostic diag = op->emitError();
    if (barrier)
      diag << "barrier reached while an LDS write is in flight on the " << counterName(c)
           << " counter; other waves would read stale LDS. Add " << waitName(c) << " " << count
           << " before the barrier";
    else
      diag << "'" << op->getName() << "' reads a value whose " << counterName(c)
           << " load is still in flight; add " << waitName(c) << " " << count << " before it";
    diag.attachNote(issuer->getLoc()) << "the operation in flight";
  }

  /// The instruction-deciding type of a register value the tile library counts (tiles).
  static Type tileInsts(Value v) { return isa<RegisterTileType>(v.getType()) ? v.getType() : Type(); }

  void issue(State &s, Operation *op) {
    if (auto o = dyn_cast<LdsLoadOp>(op))
      s.queue[kLds].push_back({op, {o.getResult()}, true, false, tileInsts(o.getResult())});
    else if (auto o = dyn_cast<LdsStoreOp>(op))
      s.queue[kLds].push_back({op, {rootOf(o.getDst())}, false, true, tileInsts(o.getValue())});
    else if (auto o = dyn_cast<LoadOp>(op))
      s.queue[kVm].push_back({op, {o.getResult()}, true, false, tileInsts(o.getResult())});
    else if (auto o = dyn_cast<GatherOp>(op))
      s.queue[kVm].push_back({op, {o.getResult()}, true, false, Type()});
    else if (auto o = dyn_cast<CopyIssueOp>(op))
      s.queue[kVm].push_back({op, {o.getResult()}, true, false, o.getType()});
    else if (auto o = dyn_cast<CopyCommitOp>(op))
      s.queue[kLds].push_back({op, {rootOf(o.getDst())}, false, true, o.getValue().getType()});
    else if (auto o = dyn_cast<CopyToLdsOp>(op))
      // Asynchronous global->LDS DMA counts on vmcnt; elsewhere the copy ends in LDS writes.
      // Where the copy's path is chosen at run time (CDNA) it counts no instructions.
      s.queue[facts.asyncGlobalToLds ? kVm : kLds].push_back(
          {op, {rootOf(o.getDst())}, false, true, facts.asyncGlobalToLds ? Type() : o.getDst().getType()});
  }

  /// The reads of `op`: its operands, except what a loop's yield carries to the next iteration.
  void reads(State &s, Operation *op) {
    if (isa<scf::YieldOp>(op) && isa<scf::ForOp>(op->getParentOp()))
      return;
    ValueRange operands = op->getOperands();
    // A loop's initial values are carried in, not read: prefetches stay in flight.
    if (auto loop = dyn_cast<scf::ForOp>(op))
      operands = operands.take_front(3);
    for (Value v : operands) {
      if (isa<SharedTileType, SharedVectorType>(v.getType())) {
        // Same-wave LDS accesses are ordered; only an asynchronous copy into it must be waited.
        if (isa<LdsStoreOp>(op))
          continue;
        int j = find(s, kVm, rootOf(v), /*loadsOnly=*/false);
        if (j >= 0 && s.queue[kVm][j].writesLds)
          needWait(s, kVm, j, op, v, false);
        continue;
      }
      for (int c = 0; c < kNumCounters; ++c) {
        int j = find(s, c, v, /*loadsOnly=*/true);
        if (j >= 0)
          needWait(s, c, j, op, v, false);
      }
    }
  }

  void explicitWait(State &s, Operation *op, int c, int64_t count) {
    if ((int64_t)s.queue[c].size() <= count) {
      if (report(op, "useless"))
        op->emitError() << "'" << op->getName() << "' " << count
                        << " waits for nothing: " << s.queue[c].size() << " " << counterName(c)
                        << " operation" << (s.queue[c].size() == 1 ? " is" : "s are")
                        << " in flight here; remove it";
      return;
    }
    int j = s.queue[c].size() - count - 1;
    explicitYounger[op].meet(youngerThan(s.queue[c], j));
    SmallVector<Value> values = complete(s, c, j);
    explicitGuards[op].insert(values.begin(), values.end());
  }

  void barrier(State &s, Operation *op) {
    for (int c = 0; c < kNumCounters; ++c)
      for (int j = s.queue[c].size() - 1; j >= 0; --j)
        if (s.queue[c][j].writesLds) {
          needWait(s, c, j, op, Value(), true);
          break;
        }
  }

  State runBlock(Block &block, State s) {
    for (Operation &op : block)
      s = runOp(&op, std::move(s));
    return s;
  }

  State runOp(Operation *op, State s) {
    if (auto w = dyn_cast<WaitLdsOp>(op)) {
      explicitWait(s, op, kLds, w.getCount());
      return s;
    }
    if (auto w = dyn_cast<WaitVmOp>(op)) {
      explicitWait(s, op, kVm, w.getCount());
      return s;
    }
    if (isa<BarrierOp>(op)) {
      barrier(s, op);
      return s;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      reads(s, op);
      return runFor(loop, std::move(s));
    }
    if (op->getNumRegions()) {
      reads(s, op);
      return runBranches(op, std::move(s));
    }
    reads(s, op);
    issue(s, op);
    return s;
  }

  /// scf.if, scf.while and the like: each region starts from `s`; what a region issues must
  /// complete inside it, so the merged state is what was in flight before, less what every
  /// region completed. An scf.if may yield a load still in flight (a conditional prefetch): a
  /// region keeps the loads it yields when nothing it issued after them must complete, and the
  /// if's result is then in flight on that counter after the if, counting no instructions (a
  /// region may not have issued it).
  State runBranches(Operation *op, State s) {
    auto ifOp = dyn_cast<scf::IfOp>(op);
    State merged;
    for (int c = 0; c < kNumCounters; ++c)
      merged.queue[c] = s.queue[c];
    SmallVector<llvm::DenseSet<Operation *>> alive(kNumCounters);
    // Per counter, the if results some region leaves in flight.
    SmallVector<llvm::SetVector<unsigned>> results(kNumCounters);
    bool anyRegion = false;
    for (Region &region : op->getRegions()) {
      if (region.empty())
        continue;
      anyRegion = true;
      Block &block = region.front();
      State inner = s;
      for (Operation &child : block.without_terminator())
        inner = runOp(&child, std::move(inner));
      Operation *terminator = block.getTerminator();
      ValueRange yielded = ifOp ? terminator->getOperands() : ValueRange();
      auto isYielded = [&](const Entry &e) {
        return e.isLoad && llvm::any_of(e.names, [&](Value n) { return llvm::is_contained(yielded, n); });
      };
      // Drain what the region issued before leaving it, but the yielded loads it issued last.
      for (int c = 0; c < kNumCounters; ++c) {
        int j = -1;
        bool keep = true;
        for (int i = inner.queue[c].size() - 1; i >= 0 && j < 0; --i) {
          const Entry &e = inner.queue[c][i];
          if (llvm::any_of(s.queue[c], [&](const Entry &x) { return x.issuer == e.issuer; }))
            continue;
          keep = keep && isYielded(e);
          if (!keep)
            j = i;
        }
        if (j >= 0)
          needWait(inner, c, j, terminator, Value(), false);
      }
      if (ifOp) {
        // The yield carries values out of the if instead of reading them.
        for (int c = 0; c < kNumCounters; ++c)
          for (auto [i, v] : llvm::enumerate(yielded))
            if (find(inner, c, v, /*loadsOnly=*/true) >= 0)
              results[c].insert(i);
      } else {
        inner = runOp(terminator, std::move(inner));
      }
      for (int c = 0; c < kNumCounters; ++c)
        for (const Entry &e : inner.queue[c])
          alive[c].insert(e.issuer);
    }
    if (!anyRegion)
      return s;
    for (int c = 0; c < kNumCounters; ++c) {
      llvm::erase_if(merged.queue[c], [&](const Entry &e) { return !alive[c].contains(e.issuer); });
      for (unsigned i : results[c])
        merged.queue[c].push_back({op, {op->getResult(i)}, true, false, Type()});
    }
    return merged;
  }

  /// Renames entries across a loop edge: names in `from` become the matching names in `to`;
  /// names defined inside the loop body are dropped; names from outside the loop stay.
  static State rename(const State &s, scf::ForOp loop, ValueRange from, ValueRange to) {
    State out;
    for (int c = 0; c < kNumCounters; ++c)
      for (const Entry &e : s.queue[c]) {
        Entry copy = e;
        copy.names.clear();
        for (Value name : e.names) {
          for (auto [f, t] : llvm::zip(from, to))
            if (name == f)
              copy.names.push_back(t);
          if (!loop->isAncestor(name.getParentRegion()->getParentOp()) &&
              !llvm::is_contained(copy.names, name))
            copy.names.push_back(name);
        }
        out.queue[c].push_back(std::move(copy));
      }
    return out;
  }

  /// The same queues, position by position, with the same names (issuers aside).
  static bool sameShape(const State &a, const State &b) {
    for (int c = 0; c < kNumCounters; ++c) {
      if (a.queue[c].size() != b.queue[c].size())
        return false;
      for (auto [x, y] : llvm::zip(a.queue[c], b.queue[c])) {
        if (x.isLoad != y.isLoad || x.writesLds != y.writesLds)
          return false;
        llvm::SmallDenseSet<Value> xs(x.names.begin(), x.names.end());
        llvm::SmallDenseSet<Value> ys(y.names.begin(), y.names.end());
        if (xs.size() != ys.size() || llvm::any_of(xs, [&](Value v) { return !ys.contains(v); }))
          return false;
      }
    }
    return true;
  }

  State runFor(scf::ForOp loop, State s) {
    Block *body = loop.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    // First iteration: the state before the loop, with initial values renamed to the iter
    // args (the names the body reads them by, and the ones its waits should bind).
    State start = s;
    for (int c = 0; c < kNumCounters; ++c)
      for (Entry &e : start.queue[c])
        for (auto [init, arg] : llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs()))
          for (Value &name : e.names)
            if (name == init)
              name = arg;
    constexpr int kMaxIterations = 4;
    State end;
    for (int i = 0;; ++i) {
      end = runBlock(*body, start);
      State next = rename(end, loop, yield.getOperands(), loop.getRegionIterArgs());
      if (i > 0 && sameShape(next, start))
        break;
      if (i == kMaxIterations) {
        for (int c = 0; c < kNumCounters; ++c)
          if (next.queue[c].size() > start.queue[c].size() && report(loop, "steady")) {
            InFlightDiagnostic diag =
                loop.emitError() << "loop does not reach a steady state: every iteration leaves "
                                 << next.queue[c].size() - start.queue[c].size() << " more "
                                 << counterName(c)
                                 << " operation(s) in flight; wait for them inside the loop";
            diag.attachNote(next.queue[c].back().issuer->getLoc()) << "issued here";
          }
        if (!failed && report(loop, "steady"))
          loop.emitError() << "loop does not reach a steady state of operations in flight";
        break;
      }
      start = std::move(next);
    }
    return rename(end, loop, yield.getOperands(), loop.getResults());
  }
};

/// The `younger` attribute of a wait: absent when the wait leaves nothing in flight or nothing
/// the translation can count.
ArrayAttr youngerAttr(OpBuilder &b, int64_t count, const Younger &younger) {
  if (count == 0 || younger.types.empty())
    return ArrayAttr();
  return b.getTypeArrayAttr(younger.types);
}

struct WaitsPass : public hk::impl::HKWaitsBase<WaitsPass> {
  using HKWaitsBase::HKWaitsBase;

  void runOnOperation() override {
    if (!checkKernels(getOperation(), arch, [&](func::FuncOp kernel, const TargetFacts &facts) {
          return place(kernel, facts, derive);
        }))
      signalPassFailure();
  }

  /// Analyses the kernel's waits, then inserts the derived ones and fills every wait's list.
  static bool place(func::FuncOp kernel, const TargetFacts &facts, bool derive) {
    WaitAnalysis analysis(facts, derive);
    analysis.runKernel(kernel);
    if (analysis.failed)
      return false;
    for (auto &[key, wait] : analysis.plan) {
      auto [op, counter] = key;
      OpBuilder b(op);
      SmallVector<Value> guarded(wait.guarded.begin(), wait.guarded.end());
      IntegerAttr count = b.getI32IntegerAttr(wait.count);
      ArrayAttr younger = youngerAttr(b, wait.count, wait.younger);
      if (counter == kLds)
        WaitLdsOp::create(b, op->getLoc(), count, guarded, younger);
      else
        WaitVmOp::create(b, op->getLoc(), count, guarded, younger);
    }
    for (auto &[op, values] : analysis.explicitGuards) {
      SmallVector<Value> guarded(values.begin(), values.end());
      OpBuilder b(op);
      if (auto w = dyn_cast<WaitLdsOp>(op)) {
        w.getGuardedMutable().assign(guarded);
        w.setYoungerAttr(youngerAttr(b, w.getCount(), analysis.explicitYounger[op]));
      } else if (auto w = dyn_cast<WaitVmOp>(op)) {
        w.getGuardedMutable().assign(guarded);
        w.setYoungerAttr(youngerAttr(b, w.getCount(), analysis.explicitYounger[op]));
      }
    }
    return true;
  }
};

} // namespace
