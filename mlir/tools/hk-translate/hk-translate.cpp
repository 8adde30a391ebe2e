//===- hk-translate.cpp - hk to C++ ---------------------------------------===//
//
// mlir-translate with --hk-to-cpp: hk kernels to C++ on the hk tile library. The driver itself
// is hk::translateMain, which the Python extension also runs (the wheel's hk-translate).
//
//===----------------------------------------------------------------------===//

#include "hk/Tools.h"

int main(int argc, char **argv) { return mlir::hk::translateMain(argc, argv); }
