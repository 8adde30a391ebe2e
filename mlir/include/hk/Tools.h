//===- Tools.h - hk-opt and hk-translate as functions -----------------------===//
//
// The drivers' mains, callable from the hk-opt and hk-translate executables and from the
// Python extension (the wheel's hk-opt and hk-translate run them in-process, on the one copy
// of MLIR the extension holds).
//
//===----------------------------------------------------------------------===//

#ifndef HK_TOOLS_H
#define HK_TOOLS_H

namespace mlir::hk {

/// Registers hk's passes, hk-kernel-pipeline and the generic transforms with MLIR's pass
/// registry, once per process however often it is called.
void registerAllPasses();

/// mlir-opt with the hk dialect, func/arith/scf, hk's passes and hk-kernel-pipeline, and the
/// generic transforms (canonicalize, cse, ...). Returns the process's exit code.
int optMain(int argc, char **argv);

/// mlir-translate with --hk-to-cpp. Returns the process's exit code.
int translateMain(int argc, char **argv);

} // namespace mlir::hk

#endif // HK_TOOLS_H
