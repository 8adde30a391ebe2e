"""examples/12_engine_on_cpu.py as a user runs it, inside vLLM's environment: it writes the tiny
model, serves it on hk's kernels, prints the text and the counters, every call hk's. On the
interpreter: the emulator's run of the same model is e2e_llama_emu_*_test's."""

import os
import re
import subprocess
import sys


def test_the_example_serves_the_tiny_model_on_hks_kernels():
    path = os.path.join(os.environ["TEST_SRCDIR"], "hk_dsl", "examples", "12_engine_on_cpu.py")
    run = subprocess.run([sys.executable, path, "--device=interp", "--tokens=2"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, timeout=800)
    assert run.returncode == 0, run.stderr[-4000:]
    out = run.stdout
    print(out, file=sys.__stdout__)
    assert "vLLM on hk's kernels on the interpreter: started in" in out
    # The example wrote its model into a temporary directory: the test's own (run_in_env's TMPDIR).
    assert os.environ["TEST_TMPDIR"] + "/" in out + run.stderr
    texts = re.findall(r"^  '(.*)' -> '(.*)'$", out, re.M)
    assert [p for p, _ in texts] == ["The kernel reads a tile of the matrix", "A request arrives with a prompt;"]
    assert all(t for _, t in texts)
    calls = dict(re.findall(r"^  (vllm\.\w+) +(.*)$", out, re.M))
    assert calls.pop("vllm.plugin") == "patched 1"
    assert sorted(calls) == ["vllm.attention", "vllm.kv_cache_write", "vllm.linear", "vllm.norm", "vllm.rotary",
                             "vllm.silu_and_mul"]
    assert all(re.fullmatch(r"hk \d+", routes) for routes in calls.values()), calls
