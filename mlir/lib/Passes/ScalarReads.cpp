//===- ScalarReads.cpp - hk-scalar-reads ----------------------------------===//
//
// Reads of single elements of tensors the kernel never writes go through the scalar cache, and
// the kernel records which arguments are so read and which it writes, for the launch's overlap
// check.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "hk/HKPasses.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::hk {
#define GEN_PASS_DEF_HKSCALARREADS
#include "hk/HKPasses.h.inc"
} // namespace mlir::hk

using namespace mlir;
using namespace mlir::hk;

namespace {

/// The kernel's argument number of a tensor value, or -1 when it is not one of its arguments.
int64_t argumentOf(func::FuncOp kernel, Value tensor) {
  auto arg = dyn_cast<BlockArgument>(tensor);
  if (!arg || arg.getOwner() != &kernel.getBody().front())
    return -1;
  return arg.getArgNumber();
}

/// Whether `op` only reads the tensors among its operands.
bool onlyReads(Operation *op) {
  return isa<LoadOp, GatherOp, LoadScalarOp, CopyToLdsOp, CopyIssueOp, ExtentOp>(op);
}

struct ScalarReadsPass : public hk::impl::HKScalarReadsBase<ScalarReadsPass> {
  using HKScalarReadsBase::HKScalarReadsBase;

  void runOnOperation() override {
    forEachKernel(getOperation(), [](func::FuncOp kernel) { mark(kernel); });
  }

  static void mark(func::FuncOp kernel) {
    // Written arguments; `unknown` when a tensor that is not an argument is written (then no
    // argument can be shown unwritten: it might be that tensor).
    llvm::SetVector<int64_t> written;
    bool unknown = false;
    kernel.walk([&](Operation *op) {
      if (onlyReads(op))
        return;
      for (Value operand : op->getOperands()) {
        if (!isa<GlobalType>(operand.getType()))
          continue;
        int64_t arg = argumentOf(kernel, operand);
        if (arg < 0)
          unknown = true;
        else
          written.insert(arg);
      }
    });
    llvm::SetVector<int64_t> cached;
    kernel.walk([&](LoadScalarOp load) {
      int64_t arg = argumentOf(kernel, load.getSrc());
      bool safe = !unknown && arg >= 0 && !written.contains(arg);
      load.setScalarCache(safe);
      if (safe)
        cached.insert(arg);
    });
    SmallVector<int64_t> reads(cached.begin(), cached.end()), writes(written.begin(), written.end());
    llvm::sort(reads);
    llvm::sort(writes);
    MLIRContext *ctx = kernel.getContext();
    kernel->setAttr(kScalarReadsAttr, DenseI64ArrayAttr::get(ctx, reads));
    kernel->setAttr(kWritesAttr, DenseI64ArrayAttr::get(ctx, writes));
  }
};

} // namespace
