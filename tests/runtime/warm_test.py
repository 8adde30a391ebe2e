"""hk-warm: every kernel of a file compiled into the cache for each target (a second run finds
them there, and a launch's build() is a cache hit), failures reported with exit 1, a wrong
command exit 2; in parallel too."""

import os
import subprocess
import sys
import textwrap

import pytest

KERNELS = textwrap.dedent("""\
    import hk

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),))
    def scale(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32], s: float):
        i = hk.arch.block_idx.x
        out[0, 0, i, 0] = x[0, 0, i, 0].load(hk.RT(hk.fp32, 16, 64)) * s

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),))
    def shift(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32], s: float):
        i = hk.arch.block_idx.x
        out[0, 0, i, 0] = x[0, 0, i, 0].load(hk.RT(hk.fp32, 16, 64)) + s
    """)

BROKEN = textwrap.dedent("""\

    @hk.kernel(grid=(1,))
    def broken(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32]):
        out[0, 0, 0, 0] = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64)) + undefined_name
    """)


def warm(*args, cache):
    env = dict(os.environ, HK_CACHE_DIR=cache)
    return subprocess.run([sys.executable, "-m", "hk.runtime.warm"] + list(args), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


@pytest.fixture
def files(tmp_path):
    good = tmp_path / "kernels.py"
    good.write_text(KERNELS)
    bad = tmp_path / "broken.py"
    bad.write_text(KERNELS + BROKEN)
    return str(good), str(bad), str(tmp_path / "cache")


def test_warms_every_kernel_on_every_target_and_a_launch_finds_them(files, monkeypatch):
    good, _, cache = files
    first = warm("--src=" + good, "--archs=gfx1100,gfx950", "--divisor=16", cache=cache)
    assert first.returncode == 0, first.stderr
    assert "4 of 4 kernels in the cache (0 already were), 0 failed" in first.stdout
    again = warm("--src=" + good, "--archs=gfx1100,gfx950", "--divisor=16", "--jobs=2", cache=cache)
    assert again.returncode == 0, again.stderr
    assert "(4 already were)" in again.stdout
    # What a launch would build is what was warmed: a cache hit.
    monkeypatch.setenv("HK_CACHE_DIR", cache)
    from hk.compiler import cli

    module = cli.load_user_module(good)
    assert module.scale.build("gfx950", divisors=16).cached
    assert not module.scale.build("gfx1201", divisors=16).cached  # a target not warmed


def test_parallel_warm_reports_a_broken_kernel_at_its_line(files):
    _, bad, cache = files
    result = warm("--src=" + bad, "--archs=gfx1100", "--jobs=2", cache=cache)
    assert result.returncode == 1, result.stderr
    assert "2 of 3 kernels in the cache" in result.stdout
    assert "FAIL %s:broken gfx1100" % bad in result.stdout
    assert "broken.py:15" in result.stdout  # the line that names the undefined value
    named = warm("--src=" + bad, "--kernel=scale", "--archs=gfx1100", cache=cache)
    assert named.returncode == 0 and "1 of 1" in named.stdout


@pytest.mark.parametrize("args, message", [
    ([], "--src"),
    (["--src=/no/such/file.py"], "no such file"),
    (["--src={good}", "--archs=gfx9999"], "gfx9999"),
    (["--src={good}", "--kernel=absent"], "no @hk.kernel named absent"),
    (["--src={good}", "--divisor=a=b"], "a divisor is an integer"),
    (["--src={good}", "--jobs=0"], "jobs"),
    (["--src={good}", "stray.py"], "unexpected arguments"),
])
def test_a_wrong_command_is_exit_2_with_one_line(files, args, message):
    good, _, cache = files
    result = warm(*[a.format(good=good) for a in args], cache=cache)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_help(files):
    result = warm("--help", cache=files[2])
    assert result.returncode == 0
    assert "hk-warm --src" in result.stdout and "--jobs" in result.stdout
