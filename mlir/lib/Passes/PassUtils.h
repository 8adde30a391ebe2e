//===- PassUtils.h - what the hk passes share -------------------*- C++ -*-===//

#ifndef HK_LIB_PASSES_PASSUTILS_H
#define HK_LIB_PASSES_PASSUTILS_H

#include "hk/HKDialect.h"
#include "hk/TargetFacts.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::hk {

/// The facts of `arch`; emits an error on `module` naming the known targets when it is unknown.
inline const TargetFacts *getTargetOrError(ModuleOp module, llvm::StringRef arch) {
  const TargetFacts *facts = lookupTarget(arch);
  if (!facts)
    module.emitError() << "unknown target architecture '" << arch << "'; use one of "
                       << knownTargets();
  return facts;
}

/// Calls `fn` on every kernel of `module`.
template <typename Fn>
void forEachKernel(ModuleOp module, Fn &&fn) {
  for (auto func : module.getOps<func::FuncOp>())
    if (isKernel(func))
      fn(func);
}

/// Runs `check(kernel, facts)` on every kernel of `module` for the target `arch`. False when the
/// target is unknown or any kernel's check fails (the check emits its own diagnostics).
template <typename Fn>
bool checkKernels(ModuleOp module, llvm::StringRef arch, Fn &&check) {
  const TargetFacts *facts = getTargetOrError(module, arch);
  if (!facts)
    return false;
  bool ok = true;
  forEachKernel(module, [&](func::FuncOp kernel) { ok &= check(kernel, *facts); });
  return ok;
}

/// VGPRs per lane a register value takes on `facts`' target (the budget pass and the
/// translation's comments use the same count).
int64_t vgprsOf(Type type, const TargetFacts &facts, int64_t warps = 1);

} // namespace mlir::hk

#endif // HK_LIB_PASSES_PASSUTILS_H
