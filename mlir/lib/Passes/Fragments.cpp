//===- Fragments.cpp - hk-fragments ---------------------------------------===//
//
// Gives every MMA operand tile its fragment role and refuses tiles asked to play two roles,
// operand types the target's matrix cores lack, and (as a warning, or an error under
// strict=true) 16-bit column-layout tiles read from LDS at eight times the instructions (on
// targets without a transposing LDS read).
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "hk/HKPasses.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::hk {
#define GEN_PASS_DEF_HKFRAGMENTS
#include "hk/HKPasses.h.inc"
} // namespace mlir::hk

using namespace mlir;
using namespace mlir::hk;

namespace {

/// Values that must share one type, and so one role: an op's operand and result where the op
/// requires equal types, and the faces of a value carried by control flow.
class TiedValues {
public:
  explicit TiedValues(func::FuncOp kernel) {
    kernel.walk([&](Operation *op) {
      if (auto o = dyn_cast<UnaryOp>(op))
        tie(o.getX(), o.getResult());
      else if (auto o = dyn_cast<BinaryOp>(op))
        tie(o.getLhs(), o.getResult());
      else if (auto o = dyn_cast<SelectOp>(op)) {
        tie(o.getTrueValue(), o.getResult());
        tie(o.getFalseValue(), o.getResult());
      } else if (auto o = dyn_cast<MaskOp>(op))
        tie(o.getX(), o.getResult());
      else if (auto o = dyn_cast<BroadcastBinaryOp>(op))
        tie(o.getTile(), o.getResult());
      else if (auto o = dyn_cast<MmaOp>(op))
        tie(o.getC(), o.getResult());
      else
        forEachControlFlowTie(op, [&](Value a, Value b) { tie(a, b); });
    });
  }

  void tie(Value a, Value b) {
    if (isa<RegisterTileType>(a.getType()))
      classes.unionSets(a, b);
  }

  /// Every value tied to `v` (including itself).
  SmallVector<Value> members(Value v) {
    SmallVector<Value> out;
    auto leader = classes.findLeader(classes.insert(v));
    for (auto it = leader; it != classes.member_end(); ++it)
      out.push_back(*it);
    return out;
  }

  Value leader(Value v) { return classes.getOrInsertLeaderValue(v); }

private:
  llvm::EquivalenceClasses<Value> classes;
};

struct FragmentsPass : public hk::impl::HKFragmentsBase<FragmentsPass> {
  using HKFragmentsBase::HKFragmentsBase;

  void runOnOperation() override {
    if (!checkKernels(getOperation(), arch, [&](func::FuncOp kernel, const TargetFacts &facts) {
          bool ok = assignRoles(kernel, facts);
          return checkLdsLayouts(kernel, facts) && ok;
        }))
      signalPassFailure();
  }

  /// Checks the target has the MMA and records each operand's role; then rewrites the types.
  bool assignRoles(func::FuncOp kernel, const TargetFacts &facts) {
    TiedValues tied(kernel);
    // Leader of a tie class -> (role, the operand use that asked for it).
    llvm::DenseMap<Value, std::pair<Role, OpOperand *>> roles;
    bool ok = true;
    kernel.walk([&](MmaOp mma) {
      if (!checkTarget(mma, facts)) {
        ok = false;
        return;
      }
      for (auto [operand, role] : {std::pair{&mma.getAMutable(), Role::a},
                                   std::pair{&mma.getBMutable(), Role::b},
                                   std::pair{&mma.getCMutable(), Role::c}}) {
        Value leader = tied.leader(operand->get());
        auto [it, inserted] = roles.try_emplace(leader, role, operand);
        if (!inserted && it->second.first != role) {
          OpOperand *other = it->second.second;
          InFlightDiagnostic diag =
              mma.emitError() << "register tile is used as operand " << stringifyRole(role)
                              << " here and as operand " << stringifyRole(it->second.first)
                              << " of another mma; the two fragments need different register "
                                 "layouts, so give one of the uses its own copy (hk.cast)";
          diag.attachNote(other->getOwner()->getLoc()) << "the other use";
          ok = false;
        }
      }
    });
    if (!ok)
      return false;
    for (auto &[leader, entry] : roles)
      for (Value v : tied.members(leader))
        if (auto type = dyn_cast<RegisterTileType>(v.getType()))
          v.setType(type.withRole(entry.first));
    // Parameters may have been retyped: keep the signature in step with the entry block.
    kernel.setFunctionType(FunctionType::get(kernel.getContext(),
                                             kernel.getBody().front().getArgumentTypes(),
                                             kernel.getFunctionType().getResults()));
    return true;
  }

  /// What to use instead of an 8-bit float the target cannot multiply: its int8 instruction
  /// (named from targets.json's shape), or bf16.
  static std::string insteadOfFp8(const TargetFacts &facts) {
    for (const MmaShape &s : facts.mmaShapes)
      if (s.a == "i8")
        return llvm::formatv("use i8 (v_{0}_i32_{1}x{2}x{3}_{4}) or convert to bf16", facts.matrix, s.m,
                             s.n, s.k, facts.matrix == "wmma" ? "iu8" : "i8")
            .str();
    return "convert to bf16";
  }

  /// The target's matrix cores take this operand type, in multiples of their shape.
  bool checkTarget(MmaOp mma, const TargetFacts &facts) {
    Type element = mma.getA().getType().getElementType();
    const MmaShape *shape = facts.findMma(element);
    // fp8: the target needs an fp8 instruction, and it must read the format of the IR's type
    // (OCP f8E4M3FN / f8E5M2, or FNUZ), which is what the tile library's hk::fp8 types hold.
    if (isa<Float8E4M3FNType, Float8E5M2Type, Float8E4M3FNUZType, Float8E5M2FNUZType>(element)) {
      bool fnuz = isa<Float8E4M3FNUZType, Float8E5M2FNUZType>(element);
      if (!shape || facts.fp8Format.empty()) {
        mma.emitError() << facts.arch << " has no fp8 matrix instruction; " << insteadOfFp8(facts);
        return false;
      }
      if (fnuz != (facts.fp8Format == "fnuz")) {
        // The same numbers in the format the target reads (hk's name for it), or bf16.
        bool e4m3 = isa<Float8E4M3FNType, Float8E4M3FNUZType>(element);
        std::string other = std::string(e4m3 ? "hk.fp8e4m3" : "hk.fp8e5m2") + (fnuz ? "" : "fnuz");
        mma.emitError() << facts.arch << "'s fp8 matrix instructions read the "
                        << (fnuz ? "OCP" : "FNUZ") << " formats, not " << element << " (hk."
                        << dtypeName(element) << (fnuz ? "fnuz, FNUZ" : ", OCP") << "); use " << other
                        << " (" << (fnuz ? "OCP" : "FNUZ") << ") or convert to bf16";
        return false;
      }
    }
    if (!shape) {
      std::string have;
      for (const MmaShape &s : facts.mmaShapes)
        if (have.find(s.a.str()) == std::string::npos)
          have += (have.empty() ? "" : ", ") + s.a.str();
      mma.emitError() << facts.arch << "'s matrix cores take " << have << " operands but got "
                      << element;
      return false;
    }
    auto a = mma.getA().getType();
    int64_t k = mma.transposesA() ? a.getRows() : a.getCols();
    int64_t kUnit = shape->k;
    for (const MmaShape &s : facts.mmaShapes)
      if (s.a == shape->a)
        kUnit = std::min(kUnit, s.k);
    if (k % kUnit) {
      mma.emitError() << facts.arch << "'s " << dtypeName(element) << " matrix instruction takes K in "
                      << "multiples of " << kUnit << " but the operands have K = " << k;
      return false;
    }
    return true;
  }

  /// 16-bit col-layout tiles read from LDS take eight times the instructions, except where the
  /// target reads LDS transposed (gfx950's ds_read_b64_tr_b16: four elements per lane).
  bool checkLdsLayouts(func::FuncOp kernel, const TargetFacts &facts) {
    if (!facts.ldsTransposeRead.empty())
      return true;
    bool ok = true;
    kernel.walk([&](LdsLoadOp load) {
      auto tile = dyn_cast<RegisterTileType>(load.getType());
      if (!tile || tile.getLayout() != Layout::col || elementBytes(tile.getElementType()) != 2)
        return;
      auto diag = strict ? load.emitError() : load.emitWarning();
      diag << "16-bit register tile in col layout is read from LDS with 16-bit loads, eight times "
              "the instructions of a row-layout tile's 128-bit loads; store the operand transposed "
              "in LDS, load it in row layout and use the transposed mma form (ABt instead of AB)";
      ok &= !strict;
    });
    return ok;
  }
};

} // namespace
