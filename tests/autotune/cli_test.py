"""hk-tune: a search of the GEMM at a small shape written to a tuned file that a launch reads;
a second run served by the result cache; exit 1 when every candidate is refused, 2 for a wrong
command."""

import json
import os
import subprocess
import sys

import pytest

import hk

SMALL = ["--shape=64,64,64", "--knob=waves=4", "--knob=BM=64", "--knob=BN=64", "--knob=BK=32",
         "--knob=UNROLL=2,4", "--evaluator=model"]


def tune(*args, cache):
    env = dict(os.environ, HK_CACHE_DIR=cache)
    env.pop("HK_DEVICE", None)
    return subprocess.run([sys.executable, "-m", "hk.autotune.cli"] + list(args), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


@pytest.fixture
def dirs(tmp_path):
    return str(tmp_path / "cache"), str(tmp_path / "tuned")


def test_tunes_writes_the_file_and_runs_again_from_the_cache(dirs):
    cache, out = dirs
    first = tune(*SMALL, "--jobs=2", "--out=" + out + os.sep, cache=cache)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "linear on gfx1100 (predicted on Radeon PRO W7900" in first.stdout
    assert "2 of 2 admitted candidates evaluated, 0 refused" in first.stdout
    raw = json.load(open(os.path.join(out, "gfx1100.json")))
    assert raw["arch"] == "gfx1100" and raw["hk_version"] == hk.__version__
    entry = raw["ops"]["linear"]["bf16 N=64 K=64 M=33-64"]
    assert entry["knobs"]["BM"] == 64 and entry["knobs"]["UNROLL"] in (2, 4)
    assert entry["seconds"] > 0 and entry["default_seconds"] > 0 and entry["evaluator"] == "model"
    assert entry["model"].startswith(hk.__version__ + "+") and "W7900" in entry["device"]
    again = tune(*SMALL, "--out=" + out + os.sep, cache=cache)
    assert again.returncode == 0, again.stderr
    assert "0 results evaluated, 3 from the cache" in again.stdout


def test_every_candidate_refused_is_exit_1(dirs):
    cache, out = dirs
    result = tune("--shape=64,64,64", "--knob=waves=4", "--knob=BM=64", "--knob=BN=64", "--knob=BK=24",
                  "--knob=UNROLL=2", "--evaluator=model", "--out=" + out, cache=cache)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL linear on gfx1100" in result.stdout and "refused (trace 1)" in result.stdout
    assert "multiple of 16 but got 24" in result.stdout


def test_a_value_the_grid_cannot_take_refuses_its_candidates(dirs):
    # BM=0: the GEMM's grid divides by it; each candidate is refused saying so, not a traceback.
    cache, out = dirs
    result = tune("--shape=64,64,64", "--knob=waves=4", "--knob=BM=0", "--knob=BN=64", "--knob=BK=32",
                  "--knob=UNROLL=2", "--evaluator=model", "--out=" + out, cache=cache)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "every candidate was refused (launch 1)" in result.stdout
    assert "its grid function (" in result.stdout and "raised ZeroDivisionError" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("args, message", [
    ([], "--out"),
    (["--out=x", "--ops=softmax"], "no tunable op softmax"),
    (["--out=x", "--shape=64,64"], "a linear's shape is M,N,K"),
    (["--out=x", "--model=gpt-9"], "unknown model 'gpt-9'"),
    (["--out=x", "--shape=64,64,64", "--knob=BLOCK=1"], "linear takes no knob BLOCK"),
    (["--out=x", "--shape=64,64,64", "--knob=BM=abc"], "linear's BM takes int values (64, 128, 256), not 'abc'"),
    (["--out=x", "--shape=64,64,64", "--archs=gfx9999"], "gfx9999"),
    (["--out=x", "--effort=max"], "effort"),
    (["--out=x", "--tokens=many", "--model=qwen3-8b"], "--tokens are integers"),
    (["--out=x", "--ops=flash_attention", "--shape=1,32,5,64,64,128"], "HEADS a multiple of KV_HEADS"),
    (["--out=x", "--ops=flash_attention", "--shape=1,32,8,64,64,128,sideways"], "an attention's shape"),
    (["--out=x", "--ops=linear_split_k", "--shape=64,64,64"], "M up to 32"),
    (["--out=x", "--ops=linear_split_k", "--model=qwen3-8b", "--tokens=4096"], "give --tokens up to 32"),
    (["--out=x", "--ops=fused_moe", "--model=qwen3-8b"], "qwen3-8b has no experts"),
    (["--out=x", "--ops=fused_moe", "--shape=4,4,8,64,64"], "TOP_K up to EXPERTS"),
    (["--out=x", "--ops=fused_moe", "--shape=4,4,2,64,64", "--knob=BM=64"], "fused_moe takes no knob BM"),
    (["--shape=64,64,64", "--shard=2/2", "--records_out=r.json"], "0 <= INDEX < COUNT"),
    (["--shape=64,64,64", "--shard=one", "--records_out=r.json"], "--shard is INDEX/COUNT"),
    (["--shape=64,64,64", "--shard=0/2"], "into --records_out"),
    (["--out=x", "--shape=64,64,64", "--records=missing.json"], "missing.json is not a shard's results"),
])
def test_wrong_commands_exit_2(dirs, args, message):
    result = tune(*args, cache=dirs[0])
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_help_and_list():
    helped = tune("--help", cache="unused")
    assert helped.returncode == 0 and "--knob" in helped.stdout and "Exit codes" in helped.stdout
    listed = tune("--list", cache="unused")
    assert listed.returncode == 0 and "linear" in listed.stdout and "qwen3-8b" in listed.stdout
    assert "linear_split_k" in listed.stdout and "fused_moe" in listed.stdout


def test_a_models_linear_shapes():
    from hk.autotune import cli

    qwen = cli.models()["qwen3-8b"]
    assert cli.linear_shapes(qwen) == [(6144, 4096), (4096, 4096), (24576, 4096), (4096, 12288)]
    assert cli.linear_shapes(cli.models()["olmoe-1b-7b"]) == [(6144, 2048), (2048, 2048)]
    assert cli.shapes_for("flash_attention", ["2,16,16,512,1024,64"], ["qwen3-8b"], [4096]) == [
        (2, 16, 16, 512, 1024, 64, False), (1, 32, 8, 4096, 4096, 128, True)]


def test_an_engines_tokens_per_target():
    from hk.autotune import cli
    from hk.ops import gemm

    # vLLM on a W7900: decode batches up to 512 (one count per M bucket above split-K's rows)
    # and its 2048-token prefill chunk; SGLang there captures decode up to 32 requests only.
    vllm = cli.engine_tokens("linear", "vllm", "gfx1100")
    assert vllm == [64, 128, 256, 512, 2048]
    assert all(m > gemm.DECODE_ROWS for m in vllm)
    assert len({gemm.linear_bucket((m, 4096, 4096)) for m in vllm}) == len(vllm)
    assert cli.engine_tokens("linear", "sglang", "gfx1100") == [4096]
    assert cli.engine_tokens("linear", "vllm", "gfx950")[-1] == 16384
    assert cli.engine_tokens("flash_attention", "sglang", "gfx942") == [16384]
    # --from-engine's prefill for attention, as hk-tune asks for it (tokens per model).
    prefill = lambda config: cli.engine_tokens("flash_attention", "vllm", "gfx1100", config)  # noqa: E731
    assert cli.shapes_for("flash_attention", [], ["qwen3-8b", "olmoe-1b-7b"], prefill) == [
        (1, 32, 8, 2048, 2048, 128, True), (1, 16, 16, 2048, 2048, 128, True)]
    facts = cli.engines()
    for engine in ("vllm", "sglang"):
        for key in ("prefill", "decode_max"):
            assert set(facts[engine][key]) == {"gfx1100", "gfx1201", "gfx942", "gfx950"}


def test_the_shapes_of_split_k_and_moe():
    from hk.autotune import cli
    from hk.ops import moe

    olmoe = cli.models()["olmoe-1b-7b"]
    assert (olmoe["num_experts"], olmoe["experts_per_token"]) == (64, 8)
    # Decode's rows: 1 and up to 32 (SGLang's graphs on an RX 9070 stop at 8).
    assert cli.engine_tokens("linear_split_k", "vllm", "gfx1100") == [1, 32]
    assert cli.engine_tokens("linear_split_k", "sglang", "gfx1201") == [1, 8]
    assert cli.shapes_for("linear_split_k", [], ["olmoe-1b-7b"], [1]) == [(1, 6144, 2048), (1, 2048, 2048)]
    assert cli.shapes_for("linear_split_k", ["4,64,512,fp16"], [], [4096]) == [(4, 64, 512, "fp16")]
    # A MoE layer: the fewest tokens of each range of rows per expert up to vLLM's 2048-token chunk.
    tokens = cli.engine_tokens("fused_moe", "vllm", "gfx1100", olmoe)
    assert tokens == [1, 32, 128, 256, 512, 1024, 2048]
    shapes = cli.shapes_for("fused_moe", [], ["olmoe-1b-7b"], lambda config: tokens)
    assert shapes[0] == (1, 64, 8, 2048, 1024)
    assert len({moe.moe_bucket(s) for s in shapes}) == len(shapes)


def test_tunes_a_moe_layer_into_the_file(dirs):
    cache, out = dirs
    result = tune("--ops=fused_moe", "--shape=4,4,2,64,64", "--knob=block=0,32", "--evaluator=model", "--jobs=2",
                  "--out=" + out + os.sep, cache=cache)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 of 2 admitted candidates evaluated, 0 refused" in result.stdout
    entry = json.load(open(os.path.join(out, "gfx1100.json")))["ops"]["fused_moe"][
        "bf16 E=4 top_k=2 K=64 I=64 rows/expert=0-3"]
    assert entry["knobs"]["block"] in (0, 32) and entry["seconds"] > 0 and entry["default_seconds"] > 0


def test_from_engine_needs_a_model(dirs):
    result = tune("--out=x", "--from-engine=vllm", cache=dirs[0])
    assert result.returncode == 2 and "--from-engine takes the shapes of --model's layers" in result.stderr


def test_warm_starts_come_from_the_tuned_files_nearest_bucket_first(tmp_path, monkeypatch):
    from hk import tuned
    from hk.autotune import cli

    def entry(knobs):
        return {"knobs": knobs, "seconds": 1.0}

    shipped, out = str(tmp_path / "shipped.json"), str(tmp_path / "out.json")
    tuned.write(shipped, "gfx1100", "linear", {"bf16 N=64 K=64 M=1-32": entry({"BM": 1}),
                                                "bf16 N=4096 K=4096 M=2049-4096": entry({"BM": 2})})
    tuned.write(out, "gfx1100", "linear", {"bf16 N=4096 K=4096 M=33-64": entry({"BM": 3}),
                                            "bf16 N=64 K=64 M=1-32": entry({"BM": 4})})
    tuned.write(out, "gfx1100", "int8_scaled_mm", {"i8 N=4096 K=4096 M=33-64": entry({"BM": 5})})
    monkeypatch.setenv("HK_TUNED", shipped)
    # hk-tune's own file wins a bucket both hold; another op's choices are not taken.
    assert cli.tuned_starts("linear", "gfx1100", out, {"bf16 N=4096 K=4096 M=65-128"}) == [
        {"BM": 3}, {"BM": 2}, {"BM": 4}]
    assert cli.tuned_starts("linear", "gfx1100", out, {"bf16 N=64 K=64 M=65-128"})[0] == {"BM": 4}
    assert cli.tuned_starts("linear", "gfx942", str(tmp_path / "none.json"), {"bf16 N=64 K=64 M=1-32"}) == []
