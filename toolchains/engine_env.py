"""Builds (once) a virtualenv from a pinned requirements file, for the engine integration tests.

    python3 toolchains/engine_env.py --root ~/.cache/hk/venv-engines --name vllm --requirements R

The environment lives at <root>/<name>-<key>, the key a digest of the requirements and of the
interpreter, so a changed pin builds a new one beside the old. It is built under a temporary
name and renamed into place, under a lock: a crash leaves no half environment, and two builds
take turns. The scripts pip writes into bin/ (console commands, activate) name the temporary
directory; they are pointed at the final one before the rename. Prints the environment's
interpreter. Standard library only: the repository rule that runs it runs before any project
environment is known to Bazel.
"""

import argparse
import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys


@contextlib.contextmanager
def locked(path):
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def key_of(requirements, python):
    with open(requirements, "rb") as f:
        return hashlib.sha256(f.read() + b"\0" + os.path.realpath(python).encode()).hexdigest()[:16]


def relocate(bin_dir, old, new):
    """Rewrites the text files of bin_dir that name directory `old` (shebangs, activate scripts)
    to name `new`; returns the names of the files rewritten."""
    rewritten = []
    for entry in sorted(os.listdir(bin_dir)):
        path = os.path.join(bin_dir, entry)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if old.encode() not in data or b"\0" in data:
            continue
        mode = os.stat(path).st_mode
        with open(path, "wb") as f:
            f.write(data.replace(old.encode(), new.encode()))
        os.chmod(path, mode)
        rewritten.append(entry)
    return rewritten


def build(root, name, requirements, python, log=sys.stderr):
    env_dir = os.path.join(root, "%s-%s" % (name, key_of(requirements, python)))
    done = os.path.join(env_dir, ".hk-complete")
    if os.path.exists(done):
        return env_dir
    os.makedirs(root, exist_ok=True)
    with locked(os.path.join(root, name + ".lock")):
        if os.path.exists(done):
            return env_dir
        tmp = "%s.partial.%d" % (env_dir, os.getpid())
        shutil.rmtree(tmp, ignore_errors=True)
        print("engine_env: building the %s environment in %s" % (name, env_dir), file=log)
        subprocess.run([python, "-m", "venv", tmp], check=True)
        # The pins are a complete, resolved set (the engines' own requirements are looser than
        # what imports on a CPU build of torch): install exactly them.
        result = subprocess.run([os.path.join(tmp, "bin", "python"), "-m", "pip", "install", "--no-deps",
                                 "--disable-pip-version-check", "-r", requirements],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if result.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise SystemExit("engine_env: pip install -r %s failed:\n%s" % (requirements, result.stdout[-6000:]))
        relocate(os.path.join(tmp, "bin"), tmp, env_dir)
        open(os.path.join(tmp, ".hk-complete"), "w").close()
        shutil.rmtree(env_dir, ignore_errors=True)
        os.replace(tmp, env_dir)
    return env_dir


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--requirements", required=True)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    env_dir = build(os.path.expanduser(args.root), args.name, args.requirements, args.python)
    print(os.path.join(env_dir, "bin", "python"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
