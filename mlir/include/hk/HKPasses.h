//===- HKPasses.h - the verifying passes of hk ------------------*- C++ -*-===//

#ifndef HK_HKPASSES_H
#define HK_HKPASSES_H

#include "hk/HKDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace mlir::hk {

#define GEN_PASS_DECL
#include "hk/HKPasses.h.inc"

/// Options of hk-kernel-pipeline.
struct KernelPipelineOptions : public PassPipelineOptions<KernelPipelineOptions> {
  Option<std::string> arch{*this, "arch", llvm::cl::desc("target architecture"),
                           llvm::cl::init("gfx1100")};
  Option<bool> strict{*this, "strict",
                      llvm::cl::desc("make slow column-layout LDS reads an error"),
                      llvm::cl::init(false)};
  Option<bool> deriveWaits{*this, "derive-waits",
                           llvm::cl::desc("insert the waits a kernel leaves out"),
                           llvm::cl::init(true)};
};

/// structure -> LDS races -> fragments -> LDS allocation -> waits -> scalar reads -> budgets.
void buildKernelPipeline(OpPassManager &pm, const KernelPipelineOptions &options);

/// Registers every hk pass and hk-kernel-pipeline with the global registry.
void registerPasses();

#define GEN_PASS_REGISTRATION
#include "hk/HKPasses.h.inc"

} // namespace mlir::hk

#endif // HK_HKPASSES_H
