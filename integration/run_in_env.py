"""Runs a pytest file inside an engine's environment with hk's wheels installed, as a user has
them: the wheels are unpacked into a directory of the test's own (their entry points included,
so the engine's plugin loader finds the plugin) and that directory, with the test's, is all the
environment sees of this repository.

    run_in_env.py --python=ENGINE_PYTHON --wheel=A.whl [--wheel=B.whl ...] TEST.py [pytest args]
"""

import argparse
import os
import subprocess
import sys
import zipfile

TOOLCHAIN_PATHS = ("HK_CLANG", "HK_ROCM_ROOT", "HK_ROCM_VERSION_FILE", "HK_LLVM_BIN")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True)
    parser.add_argument("--wheel", action="append", default=[])
    parser.add_argument("test")
    args, rest = parser.parse_known_args(argv)
    tmp = os.environ.get("TEST_TMPDIR") or os.path.abspath("tmp")
    site = os.path.join(tmp, "site")
    for wheel in args.wheel:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(site)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "RUNFILES"))}
    # The hermetic toolchain's paths are relative to the runfiles; the test runs elsewhere.
    for var in TOOLCHAIN_PATHS:
        if env.get(var):
            env[var] = os.path.abspath(env[var])
    test_dir = os.path.dirname(os.path.abspath(args.test))
    env.update(
        PYTHONPATH=os.pathsep.join([site, test_dir]),
        PYTHONDONTWRITEBYTECODE="1",
        HK_DEVICE=env.get("HK_DEVICE", "interp"),
        HK_CACHE_DIR=os.path.join(tmp, "hk-cache"),
        XDG_CACHE_HOME=os.path.join(tmp, "xdg-cache"),
        TRITON_CACHE_DIR=os.path.join(tmp, "triton-cache"),
        HF_HOME=os.path.join(tmp, "hf"),
        HF_HUB_OFFLINE="1",
        VLLM_CACHE_ROOT=os.path.join(tmp, "vllm-cache"),
        TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor-cache"),
        HOME=os.path.join(tmp, "home"),
        TMPDIR=os.path.join(tmp, "tmp"),  # tempfile's (an engine's scratch files, an example's model)
    )
    for var in ("HOME", "TMPDIR"):
        os.makedirs(env[var], exist_ok=True)
    python = os.path.abspath(args.python)
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp=" + os.path.join(tmp, "pytest"),
           "--rootdir=" + test_dir, os.path.abspath(args.test)] + rest
    return subprocess.call(cmd, env=env, cwd=tmp)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
