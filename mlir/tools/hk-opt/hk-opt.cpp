//===- hk-opt.cpp - the hk dialect's opt driver ---------------------------===//
//
// mlir-opt with the hk dialect, its passes and hk-kernel-pipeline, plus func/arith/scf and
// the generic transforms (canonicalize, cse, ...).
//
//===----------------------------------------------------------------------===//

#include "hk/HKDialect.h"
#include "hk/HKPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::hk::HKDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::scf::SCFDialect>();
  mlir::registerTransformsPasses();
  mlir::hk::registerPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "hk-opt: the hk dialect's driver\n", registry));
}
