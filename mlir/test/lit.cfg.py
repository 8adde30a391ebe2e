# lit configuration of the hk dialect's tests. Run through //mlir/test:lit_test, which puts
# hk-opt, hk-translate and the LLVM test tools on PATH.
import os

import lit.formats

config.name = "hk"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.environ.get("HK_LIT_EXEC_ROOT", config.test_source_root)
config.environment["PATH"] = os.environ["PATH"]
