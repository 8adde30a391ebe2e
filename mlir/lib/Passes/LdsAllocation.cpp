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
    if (!checkKernels(getOperation(), arch, [&](func::FuncOp kernel, const TargetFacts &facts) {
          return allocate(kernel, facts);
        }))
      signalPassFailure();
  }

  static bool allocate(func::FuncOp kernel, const TargetFacts &facts) {
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
    if (end <= facts.ldsBytes)
      return true;
    InFlightDiagnostic diag = kernel.emitError()
                              << "kernel @" << kernel.getSymName() << " needs " << end
                              << " bytes of LDS but " << facts.arch << " has "
                              << facts.ldsBytes
                              << " per workgroup; use fewer buffers or smaller shared tiles";
    for (LdsAllocOp alloc : allocs)
      diag.attachNote(alloc.getLoc())
          << "allocation of " << alloc.getType() << ": " << bytesOf(alloc.getType())
          << " bytes at offset " << *alloc.getOffset();
    return false;
  }
};

} // namespace
