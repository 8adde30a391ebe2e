//===- TargetFacts.cpp - the table generated from targets.json -----------===//

#include "hk/TargetFacts.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::hk;

static const std::vector<TargetFacts> &allTargets() {
  static const std::vector<TargetFacts> targets = {
#define HK_TARGET(arch, family, wave, vgprs, agprs, perSimd, granule, sgprs, waves, lds, wg,      \
                  matrix, asyncLds, b128, tr, waitcnt, fp8, ...)                                  \
  TargetFacts{arch, family, wave, vgprs, agprs, perSimd, granule, sgprs, waves, lds, wg, matrix,   \
              asyncLds, b128, tr, waitcnt, fp8, std::vector<MmaShape> __VA_ARGS__},
#include "mlir/lib/Target/TargetFacts.inc"
#undef HK_TARGET
  };
  return targets;
}

const TargetFacts *mlir::hk::lookupTarget(llvm::StringRef arch) {
  for (const TargetFacts &t : allTargets())
    if (t.arch == arch)
      return &t;
  return nullptr;
}

std::string mlir::hk::knownTargets() {
  std::string out;
  for (const TargetFacts &t : allTargets()) {
    if (!out.empty())
      out += ", ";
    out += t.arch.str();
  }
  return out;
}

llvm::StringRef mlir::hk::dtypeName(Type element) {
  if (element.isBF16())
    return "bf16";
  if (element.isF16())
    return "fp16";
  if (element.isF32())
    return "fp32";
  if (element.isSignlessInteger(32))
    return "i32";
  if (element.isSignlessInteger(8))
    return "i8";
  if (isa<Float8E4M3FNType, Float8E4M3FNUZType>(element))
    return "fp8e4m3";
  if (isa<Float8E5M2Type, Float8E5M2FNUZType>(element))
    return "fp8e5m2";
  return "";
}

const MmaShape *TargetFacts::findMma(Type element) const {
  llvm::StringRef name = dtypeName(element);
  for (const MmaShape &s : mmaShapes)
    if (s.a == name)
      return &s;
  return nullptr;
}
