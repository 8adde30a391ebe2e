"""hk._mlir: MLIR's Python bindings with the hk dialect, its passes and its translation.

Everything native lives in one shared object, _mlir_libs/_mlir.so: upstream's `_mlir` module
and hk's `_site_initialize_0` (registers hk, func, arith and scf with every Context) and `_hk`
(the pipeline and the translation). The two hk modules are loaded from that same file here,
before upstream's `_mlir_libs` package runs its site initialization, so that one copy of MLIR
serves all three.
"""

import importlib.machinery
import importlib.util
import os
import sys

_LIBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_mlir_libs")
_SHARED = os.path.join(_LIBS, "_mlir.so")


def _load_from_shared(name):
    qualified = __name__ + "._mlir_libs." + name
    if qualified in sys.modules:
        return sys.modules[qualified]
    loader = importlib.machinery.ExtensionFileLoader(qualified, _SHARED)
    spec = importlib.util.spec_from_file_location(qualified, _SHARED, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules[qualified] = module
    return module


if not os.path.exists(_SHARED):
    raise ImportError(
        "hk._mlir's native library is missing (%s): it is built by Bazel; run your program "
        "through a py_binary or py_test that depends on //hk (`./bazelw run //hk/compiler:hk-check "
        "-- --src=$PWD/FILE.py` checks the kernels of a file)" % _SHARED)

_load_from_shared("_site_initialize_0")
_hk = _load_from_shared("_hk")
