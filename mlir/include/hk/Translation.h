//===- Translation.h - hk to HipKittens-model C++ ---------------*- C++ -*-===//

#ifndef HK_TRANSLATION_H
#define HK_TRANSLATION_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::hk {

/// Writes the kernels of `module` as C++ against the hk tile library (hk/include). `arch`
/// chooses target-specific code (the waits after asynchronous global->LDS copies); empty means
/// the module's hk.arch attribute, else gfx1100. Emits diagnostics and fails on anything the
/// translation does not know; writes nothing partial to `os` in that case.
LogicalResult translateToCpp(ModuleOp module, llvm::raw_ostream &os, llvm::StringRef arch = "");

/// Registers `--hk-to-cpp` with mlir-translate's registry.
void registerToCppTranslation();

} // namespace mlir::hk

#endif // HK_TRANSLATION_H
