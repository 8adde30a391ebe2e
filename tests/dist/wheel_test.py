"""hk-dsl's wheel as a user installs it: pip into a clean virtualenv outside Bazel's runfiles, its
dependencies resolved from the pinned wheelhouse (no network), and there, with a HIP compiler
found through HK_ROCM_PATH: the spec's `add` traced, translated, built and run on the interpreter
and the emulator, and every console script answering."""

import glob
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

import hk

TMP = os.environ.get("TEST_TMPDIR") or pytest.skip("runs under Bazel", allow_module_level=True)
SRCDIR = os.environ["TEST_SRCDIR"]

ADD = textwrap.dedent("""\
    import hk

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
    def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y,
                            hk.arch.block_idx.x)
        t = hk.RT(hk.bf16, 16, 64)
        o[idx] = a[idx].load(t) + b[idx].load(t)
    """)

USE = textwrap.dedent("""\
    import os, sys
    import torch
    import hk
    from add import add

    # hk is the wheel's, nothing of the source tree's or of Bazel's
    assert hk.__file__.startswith(sys.prefix), hk.__file__
    assert not any("runfiles" in p for p in sys.path), sys.path
    ir = add.trace().dump()
    assert "hk.kernel" in ir and "hk.load" in ir, ir
    cpp = add.source()
    assert "__global__" in cpp, cpp
    built = add.build()
    assert built.meta.spills == 0
    print(built.report())
    print("CODE_OBJECT", built.path)
    torch.manual_seed(0)
    a = torch.randn(2, 40, 100).to(torch.bfloat16)
    b = torch.randn(2, 40, 100).to(torch.bfloat16)
    out = torch.empty_like(a)
    add(a, b, out)
    assert torch.equal(out, a + b), (out - (a + b)).abs().max()
    print("RAN", os.environ["HK_DEVICE"])
    """)


def runfile(*patterns):
    """The first runfile matching a pattern (external repositories sit beside the workspace, or
    under its external/ directory)."""
    for pattern in patterns:
        for root in (SRCDIR, os.path.join(SRCDIR, "hk_dsl", "external")):
            found = sorted(glob.glob(os.path.join(root, pattern)))
            if found:
                return found[0]
    raise FileNotFoundError(patterns)


def rocm_root(path):
    """An installed ROCm's layout (what HK_ROCM_PATH names), made of the hermetic toolchain."""
    rocm = os.path.abspath(os.path.dirname(os.path.dirname(os.path.dirname(os.environ["HK_ROCM_VERSION_FILE"]))))
    llvm_bin = os.path.abspath(os.environ["HK_LLVM_BIN"])
    os.makedirs(os.path.join(path, "llvm", "bin"))
    for child in ("include", "amdgcn", "share"):
        os.symlink(os.path.join(rocm, child), os.path.join(path, child))
    os.symlink(os.path.abspath(os.environ["HK_CLANG"]), os.path.join(path, "llvm", "bin", "clang++"))
    for tool in ("llvm-objdump", "llvm-readelf", "llvm-mc"):
        os.symlink(os.path.join(llvm_bin, tool), os.path.join(path, "llvm", "bin", tool))
    return path


@pytest.fixture(scope="module")
def installed():
    """(venv, env, wheel): the wheel installed with its torch extra into a new virtualenv."""
    wheel = runfile("hk_dsl/dist/hk_dsl-*.whl")
    wheelhouse = os.path.dirname(runfile("hk_python/wheelhouse/torch-*.whl"))
    venv = os.path.join(TMP, "venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "RUNFILES", "HK_", "TEST_", "BUILD_"))}
    env.update(HOME=os.path.join(TMP, "home"), PIP_CONFIG_FILE=os.devnull,
               HK_CACHE_DIR=os.path.join(TMP, "cache"), HK_ROCM_PATH=rocm_root(os.path.join(TMP, "rocm")),
               PATH=os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "/usr/bin:/bin"))
    pip = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--no-index",
                          "--no-cache-dir", "--disable-pip-version-check", "--find-links", wheelhouse,
                          wheel + "[torch]"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True)
    assert pip.returncode == 0, pip.stdout
    work = os.path.join(TMP, "work")
    os.makedirs(work)
    with open(os.path.join(work, "add.py"), "w") as f:
        f.write(ADD)
    with open(os.path.join(work, "use.py"), "w") as f:
        f.write(USE)
    return venv, env, wheel, work


def run(installed, *cmd, **extra_env):
    venv, env, _, work = installed
    return subprocess.run(list(cmd), cwd=work, env=dict(env, **extra_env), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


def test_the_wheel_holds_the_package_and_nothing_else():
    wheel = runfile("hk_dsl/dist/hk_dsl-*.whl")
    name = os.path.basename(wheel)
    assert name == "hk_dsl-%s-cp%d%d-cp%d%d-manylinux_2_36_x86_64.whl" % (
        (hk.__version__,) + sys.version_info[:2] * 2), name
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("hk/__init__.py", "hk/_mlir/_mlir_libs/_mlir.so", "hk/emu/_native.so", "hk/perf/_simulate.so",
                   "hk/target/targets.json", "hk/runtime/debian_packages.json", "hk/ops/norms.py",
                   "hk/include/hk/hk.cuh", "hk/_mlir/dialects/_hk_ops_gen.py", "hk/autotune/models.json",
                   "hk/tuned/__init__.py"):
        assert needed in names, needed
    assert not [n for n in names if not n.startswith(("hk/", "hk_dsl-"))], names
    assert not [n for n in names if "test" in os.path.basename(n) or n.endswith(".pyc")]
    size = os.path.getsize(wheel)
    print("wheel %s: %.1f MB, %d files" % (name, size / 1e6, len(names)))
    assert size < 30e6


def test_add_traces_builds_and_runs_on_the_interpreter_and_the_emulator(installed):
    venv, _, _, _ = installed
    python = os.path.join(venv, "bin", "python")
    for device in ("interp", "emu"):
        result = run(installed, python, "use.py", HK_DEVICE=device)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "RAN " + device in result.stdout
        assert "VGPRs" in result.stdout


def test_the_engine_plugins_install_beside_it(installed):
    # Their engines are not in this environment (their own tests run inside them): the wheels
    # install without dependencies, and their entry points and shipped tables are there.
    venv, _, _, _ = installed
    python = os.path.join(venv, "bin", "python")
    wheels = [runfile("hk_dsl/dist/%s-*.whl" % name) for name in ("hk_engine", "hk_vllm", "hk_sglang")]
    pip = run(installed, python, "-m", "pip", "install", "--no-index", "--no-deps", "--no-cache-dir",
              "--disable-pip-version-check", *wheels)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    probe = run(installed, python, "-c", textwrap.dedent("""\
        import importlib.metadata as md
        from hk_engine import routing
        print(sorted(e.value for g in ("vllm.general_plugins", "sglang.srt.plugins") for e in md.entry_points(group=g)))
        print(routing.table("gfx1100").route("linear", dtype="bfloat16", m=1))
        """))
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split("\n")[:2] == ["['hk_sglang:register', 'hk_vllm:register']", "hk"]


def test_the_compiler_comes_from_hk_rocm_path(installed):
    result = run(installed, "hk-toolchain", "show")
    assert result.returncode == 0, result.stderr
    assert "HK_ROCM_PATH" in result.stdout


def test_console_scripts(installed):
    venv, env, _, work = installed
    for tool in ("hk-check", "hk-warm", "hk-cocheck", "hk-toolchain", "hk-opt", "hk-translate", "hk-tune"):
        helped = run(installed, tool, "--help")
        assert helped.returncode == 0, (tool, helped.stderr)
        assert helped.stdout.strip(), tool
    check = run(installed, "hk-check", "--src=add.py", "--archs=gfx1100,gfx950")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("ok ") == 2
    warm = run(installed, "hk-warm", "--src=add.py", "--archs=gfx1201")
    assert warm.returncode == 0 and "1 of 1 kernels in the cache" in warm.stdout, warm.stdout + warm.stderr
    assert run(installed, "hk-check", "--src=absent.py").returncode == 2

    built = run(installed, os.path.join(venv, "bin", "python"), "use.py", HK_DEVICE="interp")
    co = [l.split()[1] for l in built.stdout.splitlines() if l.startswith("CODE_OBJECT")][0]
    cocheck = run(installed, "hk-cocheck", co)
    assert cocheck.returncode == 0, cocheck.stdout + cocheck.stderr
    assert "wave(s) per SIMD" in cocheck.stdout

    dump = run(installed, os.path.join(venv, "bin", "python"), "-c",
               "from add import add; print(add.trace().dump())")
    assert dump.returncode == 0, dump.stderr
    with open(os.path.join(work, "add.mlir"), "w") as f:
        f.write(dump.stdout)
    opt = run(installed, "hk-opt", "add.mlir", "--verify-roundtrip")
    assert opt.returncode == 0 and "hk.kernel" in opt.stdout, opt.stderr
    cpp = run(installed, "hk-translate", "--hk-to-cpp", "add.mlir")
    assert cpp.returncode == 0 and "__global__" in cpp.stdout, cpp.stderr
