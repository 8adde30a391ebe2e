"""Reproducible code objects: the same kernel compiled from different directories, with the tile
library at different paths, gives byte-identical .co files (no path reaches the object: clang's
compilation-unit id, which it derives from the source's path, is off)."""

import os
import shutil

import pytest
from elftools.elf.elffile import ELFFile

import hk
from hk.runtime import cache, compile as compile_lib, toolchain as toolchain_lib


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps=1)
def scaled_add(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32], s: float):
    i = hk.arch.block_idx.x
    t = hk.RT(hk.fp32, 16, 64)
    out[0, 0, i, 0] = x[0, 0, i, 0].load(t) * s + y[0, 0, i, 0].load(t)


def compile_in(root, cpp, arch):
    """Compiles `cpp` as a file under `root`, with a copy of the tile library under it."""
    include = os.path.join(root, "vendor", "include")
    shutil.copytree(cache.include_dir(), include)
    src = os.path.join(root, "src", "kernel.cpp")
    os.makedirs(os.path.dirname(src))
    with open(src, "w") as f:
        f.write(cpp)
    out = os.path.join(root, "kernel.co")
    compile_lib.compile_hip(src, arch, out, toolchain=toolchain_lib.find(), include_dirs=[include])
    with open(out, "rb") as f:
        return f.read()


@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_two_paths_one_object(tmp_path, arch):
    cpp = scaled_add.source(arch)
    one = compile_in(str(tmp_path / "one"), cpp, arch)
    other = compile_in(str(tmp_path / "a" / "much" / "longer" / "other"), cpp, arch)
    assert one[:4] == b"\x7fELF"
    assert one == other
    # The symbol that used to differ carries no path-derived id any more.
    with open(tmp_path / "one" / "kernel.co", "rb") as f:
        names = [s.name for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()]
    assert "scaled_add" in names, names
    assert all(n == "__hip_cuid_" for n in names if n.startswith("__hip_cuid")), names
    assert str(tmp_path).encode() not in one
