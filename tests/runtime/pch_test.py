"""The tile library's precompiled headers: a kernel compiled with them is the same object, byte
for byte, as one compiled without, on every target; one PCH is made per key and reused; a
damaged one is removed with a warning and the compile still succeeds; sources that do not begin
with the library's include, and HK_PCH=0, never use one."""

import os

import pytest

import hk
from hk.errors import CompileError, HKWarning
from hk.runtime import cache, compile as compile_lib, pch, toolchain as toolchain_lib


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps=1)
def scaled_add(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32], s: float):
    i = hk.arch.block_idx.x
    t = hk.RT(hk.fp32, 16, 64)
    out[0, 0, i, 0] = x[0, 0, i, 0].load(t) * s + y[0, 0, i, 0].load(t)


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps=1)
def row_max(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32]):
    i = hk.arch.block_idx.x
    t = x[0, 0, i, 0].load(hk.RT(hk.fp32, 16, 64))
    out[0, 0, i, 0] = hk.sub_row(t, hk.row_max(t))


def compile_one(tmp_path, name, cpp, arch, pch_dir):
    src = tmp_path / (name + ".cpp")
    src.write_text(cpp)
    out = tmp_path / (name + (".pch" if pch_dir else "") + ".co")
    compile_lib.compile_hip(str(src), arch, str(out), toolchain=toolchain_lib.find(),
                            include_dirs=[cache.include_dir()], pch_dir=pch_dir)
    return out.read_bytes()


def pchs(directory):
    return sorted(p for p in os.listdir(directory) if p.endswith(".pch")) if os.path.isdir(directory) else []


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201", "gfx942", "gfx950"])
def test_same_object_with_and_without(tmp_path, arch):
    pch_dir = str(tmp_path / "pch")
    cpp = scaled_add.source(arch)
    assert pch.takes_prefix(cpp)
    plain = compile_one(tmp_path, "k", cpp, arch, None)
    assert pchs(pch_dir) == []
    with_pch = compile_one(tmp_path, "k", cpp, arch, pch_dir)
    assert plain[:4] == b"\x7fELF"
    assert with_pch == plain
    assert len(pchs(pch_dir)) == 1


def test_one_pch_per_key_reused(tmp_path):
    pch_dir = str(tmp_path / "pch")
    compile_one(tmp_path, "a", scaled_add.source("gfx1100"), "gfx1100", pch_dir)
    (made,) = pchs(pch_dir)
    before = os.stat(os.path.join(pch_dir, made))
    second = compile_one(tmp_path, "b", row_max.source("gfx1100"), "gfx1100", pch_dir)
    after = os.stat(os.path.join(pch_dir, made))
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
    assert second == compile_one(tmp_path, "b", row_max.source("gfx1100"), "gfx1100", None)
    # Another target is another key.
    compile_one(tmp_path, "c", scaled_add.source("gfx950"), "gfx950", pch_dir)
    assert len(pchs(pch_dir)) == 2
    assert not [p for p in os.listdir(pch_dir) if "tmp" in p or p.startswith("hk-pch-")]


def test_damaged_pch_is_removed_and_the_compile_succeeds(tmp_path):
    pch_dir = str(tmp_path / "pch")
    cpp = scaled_add.source("gfx1100")
    good = compile_one(tmp_path, "k", cpp, "gfx1100", pch_dir)
    (made,) = pchs(pch_dir)
    path = os.path.join(pch_dir, made)
    with open(path, "r+b") as f:
        f.seek(0)
        f.write(b"not a precompiled header" * 64)
    with pytest.warns(HKWarning, match="could not be used"):
        again = compile_one(tmp_path, "k", cpp, "gfx1100", pch_dir)
    assert again == good
    assert pchs(pch_dir) == []
    # The next compile makes a good one again.
    assert compile_one(tmp_path, "k", cpp, "gfx1100", pch_dir) == good
    assert pchs(pch_dir) == [made]


def test_other_sources_and_hk_pch_0_take_none(tmp_path, monkeypatch):
    pch_dir = str(tmp_path / "pch")
    cpp = scaled_add.source("gfx1100")
    # Something before the library's include: the PCH would change what it sees.
    assert not pch.takes_prefix("#define HK_SOMETHING 1\n" + cpp)
    compile_one(tmp_path, "d", "#define HK_SOMETHING 1\n" + cpp, "gfx1100", pch_dir)
    assert pchs(pch_dir) == []
    monkeypatch.setenv("HK_PCH", "0")
    compile_one(tmp_path, "k", cpp, "gfx1100", pch_dir)
    assert pchs(pch_dir) == []


def test_an_error_is_the_compilers_usual_one_and_keeps_the_pch(tmp_path):
    pch_dir = str(tmp_path / "pch")
    cpp = scaled_add.source("gfx1100")
    compile_one(tmp_path, "k", cpp, "gfx1100", pch_dir)
    broken = cpp + "\nstatic_assert(sizeof(hk::bf16) == 3, \"the user's mistake\");\n"
    with pytest.raises(CompileError, match="the user's mistake") as e:
        compile_one(tmp_path, "bad", broken, "gfx1100", pch_dir)
    assert "include-pch" not in str(e.value)
    assert len(pchs(pch_dir)) == 1


def test_the_cache_compiles_with_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HK_CACHE_DIR", str(tmp_path / "cache"))
    built = scaled_add.build("gfx1100")
    assert not built.cached
    assert len(pchs(str(tmp_path / "cache" / "pch"))) == 1
