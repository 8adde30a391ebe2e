"""cocheck runs on code objects it did not make: Triton's, compiled ahead of time for gfx1100
(Triton's AMD backend needs no GPU for that). Its waits are sound; its 64x64 fp16 matmul tile
spills on gfx1100, which the resource gate reports."""

import os

import pytest

from hk.runtime import cocheck, metadata

OBJDUMP = os.path.join(os.environ["HK_LLVM_BIN"], "llvm-objdump")


def compile_triton(kernel, signature, constexprs, arch="gfx1100"):
    import triton
    from triton.backends.compiler import GPUTarget

    src = triton.compiler.ASTSource(fn=kernel, signature=signature, constexprs=constexprs)
    return triton.compile(src, target=GPUTarget("hip", arch, 32)).asm["hsaco"]


def kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
        # One BLOCK x BLOCK tile of C = A B over K, through the matrix cores and LDS.
        rm = tl.arange(0, BLOCK)
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        for k in range(0, K, BLOCK):
            rk = k + tl.arange(0, BLOCK)
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
            b = tl.load(b_ptr + rk[:, None] * BLOCK + rm[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * BLOCK + rm[None, :], acc)

    mm = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32"}
    return {
        "add": (add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024}),
        "matmul32": (matmul, mm, {"BLOCK": 32}),
        "matmul64": (matmul, mm, {"BLOCK": 64}),
    }


def check(tmp_path, name):
    pytest.importorskip("triton")
    kernel, signature, constexprs = kernels()[name]
    path = tmp_path / (name + ".hsaco")
    path.write_bytes(compile_triton(kernel, signature, constexprs))
    (meta,) = metadata.read(str(path))
    assert meta.arch == "gfx1100" and meta.wave_size == 32
    return meta, cocheck.check_file(str(path), OBJDUMP)


@pytest.mark.parametrize("name", ["add", "matmul32"])
def test_clean_triton_code_objects_pass_both_gates(tmp_path, name):
    _, findings = check(tmp_path, name)
    assert findings == []


def test_triton_caches_under_the_test_directory(tmp_path):
    # Under Bazel, HOME is the user's and read-only; Triton's cache must follow TEST_TMPDIR.
    check(tmp_path, "add")
    cache = os.environ["TRITON_CACHE_DIR"]
    assert os.path.realpath(cache).startswith(os.path.realpath(os.environ["TEST_TMPDIR"]))
    assert any(files for _, _, files in os.walk(cache))
    assert str(tmp_path).startswith(os.environ["TEST_TMPDIR"])


def test_a_spilling_triton_matmul_is_reported(tmp_path):
    meta, findings = check(tmp_path, "matmul64")
    assert meta.spills > 0
    assert len(findings) == 1
    assert "resource gate: kernel matmul on gfx1100 spills" in findings[0]
    assert not any("wait gate" in f for f in findings)
