"""hk-opt and hk-translate as commands of the Python package (the wheel's console scripts).

They run the same drivers as the executables Bazel builds (mlir/tools), inside hk._mlir's one
copy of MLIR, so a wheel carries no second copy:

    hk-opt kernel.mlir --hk-kernel-pipeline='arch=gfx1100'
    hk-translate kernel.mlir --hk-to-cpp
"""

import sys


def _run(driver, name):
    from hk._mlir import _hk

    # Whatever Python buffered goes out before the driver writes to the same descriptors.
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(getattr(_hk, driver)([name] + sys.argv[1:]))


def opt():
    _run("opt_main", "hk-opt")


def translate():
    _run("translate_main", "hk-translate")
