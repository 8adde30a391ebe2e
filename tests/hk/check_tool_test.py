"""hk-check (hk/compiler/check_tool.py) as a user runs it: a line per kernel and target, and exit
codes 0 (all pass), 1 (a kernel is refused or does not trace), 2 (the command is wrong); bad input
never ends in a traceback."""

import os
import subprocess
import sys
import textwrap

import pytest

GOOD = textwrap.dedent("""\
    import hk

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),))
    def scale(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32], s: float):
        i = hk.arch.block_idx.x
        out[0, 0, i, 0] = x[0, 0, i, 0].load(hk.RT(hk.fp32, 16, 64)) * s
    """)

# A kernel whose registers cannot fit: 24 fp32 64x64 tiles live at once on one wave.
SPILLS = textwrap.dedent("""\
    @hk.kernel(grid=(1,))
    def too_big(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32]):
        ts = [x[0, 0, 0, i].load(hk.RT(hk.fp32, 64, 64)) for i in range(24)]
        acc = ts[0]
        for t in ts[1:]:
            acc = acc * t + ts[0]
        for i, t in enumerate(ts):
            out[0, 0, 0, i] = t + acc
    """)

WRONG_TYPE = textwrap.dedent("""\
    @hk.kernel(grid=(1,))
    def mistyped(x: hk.Tensor[hk.fp32], out: hk.Tensor[hk.fp32]):
        t = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))
        out[0, 0, 0, 0] = hk.mma_AB(t, t, t)
    """)


def hk_check(tmp_path, *args):
    env = dict(os.environ, HK_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-m", "hk.compiler.check_tool", *args], capture_output=True,
                          text=True, env=env, timeout=600)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_every_kernel_on_every_target_passes(tmp_path):
    src = write(tmp_path, "good.py", GOOD)
    r = hk_check(tmp_path, "--src=" + src, "--archs=gfx1100,gfx950")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and all(l.startswith("ok   scale") for l in lines), lines
    assert "gfx1100" in lines[0] and "gfx950" in lines[1] and "VGPRs" in lines[0]


def test_a_refused_or_broken_kernel_is_a_finding_at_the_users_line(tmp_path):
    src = write(tmp_path, "mixed.py", GOOD + SPILLS + WRONG_TYPE)
    r = hk_check(tmp_path, "--src=" + src, "--archs=gfx1100")
    assert r.returncode == 1, (r.stdout, r.stderr)
    out = r.stdout
    assert "ok   scale" in out
    assert "FAIL mistyped" in out and "mixed.py:" in out
    assert "FAIL too_big" in out and "spills" in out
    assert "Traceback" not in out + r.stderr


def test_only_the_named_kernels_are_checked(tmp_path):
    src = write(tmp_path, "mixed.py", GOOD + WRONG_TYPE)
    r = hk_check(tmp_path, "--src=" + src, "--archs=gfx1201", "--kernel=scale")
    assert r.returncode == 0 and r.stdout.count("\n") == 1 and "mistyped" not in r.stdout


@pytest.mark.parametrize("args,message", [
    (["--src=missing.py"], "no such file"),
    (["--src={good}", "--archs=gfx9999"], "unknown target architecture 'gfx9999'"),
    (["--src={good}", "--kernel=nope"], "has no @hk.kernel named nope"),
    (["--src={empty}"], "defines no @hk.kernel"),
    (["--src={broken}"], "importing"),
    (["--src={good}", "--divisor=a=x"], "error"),
])
def test_a_wrong_command_is_exit_2_with_a_message(tmp_path, args, message):
    files = {"good": write(tmp_path, "good.py", GOOD), "empty": write(tmp_path, "empty.py", "x = 1\n"),
             "broken": write(tmp_path, "broken.py", "import hk\nraise RuntimeError('boom')\n")}
    r = hk_check(tmp_path, *[a.format(**files) for a in args])
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr and "Traceback" not in r.stderr


def test_help_and_a_malformed_flag(tmp_path):
    r = hk_check(tmp_path, "--help")
    assert r.returncode == 0 and "--archs" in r.stdout and "Exit codes" in r.stdout
    r = hk_check(tmp_path, "--no_such_flag=1")
    assert r.returncode == 2 and "no_such_flag" in r.stderr and "Traceback" not in r.stderr


def test_a_tools_error_names_the_users_input_not_the_tools_own_line(tmp_path):
    # An installed command is a script whose frame is the only one outside hk: an error with no
    # location of its own must not take that script's line for the user's.
    script = write(tmp_path, "hk-example", textwrap.dedent("""\
        from hk.compiler import cli
        from hk.errors import HKError

        def main(argv):
            raise HKError("no llvm-objdump of the toolchain", hint="pass --objdump")

        cli.run_tool("hk-example", "An example.", lambda: None, main)
        """))
    r = subprocess.run([sys.executable, script], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert r.stderr == "hk-example: error: no llvm-objdump of the toolchain\n  hint: pass --objdump\n", r.stderr
