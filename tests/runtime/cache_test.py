"""The compile cache under concurrency: processes that build the same kernel at once compile it
once, and no process ever reads a partial code object; a failed compile leaves no entry. A
damaged entry (a flipped bit in its code or its metadata) is rebuilt with a warning."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
from elftools.elf.elffile import ELFFile

from hk.errors import CompileError, HKWarning
from hk.runtime import cache, metadata, toolchain as toolchain_lib

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
        found += [n for n in names if not n.endswith((".lock", ".sha256"))]
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


def section_range(path, name):
    with open(path, "rb") as f:
        section = ELFFile(f).get_section_by_name(name)
        return section["sh_offset"], section["sh_size"]


def text_of(path):
    """The code of an entry (the whole file differs between builds: clang names a per-source
    symbol after the temporary file it compiled)."""
    start, size = section_range(path, ".text")
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(size)


def flip(path, offset, bit=0):
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ (1 << bit)]))


def vgpr_count_offset(path):
    """The file offset of the .vgpr_count value in the metadata note (a msgpack positive fixint)."""
    start, size = section_range(path, ".note")
    with open(path, "rb") as f:
        f.seek(start)
        note = f.read(size)
    at = note.index(b".vgpr_count") + len(b".vgpr_count")
    assert note[at] < 0x80  # a fixint: flipping its low bit changes the count and nothing else
    return start + at


def rebuilt_with_warning(source, tc, original):
    with pytest.warns(HKWarning, match="damaged: its digest does not match.*rebuilding it"):
        path, hit = cache.code_object(source, "gfx1100", toolchain=tc)
    assert not hit
    assert text_of(path) == original
    assert cache.code_object(source, "gfx1100", toolchain=tc) == (path, True)  # intact again


def test_a_flipped_bit_in_text_is_rebuilt_with_a_warning_not_launched(fresh_cache):
    tc = toolchain_lib.find()
    source = SOURCE % 7
    path, hit = cache.code_object(source, "gfx1100", toolchain=tc)
    assert not hit
    original = text_of(path)
    start, size = section_range(path, ".text")
    assert size > 0
    flip(path, start + size // 2, bit=3)
    assert text_of(path) != original
    rebuilt_with_warning(source, tc, original)


def test_a_flipped_bit_in_the_metadata_is_rebuilt_with_a_warning(fresh_cache):
    tc = toolchain_lib.find()
    source = SOURCE % 11
    path, _ = cache.code_object(source, "gfx1100", toolchain=tc)
    original = text_of(path)
    vgprs = metadata.read(path)[0].vgprs
    flip(path, vgpr_count_offset(path))
    assert metadata.read(path)[0].vgprs != vgprs  # the gate would read a wrong count
    rebuilt_with_warning(source, tc, original)
    assert metadata.read(path)[0].vgprs == vgprs


def test_a_missing_or_truncated_digest_is_damage_too(fresh_cache):
    tc = toolchain_lib.find()
    source = SOURCE % 13
    path, _ = cache.code_object(source, "gfx1100", toolchain=tc)
    original = text_of(path)
    digest = path[:-len(".co")] + ".sha256"
    with open(digest, "r+") as f:
        f.truncate(10)
    rebuilt_with_warning(source, tc, original)
    os.unlink(digest)
    with pytest.warns(HKWarning, match="damaged: unreadable"):
        assert cache.code_object(source, "gfx1100", toolchain=tc) == (path, False)


def test_a_kernel_build_after_damaged_metadata_warns_and_gates_the_real_counts(fresh_cache):
    import hk

    def body(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[0, 0, 0, 0] = hk.math.exp(x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64)))

    first = hk.kernel(body, grid=(1,)).build("gfx1100")
    flip(first.path, vgpr_count_offset(first.path))
    assert metadata.read(first.path)[0].vgprs != first.meta.vgprs
    # A new Kernel object has no in-process build: it reads the entry from disk.
    with pytest.warns(HKWarning, match="damaged") as caught:
        again = hk.kernel(body, grid=(1,)).build("gfx1100")
    damaged = [w for w in caught if issubclass(w.category, HKWarning)]
    assert [w.filename for w in damaged] == [__file__]  # once, at the user's line
    assert not again.cached and again.path == first.path
    assert again.meta.vgprs == first.meta.vgprs
