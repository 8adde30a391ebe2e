"""Runs the lit suite of the hk dialect with the built tools on PATH.

    run_lit.py --tool=PATH [--tool=PATH ...] -- [lit arguments]
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
    bin_dir = tempfile.mkdtemp(prefix="hk-lit-bin.")
    for tool in tools:
        os.symlink(tool, os.path.join(bin_dir, os.path.basename(tool)))
    env = dict(os.environ)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["HK_LIT_EXEC_ROOT"] = tempfile.mkdtemp(prefix="hk-lit-out.")
    suite = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, "-c", "import sys; from lit.main import main; sys.exit(main())",
           "-sv", suite] + rest
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
