"""Runs the lit suite of the hk dialect with the built tools on PATH.

    run_lit.py --tool=PATH [--tool=PATH ...] -- [lit arguments]

Its scratch (the tools' directory, lit's outputs) lives under the test's TEST_TMPDIR when Bazel
runs it, and is removed at the end either way.
"""

import os
import subprocess
import sys
import tempfile


def main(argv):
    tools, rest = [], []
    args = iter(argv[1:])
    for a in args:
        if a.startswith("--tool="):
            tools.append(os.path.abspath(a[len("--tool="):]))
        else:
            rest.append(a)
    with tempfile.TemporaryDirectory(prefix="hk-lit.", dir=os.environ.get("TEST_TMPDIR")) as scratch:
        bin_dir = os.path.join(scratch, "bin")
        os.mkdir(bin_dir)
        for tool in tools:
            os.symlink(tool, os.path.join(bin_dir, os.path.basename(tool)))
        env = dict(os.environ)
        env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
        env["HK_LIT_EXEC_ROOT"] = os.path.join(scratch, "out")
        os.mkdir(env["HK_LIT_EXEC_ROOT"])
        suite = os.path.dirname(os.path.abspath(__file__))
        cmd = [sys.executable, "-c", "import sys; from lit.main import main; sys.exit(main())",
               "-sv", suite] + rest
        return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
