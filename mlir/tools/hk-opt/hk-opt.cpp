//===- hk-opt.cpp - the hk dialect's opt driver ---------------------------===//
//
// mlir-opt with the hk dialect, its passes and hk-kernel-pipeline, plus func/arith/scf and
// the generic transforms (canonicalize, cse, ...). The driver itself is hk::optMain, which the
// Python extension also runs (the wheel's hk-opt).
//
//===----------------------------------------------------------------------===//

#include "hk/Tools.h"

int main(int argc, char **argv) { return mlir::hk::optMain(argc, argv); }
