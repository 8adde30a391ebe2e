//===- Tools.cpp - hk-opt and hk-translate as functions ---------------------===//

#include "hk/Tools.h"

#include "hk/HKDialect.h"
#include "hk/HKPasses.h"
#include "hk/Translation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

namespace mlir::hk {

void registerAllPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerTransformsPasses();
    registerPasses();
  });
}

int optMain(int argc, char **argv) {
  DialectRegistry registry;
  registry.insert<HKDialect, func::FuncDialect, arith::ArithDialect, scf::SCFDialect>();
  registerAllPasses();
  return asMainReturnCode(MlirOptMain(argc, argv, "hk-opt: the hk dialect's driver\n", registry));
}

int translateMain(int argc, char **argv) {
  static std::once_flag once;
  std::call_once(once, [] { registerToCppTranslation(); });
  return failed(mlirTranslateMain(argc, argv, "hk-translate: hk to C++\n")) ? 1 : 0;
}

} // namespace mlir::hk
