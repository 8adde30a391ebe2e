//===- TargetFacts.h - per-architecture facts for the passes ----*- C++ -*-===//
//
// The numbers come from hk/target/targets.json, the one source Python reads too.
//
//===----------------------------------------------------------------------===//

#ifndef HK_TARGETFACTS_H
#define HK_TARGETFACTS_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::hk {

struct MmaShape {
  llvm::StringRef a, b, acc; // element types as targets.json spells them
  int64_t m, n, k;
};

struct TargetFacts {
  llvm::StringRef arch, family;
  int64_t waveSize, maxVgprs, maxAgprs, vgprsPerSimd, vgprGranule, maxSgprs, maxWavesPerSimd;
  int64_t ldsBytes, maxWorkgroupSize;
  llvm::StringRef matrix;
  bool asyncGlobalToLds;
  llvm::StringRef ldsReadB128;
  llvm::StringRef ldsTransposeRead; // empty where the target has none
  llvm::StringRef waitcnt;
  llvm::StringRef fp8Format; // "ocp", "fnuz", or empty where the target has no fp8
  std::vector<MmaShape> mmaShapes;

  /// Whether the matrix cores take operands of `element` (and which K), for an MxN output.
  const MmaShape *findMma(Type element) const;
};

/// The facts of `arch`, or null when hk does not know it.
const TargetFacts *lookupTarget(llvm::StringRef arch);

/// The architectures hk knows, comma-separated (for error messages).
std::string knownTargets();

/// The targets.json spelling of an MLIR element type ("bf16", "fp16", "fp8e4m3", ...).
llvm::StringRef dtypeName(Type element);

} // namespace mlir::hk

#endif // HK_TARGETFACTS_H
