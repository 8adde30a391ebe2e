"""The compile cache under concurrency: processes that build the same kernel at once compile it
once, and no process ever reads a partial code object; a failed compile leaves no entry."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from hk.errors import CompileError
from hk.runtime import cache, toolchain as toolchain_lib

SOURCE = textwrap.dedent("""\
    #include <hip/hip_runtime.h>
    extern "C" __global__ void fill(float* out, float v) { out[threadIdx.x] = v * %d; }
    """)

# A builder counts its compiles in a shared file and holds the lock a while, so the others
# arrive while the entry does not exist yet. A reader polls for the entry and reads it the
# moment it appears: a partial file would show as a short or non-ELF read.
CHILD = textwrap.dedent("""\
    import hashlib, json, os, sys, time
    from hk.runtime import cache, compile as compile_lib, toolchain as toolchain_lib

    role, source, go = sys.argv[1], sys.argv[2], sys.argv[3]
    real = compile_lib.compile_hip

    def counted(*args, **kwargs):
        with open(os.environ["HK_TEST_COUNT"], "a") as f:
            f.write("%d\\n" % os.getpid())
        time.sleep(1.5)
        return real(*args, **kwargs)

    compile_lib.compile_hip = counted
    tc = toolchain_lib.find()
    while not os.path.exists(go):
        time.sleep(0.005)
    if role == "build":
        path, hit = cache.code_object(source, "gfx1100", toolchain=tc)
    else:
        k = cache.key(source, "gfx1100", tc)
        path, hit = os.path.join(cache.root(), k[:2], k + ".co"), True
        while not os.path.exists(path):
            pass
    with open(path, "rb") as f:
        data = f.read()
    print(json.dumps({"role": role, "hit": hit, "path": path, "size": len(data),
                      "elf": data[:4] == b"\\x7fELF", "sha": hashlib.sha256(data).hexdigest()}))
    """)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HK_TEST_COUNT", str(tmp_path / "compiles"))
    return tmp_path


def entries(root):
    found = []
    for dirpath, _, names in os.walk(root):
        found += [n for n in names if not n.endswith(".lock")]
    return found


def test_concurrent_builds_compile_once_and_never_read_a_partial_entry(fresh_cache):
    source = SOURCE % 3
    go = str(fresh_cache / "go")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    roles = ["build"] * 4 + ["read"] * 2
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, role, source, go], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for role in roles]
    time.sleep(2.0)  # let every process import and wait at the start line
    open(go, "w").close()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))

    with open(fresh_cache / "compiles") as f:
        assert len(f.read().split()) == 1  # one compile among four builders
    builders = [r for r in results if r["role"] == "build"]
    assert sorted(r["hit"] for r in builders) == [False, True, True, True]
    assert len({r["path"] for r in results}) == 1
    assert len({(r["sha"], r["size"]) for r in results}) == 1  # every read saw the whole file
    assert all(r["elf"] for r in results)
    assert entries(cache.root()) == [os.path.basename(results[0]["path"])]  # no staged leftovers


def test_a_failed_compile_leaves_no_entry(fresh_cache):
    tc = toolchain_lib.find()
    broken = SOURCE.replace("out[threadIdx.x]", "out[threadIdx.x") % 5
    with pytest.raises(CompileError) as e:
        cache.code_object(broken, "gfx1100", toolchain=tc)
    assert "expected ']'" in str(e.value)
    assert entries(cache.root()) == []
    # The next attempt compiles again rather than finding a half-written result.
    path, hit = cache.code_object(SOURCE % 5, "gfx1100", toolchain=tc)
    assert not hit and open(path, "rb").read(4) == b"\x7fELF"
    assert cache.code_object(SOURCE % 5, "gfx1100", toolchain=tc) == (path, True)
