//===- LdsRaces.cpp - hk-lds-races ----------------------------------------===//
//
// The waves of a workgroup are ordered only by barriers. Between two barriers, an LDS access
// that another wave's access to the same elements may precede or follow (a read of what another
// wave writes, a write over what another wave reads or writes) is a race: what it reads or
// leaves depends on how the waves happen to be scheduled. The pass keeps the accesses since the
// last barrier and compares each new access with them, for every pair of different waves, on
// the places both touch (the allocation, the buffer, the rows and the columns), evaluated as
// affine forms per wave (IndexForms.h). A workgroup copy is every wave's: each wave moves a
// share of it. A race whatever the indices' values is an error; one the indices cannot rule out
// is a warning, and the interpreter decides it on a run.
//
//===----------------------------------------------------------------------===//

#include "Divergence.h"
#include "IndexForms.h"
#include "PassUtils.h"
#include "hk/HKPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::hk {
#define GEN_PASS_DEF_HKLDSRACES
#include "hk/HKPasses.h.inc"
} // namespace mlir::hk

using namespace mlir;
using namespace mlir::hk;

namespace {

/// Whether a wave runs an operation: never, whenever the workgroup reaches it, or only on
/// values the indices do not tell.
enum class Runs { No, Yes, Maybe };

/// The LDS one wave's access touches: rows x cols elements of one buffer of an allocation.
struct Place {
  Form buffer, row, col;
  int64_t rows = 1, cols = 1;

  bool operator==(const Place &o) const {
    return buffer == o.buffer && row == o.row && col == o.col && rows == o.rows && cols == o.cols;
  }
};

/// One LDS access, as every wave of the workgroup makes it.
struct Access {
  Operation *op;
  Value root;  // the hk.lds_alloc
  bool write;
  bool group;  // a workgroup copy: every wave moves a share of the place
  SmallVector<Place> at;  // per wave
  SmallVector<Runs> runs; // per wave

  bool operator==(const Access &o) const { return op == o.op && at == o.at && runs == o.runs; }
};

using State = std::vector<Access>;

void addUnique(State &s, const Access &a) {
  if (!llvm::is_contained(s, a))
    s.push_back(a);
}

/// The value of an integer or index constant (an i1 as 0 or 1).
std::optional<int64_t> getConstantIntValue(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  auto attr = c ? dyn_cast<IntegerAttr>(c.getValue()) : IntegerAttr();
  if (!attr)
    return std::nullopt;
  return attr.getType().isInteger(1) ? (int64_t)attr.getValue().getBoolValue() : attr.getInt();
}

/// Whether a barrier stands directly in a loop's body, so that every wave is in the same
/// iteration between two barriers.
bool isLockstep(Operation *loop) {
  for (Region &region : loop->getRegions())
    for (Block &block : region)
      for (Operation &op : block)
        if (isa<BarrierOp>(op))
          return true;
  return false;
}

/// Index values as affine forms for one wave.
class Evaluator {
public:
  Evaluator(func::FuncOp kernel, int64_t warps) : divergence(kernel), warps(warps) {
    kernel.walk([&](Operation *op) {
      if (isa<scf::ForOp, scf::WhileOp>(op) && !isLockstep(op))
        looseLoops.insert(op);
    });
  }

  Atoms atoms;

  Form eval(Value v, int wave) {
    auto key = std::make_pair(v, wave);
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
    Form f = compute(v, wave);
    memo[key] = f;
    return f;
  }

  /// Whether `cond` (an i1) holds for `wave`: Yes, No, or Maybe when the forms do not tell.
  Runs truth(Value cond, int wave) {
    if (std::optional<int64_t> c = getConstantIntValue(cond))
      return *c ? Runs::Yes : Runs::No;
    Operation *op = cond.getDefiningOp();
    if (auto cmp = dyn_cast_or_null<arith::CmpIOp>(op))
      return compare(cmp, wave);
    if (auto a = dyn_cast_or_null<arith::AndIOp>(op)) {
      Runs l = truth(a.getLhs(), wave), r = truth(a.getRhs(), wave);
      return l == Runs::No || r == Runs::No ? Runs::No
             : l == Runs::Yes && r == Runs::Yes ? Runs::Yes : Runs::Maybe;
    }
    if (auto o = dyn_cast_or_null<arith::OrIOp>(op)) {
      Runs l = truth(o.getLhs(), wave), r = truth(o.getRhs(), wave);
      return l == Runs::Yes || r == Runs::Yes ? Runs::Yes
             : l == Runs::No && r == Runs::No ? Runs::No : Runs::Maybe;
    }
    return Runs::Maybe;
  }

  bool isDivergent(Value v) const { return divergence.contains(v); }

  /// An opaque value: every wave's own when the waves may hold different ones (it depends on
  /// the wave's id, or the waves may be in different iterations of a loop that defines it).
  Form opaque(Value v, int wave) {
    bool own = divergence.contains(v);
    Operation *scope = isa<BlockArgument>(v) ? cast<BlockArgument>(v).getOwner()->getParentOp()
                                              : v.getDefiningOp()->getParentOp();
    for (Operation *p = scope; p && !own; p = p->getParentOp())
      own = looseLoops.contains(p);
    return Form::of(atoms.opaque(v, own ? wave : Atom::kShared, 0));
  }

private:
  Divergence divergence;
  int64_t warps;
  llvm::DenseSet<Operation *> looseLoops;
  llvm::DenseMap<std::pair<Value, int>, Form> memo;

  std::optional<int64_t> positive(Value v) {
    std::optional<int64_t> c = getConstantIntValue(v);
    return c && *c > 0 ? c : std::nullopt;
  }

  Form compute(Value v, int wave) {
    if (std::optional<int64_t> c = getConstantIntValue(v))
      return Form::constant(*c);
    Operation *op = v.getDefiningOp();
    if (!op)
      return opaque(v, wave);
    auto binary = [&](Operation *o) {
      return std::make_pair(eval(o->getOperand(0), wave), eval(o->getOperand(1), wave));
    };
    return llvm::TypeSwitch<Operation *, Form>(op)
        .Case([&](WarpIdOp) { return Form::constant(wave); })
        .Case([&](NumWarpsOp) { return Form::constant(warps); })
        .Case<arith::AddIOp>([&](auto o) {
          auto [a, b] = binary(o);
          return a + b;
        })
        .Case<arith::SubIOp>([&](auto o) {
          auto [a, b] = binary(o);
          return a - b;
        })
        .Case<arith::MulIOp>([&](auto o) {
          auto [a, b] = binary(o);
          if (a.isConstant())
            return b * a.c;
          return b.isConstant() ? a * b.c : opaque(v, wave);
        })
        .Case<arith::ShLIOp>([&](auto o) {
          std::optional<int64_t> k = getConstantIntValue(o.getRhs());
          return k && *k >= 0 && *k < 31 ? eval(o.getLhs(), wave) * (int64_t(1) << *k)
                                         : opaque(v, wave);
        })
        .Case<arith::RemSIOp, arith::RemUIOp>([&](auto o) {
          std::optional<int64_t> m = positive(o.getRhs());
          return m ? atoms.rem(eval(o.getLhs(), wave), *m) : opaque(v, wave);
        })
        .Case<arith::DivSIOp, arith::DivUIOp>([&](auto o) {
          std::optional<int64_t> m = positive(o.getRhs());
          return m ? atoms.div(eval(o.getLhs(), wave), *m) : opaque(v, wave);
        })
        .Case<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp,
              arith::TruncIOp>([&](auto o) { return eval(o.getIn(), wave); })
        .Case<arith::SelectOp>([&](arith::SelectOp o) {
          Runs t = truth(o.getCondition(), wave);
          return t == Runs::Yes  ? eval(o.getTrueValue(), wave)
                 : t == Runs::No ? eval(o.getFalseValue(), wave)
                                 : opaque(v, wave);
        })
        .Case<arith::MaxSIOp, arith::MinSIOp>([&](auto o) {
          auto [a, b] = binary(o);
          if (!a.isConstant() || !b.isConstant())
            return opaque(v, wave);
          bool max = isa<arith::MaxSIOp>(o.getOperation());
          return Form::constant(max ? std::max(a.c, b.c) : std::min(a.c, b.c));
        })
        .Default([&](Operation *) { return opaque(v, wave); });
  }

  Runs compare(arith::CmpIOp cmp, int wave) {
    Form a = eval(cmp.getLhs(), wave), b = eval(cmp.getRhs(), wave), d = a - b;
    using P = arith::CmpIPredicate;
    P pred = cmp.getPredicate();
    if (!d.isConstant()) {
      Verdict equal = atoms.overlap(a, 1, b, 1);
      if (equal == Verdict::Never && (pred == P::eq || pred == P::ne))
        return pred == P::ne ? Runs::Yes : Runs::No;
      return Runs::Maybe;
    }
    auto yes = [](bool b) { return b ? Runs::Yes : Runs::No; };
    switch (pred) {
    case P::eq: return yes(d.c == 0);
    case P::ne: return yes(d.c != 0);
    case P::slt: return yes(d.c < 0);
    case P::sle: return yes(d.c <= 0);
    case P::sgt: return yes(d.c > 0);
    case P::sge: return yes(d.c >= 0);
    default: return Runs::Maybe; // unsigned: the difference alone does not tell
    }
  }
};

/// The race check of one kernel.
class RaceCheck {
public:
  RaceCheck(func::FuncOp kernel, int64_t warps) : kernel(kernel), warps(warps), eval(kernel, warps) {}

  /// Runs the check; emits every finding; false when one is an error.
  bool run() {
    State s;
    block(kernel.getBody().front(), s);
    bool ok = true;
    for (auto &[key, verdict] : findings) {
      report(key.first, key.second, verdict);
      ok &= verdict != Verdict::Always;
    }
    return ok;
  }

private:
  func::FuncOp kernel;
  int64_t warps;
  Evaluator eval;
  llvm::DenseMap<Operation *, Access> accesses;
  /// (the later access, the earlier one) -> the strongest verdict found.
  llvm::MapVector<std::pair<Operation *, Operation *>, Verdict> findings;

  void block(Block &b, State &s) {
    for (Operation &op : b)
      operation(&op, s);
  }

  void operation(Operation *op, State &s) {
    if (isa<BarrierOp>(op)) {
      s.clear();
      return;
    }
    if (std::optional<Access> a = accessOf(op)) {
      for (const Access &earlier : s)
        note(*a, &earlier, race(earlier, *a));
      if (a->write && !a->group) // every wave runs this store: do the waves' places meet?
        note(*a, nullptr, race(*a, *a));
      addUnique(s, *a);
      return;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return iterate(loop, {loop.getBody()}, s);
    if (auto loop = dyn_cast<scf::WhileOp>(op))
      return iterate(loop, {loop.getBeforeBody(), loop.getAfterBody()}, s);
    if (op->getNumRegions() == 0)
      return;
    // Branches: each region from the same state; an empty one is the path around them.
    State merged;
    for (Region &region : op->getRegions()) {
      State r = s;
      if (!region.empty())
        block(region.front(), r);
      for (const Access &a : r)
        addUnique(merged, a);
    }
    s = std::move(merged);
  }

  /// A loop: its body from the state before it and from its own end, until the accesses that
  /// reach its head stop growing. Accesses carried over the back edge belong to the previous
  /// iteration: their loop variable is one step back, and other values the loop defines are
  /// another iteration's.
  void iterate(Operation *loop, ArrayRef<Block *> body, State &s) {
    State head = s, exits = s;
    constexpr int kMaxRounds = 8;
    for (int round = 0; round < kMaxRounds; ++round) {
      State end = head;
      for (Block *b : body) {
        block(*b, end);
        // A for loop leaves after its body, a while loop after its condition.
        if (b == body.front())
          for (const Access &a : end)
            addUnique(exits, a);
      }
      State next = head;
      for (const Access &a : end)
        addUnique(next, carry(a, loop));
      if (next.size() == head.size())
        break;
      head = std::move(next);
    }
    s = std::move(exits);
  }

  Access carry(Access a, Operation *loop) {
    auto forLoop = dyn_cast<scf::ForOp>(loop);
    for (int wave = 0; wave < (int)a.at.size(); ++wave) {
      std::optional<Form> step;
      if (forLoop && isLockstep(loop))
        step = eval.eval(forLoop.getStep(), wave);
      Place &place = a.at[wave];
      for (Form *f : {&place.buffer, &place.row, &place.col})
        *f = previous(*f, loop, step, wave);
    }
    return a;
  }

  /// `f` as the previous iteration of `loop` had it.
  Form previous(const Form &f, Operation *loop, const std::optional<Form> &step, int wave) {
    Form out = Form::constant(f.c);
    for (auto [id, k] : f.terms) {
      Atom atom = eval.atoms[id];
      Form term = Form::of(id);
      if (atom.kind != Atom::Opaque) {
        Form arg = previous(atom.arg, loop, step, wave);
        term = atom.kind == Atom::Rem ? eval.atoms.rem(arg, atom.m) : eval.atoms.div(arg, atom.m);
      } else if (definedIn(atom.value, loop)) {
        auto forLoop = dyn_cast<scf::ForOp>(loop);
        if (step && atom.gen == 0 && forLoop && atom.value == forLoop.getInductionVar())
          term = term - *step;
        else
          term = Form::of(eval.atoms.opaque(atom.value, atom.wave, Atom::kAnyEarlier));
      }
      out = out + term * k;
    }
    return out;
  }

  static bool definedIn(Value v, Operation *loop) {
    Operation *scope = isa<BlockArgument>(v) ? cast<BlockArgument>(v).getOwner()->getParentOp()
                                              : v.getDefiningOp();
    return loop->isAncestor(scope);
  }

  std::optional<Access> accessOf(Operation *op) {
    if (auto it = accesses.find(op); it != accesses.end())
      return it->second;
    Value shared, buffer;
    bool write = false, group = false;
    if (auto o = dyn_cast<LdsLoadOp>(op))
      shared = o.getSrc(), buffer = o.getBuffer();
    else if (auto o = dyn_cast<LdsStoreOp>(op))
      shared = o.getDst(), buffer = o.getBuffer(), write = true;
    else if (auto o = dyn_cast<CopyToLdsOp>(op))
      shared = o.getDst(), buffer = o.getBuffer(), write = group = true;
    else if (auto o = dyn_cast<CopyCommitOp>(op))
      shared = o.getDst(), buffer = o.getBuffer(), write = group = true;
    else if (auto o = dyn_cast<CopyFromLdsOp>(op))
      shared = o.getSrc(), buffer = o.getBuffer(), group = true;
    else
      return std::nullopt;
    Access a{op, Value(), write, group, {}, {}};
    for (int wave = 0; wave < warps; ++wave) {
      a.at.push_back(placeOf(shared, buffer, wave, a.root));
      a.runs.push_back(runs(op, wave));
    }
    accesses[op] = a;
    return a;
  }

  Place placeOf(Value shared, Value buffer, int wave, Value &root) {
    Place p;
    p.buffer = eval.eval(buffer, wave);
    if (auto st = dyn_cast<SharedTileType>(shared.getType()))
      p.rows = st.getRows(), p.cols = st.getCols();
    else
      p.rows = cast<SharedVectorType>(shared.getType()).getLength();
    // A view's place within its source: offsets add up the chain of subtiles.
    while (auto sub = shared.getDefiningOp<SubtileOp>()) {
      auto view = cast<SharedTileType>(sub.getType());
      p.buffer = p.buffer + eval.eval(sub.getBuffer(), wave);
      p.row = p.row + eval.eval(sub.getRow(), wave) * view.getRows();
      p.col = p.col + eval.eval(sub.getCol(), wave) * view.getCols();
      shared = sub.getSrc();
    }
    root = shared;
    return p;
  }

  /// Whether `wave` runs `op`, from the branches around it that depend on the wave.
  Runs runs(Operation *op, int wave) {
    Runs result = Runs::Yes;
    for (Operation *child = op, *p = op->getParentOp(); p != kernel.getOperation(); child = p, p = p->getParentOp()) {
      auto ifOp = dyn_cast<scf::IfOp>(p);
      if (!ifOp || !eval.isDivergent(ifOp.getCondition()))
        continue;
      Runs t = eval.truth(ifOp.getCondition(), wave);
      bool inThen = child->getParentRegion() == &ifOp.getThenRegion();
      if (t == Runs::Maybe)
        result = Runs::Maybe;
      else if ((t == Runs::Yes) != inThen)
        return Runs::No;
    }
    return result;
  }

  Verdict overlap(const Place &p, const Place &q) {
    Atoms &atoms = eval.atoms;
    return std::min({atoms.overlap(p.buffer, 1, q.buffer, 1), atoms.overlap(p.row, p.rows, q.row, q.rows),
                     atoms.overlap(p.col, p.cols, q.col, q.cols)});
  }

  /// Whether `a` (earlier) and `b` race: both on one allocation, one of them a write, and
  /// another wave's access to the same elements.
  Verdict race(const Access &a, const Access &b) {
    if (a.root != b.root || (!a.write && !b.write) || warps == 1)
      return Verdict::Never;
    Verdict found = Verdict::Never;
    for (int wb = 0; wb < warps && found != Verdict::Always; ++wb) {
      if (b.runs[wb] == Runs::No)
        continue;
      for (int wa = 0; wa < warps; ++wa) {
        // A wave's own accesses are ordered, but a workgroup copy is every wave's.
        if (a.runs[wa] == Runs::No || (wa == wb && !a.group && !b.group))
          continue;
        Verdict v = overlap(a.at[wa], b.at[wb]);
        if (a.runs[wa] == Runs::Maybe || b.runs[wb] == Runs::Maybe)
          v = std::min(v, Verdict::Maybe);
        found = std::max(found, v);
      }
    }
    return found;
  }

  /// Records a race of `later` with `earlier` (null: with itself, run by several waves).
  void note(const Access &later, const Access *earlier, Verdict v) {
    if (v == Verdict::Never)
      return;
    Verdict &known = findings[{later.op, earlier ? earlier->op : nullptr}];
    known = std::max(known, v);
  }

  void report(Operation *later, Operation *earlier, Verdict v) {
    bool always = v == Verdict::Always;
    InFlightDiagnostic diag = always ? later->emitError() : later->emitWarning();
    diag << "'" << later->getName() << "' ";
    if (!earlier) {
      diag << (always ? "writes" : "may write")
           << " the same LDS from several waves with no barrier between them; give each wave its "
              "own part (index it by hk.arch.warp_id()) or let one wave write it";
      return;
    }
    const Access &b = accesses.find(later)->second, &a = accesses.find(earlier)->second;
    StringRef what = b.write ? "writes" : "reads";
    StringRef other = a.write ? "writes" : "reads";
    diag << (always ? what : (b.write ? "may write" : "may read")) << " LDS that another wave "
         << other << ", with no barrier between them";
    if (!always)
      diag << " (the indices do not tell whether the waves touch the same elements)";
    diag << "; waves are ordered only by barriers: add hk.arch.barrier() between the "
         << (a.write ? "write" : "read") << " and this " << (b.write ? "write" : "read");
    if (!always)
      diag << " if they can (HK_DEVICE=interp checks it on a run)";
    diag.attachNote(earlier->getLoc())
        << (a.group ? "the workgroup copy, whose share every wave moves"
                    : a.write ? "the write by another wave" : "the read by another wave");
  }
};

struct LdsRacesPass : public hk::impl::HKLdsRacesBase<LdsRacesPass> {
  using HKLdsRacesBase::HKLdsRacesBase;

  void runOnOperation() override {
    if (!checkKernels(getOperation(), arch, [&](func::FuncOp kernel, const TargetFacts &) {
          return RaceCheck(kernel, getKernelWarps(kernel)).run();
        }))
      signalPassFailure();
  }
};

} // namespace
