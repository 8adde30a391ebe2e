//===- LdsAllocation.cpp - hk-lds-allocation ------------------------------===//
//
// Places every LDS allocation of a kernel at a 16-byte aligned offset, in program order, and
// refuses kernels that need more LDS than the target has.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "hk/HKPasses.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::hk {
#define GEN_PASS_DEF_HKLDSALLOCATION
#include "hk/HKPasses.h.inc"
} // namespace mlir::hk

using namespace mlir;
using namespace mlir::hk;

namespace {

/// 128-bit LDS accesses need 16-byte alignment.
constexpr int64_t kLdsAlignment = 16;

int64_t bytesOf(Type type) {
  if (auto st = dyn_cast<SharedTileType>(type))
    return st.getBytes();
  return cast<SharedVectorType>(type).getBytes();
}

struct LdsAllocationPass : public hk::impl::HKLdsAllocationBase<LdsAllocationPass> {
  using HKLdsAllocationBase::HKLdsAllocationBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const TargetFacts *facts = getTargetOrError(module, arch);
    if (!facts)
      return signalPassFailure();
    bool failed = false;
    forEachKernel(module, [&](func::FuncOp kernel) {
      SmallVector<LdsAllocOp> allocs;
      int64_t end = 0;
      kernel.walk([&](LdsAllocOp alloc) {
        int64_t offset = llvm::alignTo(end, kLdsAlignment);
        alloc.setOffset(offset);
        end = offset + bytesOf(alloc.getType());
        allocs.push_back(alloc);
      });
      kernel->setAttr("hk.lds_bytes",
                      IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), end));
      if (end <= facts->ldsBytes)
        return;
      InFlightDiagnostic diag = kernel.emitError()
                                << "kernel @" << kernel.getSymName() << " needs " << end
                                << " bytes of LDS but " << facts->arch << " has "
                                << facts->ldsBytes
                                << " per workgroup; use fewer buffers or smaller shared tiles";
      for (LdsAllocOp alloc : allocs)
        diag.attachNote(alloc.getLoc())
            << "allocation of " << alloc.getType() << ": " << bytesOf(alloc.getType())
            << " bytes at offset " << *alloc.getOffset();
      failed = true;
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
