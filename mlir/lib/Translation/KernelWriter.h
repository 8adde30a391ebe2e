//===- KernelWriter.h - writes one kernel as C++ ----------------*- C++ -*-===//

#ifndef HK_LIB_TRANSLATION_KERNELWRITER_H
#define HK_LIB_TRANSLATION_KERNELWRITER_H

#include "CppEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::hk::detail {

class KernelWriter {
public:
  KernelWriter(CppEmitter &e) : e(e) {}

  LogicalResult writeKernel(func::FuncOp kernel);

private:
  CppEmitter &e;

  struct SharedPlace {
    std::string tile;       // `root[buffer]`
    std::string row0, col0; // empty when the value is a whole buffer
  };

  std::string n(Value v) { return e.name(v); }
  LogicalResult writeBlock(Block &block);
  LogicalResult writeOp(Operation *op);
  LogicalResult writeArith(Operation *op);
  LogicalResult writeFor(scf::ForOp loop);
  LogicalResult writeIf(scf::IfOp ifOp);
  LogicalResult writeWhile(scf::WhileOp loop);
  LogicalResult writeHK(Operation *op);
  SharedPlace placeOf(Value shared, Value buffer);
  CastOp storedConversion(Value v);
  LogicalResult writeWait(StringRef fn, int64_t count, ValueRange guarded, ArrayAttr younger,
                          Location loc);
  LogicalResult writeIteration(scf::ForOp loop);
  LogicalResult writeLoopBody(scf::ForOp loop, StringRef iv);
  LogicalResult assignAll(ValueRange targets, ValueRange values);
  std::string literal(TypedAttr value);
  LogicalResult scalarResult(Operation *op, StringRef expr);
};

} // namespace mlir::hk::detail

#endif // HK_LIB_TRANSLATION_KERNELWRITER_H
