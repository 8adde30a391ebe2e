"""The compiler: the MLIR context, the hk-kernel-pipeline and the C++ translation."""
