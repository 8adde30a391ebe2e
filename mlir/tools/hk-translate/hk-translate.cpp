//===- hk-translate.cpp - hk to C++ ---------------------------------------===//
//
// mlir-translate with --hk-to-cpp: hk kernels to C++ on the hk tile library.
//
//===----------------------------------------------------------------------===//

#include "hk/Translation.h"

#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::hk::registerToCppTranslation();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "hk-translate: hk to C++\n")) ? 1 : 0;
}
