//===- Pipeline.cpp - hk-kernel-pipeline ----------------------------------===//

#include "hk/HKPasses.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::hk;

void mlir::hk::buildKernelPipeline(OpPassManager &pm, const KernelPipelineOptions &options) {
  std::string arch = options.arch;
  pm.addPass(createHKStructure(HKStructureOptions{arch}));
  pm.addPass(createHKLdsRaces(HKLdsRacesOptions{arch}));
  pm.addPass(createHKFragments(HKFragmentsOptions{arch, options.strict}));
  pm.addPass(createHKLdsAllocation(HKLdsAllocationOptions{arch}));
  pm.addPass(createHKWaits(HKWaitsOptions{arch, options.deriveWaits}));
  pm.addPass(createHKScalarReads());
  pm.addPass(createHKBudgets(HKBudgetsOptions{arch}));
}

void mlir::hk::registerPasses() {
  registerHKPasses();
  PassPipelineRegistration<KernelPipelineOptions>(
      "hk-kernel-pipeline",
      "verify hk kernels for one target: structure, LDS races, fragments, LDS allocation, waits, "
      "scalar reads, budgets",
      buildKernelPipeline);
}
