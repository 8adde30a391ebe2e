"""Paged prefill attention with several waves per workgroup as a tuned schedule: HEADS query
heads of a K/V head and TILES tiles of 16 tokens sharing each 16 keys' copy into LDS, against
attention in torch (cached context before the new tokens or none, ragged sequences, a sequence
of no new tokens, workgroups past a sequence's last token, K and V in one cache) on the
interpreter and the emulator; a search ranks the candidates by hk.perf and the choice is what
hk.ops.paged_attention_prefill launches; a choice that no longer builds falls back once; an fp8
cache keeps one wave; the kernels through the gates on every target; hk-tune's shapes."""

import pytest
import torch

import hk
import hk.ops
from hk import tuned
from hk.autotune import cli, searching
from hk.compiler.cli import UsageError
from hk.errors import HKWarning
from hk.ops import paged
from hk.runtime import launch
from hk.target import facts
from tests.autotune import tuned_files
from tests.autotune.tuned_files import env, quiet  # noqa: F401 (env: an autouse fixture)
from tests.ops.paged_cases import prefill_case, prefill_reference, vllm_halves


BUCKET = "H=8 KVH=2 D=64 BS=16 tokens=17-128"
# New tokens after cached ones: a prompt of no cached tokens, one after cached context (not block
# aligned), one token after many, a sequence of none, and one of more than a workgroup's tokens.
NEW, CACHED = [20, 7, 1, 0, 70], [0, 45, 60, 10, 3]


def close(got, want):
    torch.testing.assert_close(got.float(), want.float(), rtol=1.6e-2, atol=1e-2)


def use(knobs, monkeypatch, tmp_path, arch="gfx1100", bucket=BUCKET, device="interp"):
    """A tuned file choosing `knobs` at `bucket`, and the device to run on."""
    tuned_files.use("paged_attention_prefill", {bucket: {"knobs": knobs, "seconds": 1.0}}, monkeypatch, tmp_path,
                    arch, device)


def launched(*args):
    """(name, waves) of the kernels hk.ops.paged_attention_prefill launches for the call."""
    with launch.capture() as launches:
        torch.ops.hk.paged_attention_prefill(*args)
    return [(kernel.name, kernel.warps) for kernel, _, _, _ in launches]


TODAY = [("paged_prefill_d64_g4_b16", 1)]


@pytest.mark.parametrize("heads, tiles", [(2, 1), (4, 1), (1, 2), (1, 8), (2, 4), (4, 2)])
def test_waves_sharing_keys_on_the_interpreter(heads, tiles, monkeypatch, tmp_path):
    use({"HEADS": heads, "TILES": tiles}, monkeypatch, tmp_path, bucket="H=8 KVH=2 D=64 BS=16 tokens=17-128")
    args = prefill_case(NEW, CACHED, 8, 2, 64, 16)
    want = prefill_reference(*args[:6], 0.125)
    with quiet():
        got = torch.ops.hk.paged_attention_prefill(*args, 0.125)
        name = "paged_prefill_d64_g4_b16" + ("_h%d" % heads) * (heads > 1) + ("_t%d" % tiles) * (tiles > 1)
        assert launched(*args, 0.125) == [(name, heads * tiles)]
    close(got, want)
    assert torch.equal(got[sum(NEW[:3]):sum(NEW[:4])], got[:0])  # (the sequence of none has no rows)


def test_one_wave_is_todays_kernel(monkeypatch, tmp_path):
    use({"HEADS": 1, "TILES": 1}, monkeypatch, tmp_path)
    args = prefill_case(NEW, CACHED, 8, 2, 64, 16)
    with quiet():
        assert launched(*args, 0.125) == TODAY
    monkeypatch.delenv("HK_TUNED")
    tuned.forget()
    with quiet():
        assert launched(*args, 0.125) == TODAY  # no tuned choice: one wave


def test_one_cache_and_one_head_per_kv_head(monkeypatch, tmp_path):
    # K and V as the halves of one cache (vLLM 0.33's layout), 32-slot blocks, head size 128; then
    # a K/V head per query head, where only TILES can grow.
    use({"HEADS": 2, "TILES": 2}, monkeypatch, tmp_path, bucket="H=4 KVH=2 D=128 BS=32 tokens=17-128")
    q, kc, vc, tables, lens, starts, most = prefill_case(NEW, CACHED, 4, 2, 128, 32)
    with quiet():
        close(torch.ops.hk.paged_attention_prefill(q, *vllm_halves(kc, vc), tables, lens, starts, most, 0.1),
              prefill_reference(q, kc, vc, tables, lens, starts, 0.1))
    use({"HEADS": 1, "TILES": 4}, monkeypatch, tmp_path, bucket="H=3 KVH=3 D=64 BS=16 tokens=17-128")
    args = prefill_case(NEW, CACHED, 3, 3, 64, 16)
    with quiet():
        close(torch.ops.hk.paged_attention_prefill(*args, 0.1), prefill_reference(*args[:6], 0.1))


def test_an_fp8_cache_keeps_one_wave(monkeypatch, tmp_path):
    # Its dequantizing copy is one wave's: the tuned waves are not read for it.
    use({"HEADS": 4, "TILES": 2}, monkeypatch, tmp_path)
    q, kc, vc, tables, lens, starts, most = prefill_case(NEW, CACHED, 8, 2, 64, 16)
    scale = torch.tensor([0.5])
    k8, v8 = (t.float().div(0.5).to(torch.float8_e4m3fn) for t in (kc, vc))
    want = prefill_reference(q, k8.float().mul(0.5).to(torch.bfloat16), v8.float().mul(0.5).to(torch.bfloat16),
                             tables, lens, starts, 0.1)
    args = (q, k8.view(torch.uint8), v8.view(torch.uint8), tables, lens, starts, most, 0.1, scale, scale)
    with quiet():
        close(torch.ops.hk.paged_attention_prefill(*args), want)
        [(name, waves)] = launched(*args)
    assert waves == 1 and "_h" not in name and "_t" not in name
    with pytest.raises(ValueError, match="an fp8 cache"):
        paged.prefill_kernel(64, 4, 16, 1, "fp8e4m3", 2, 1)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx942"])
def test_waves_sharing_keys_on_the_emulator(arch, monkeypatch, tmp_path):
    use({"HEADS": 2, "TILES": 2}, monkeypatch, tmp_path, arch=arch, device="emu",
        bucket="H=4 KVH=2 D=64 BS=16 tokens=17-128")
    args = prefill_case([18, 5, 0, 40], [0, 40, 9, 2], 4, 2, 64, 16)
    with quiet():
        close(torch.ops.hk.paged_attention_prefill(*args, 0.1), prefill_reference(*args[:6], 0.1))


@pytest.mark.parametrize("arch", facts.archs())
def test_the_kernels_pass_the_gates(arch):
    for d, group, heads, tiles in ((128, 4, 4, 2), (128, 1, 1, 8), (64, 8, 8, 1)):
        built = paged.prefill_kernel(d, group, 16, 1, None, heads, tiles).build(arch, divisors=64)
        assert built.meta.spills == 0, built.report()


def test_a_search_ranks_the_waves_and_the_op_launches_the_choice(monkeypatch, tmp_path):
    tunable = hk.ops.TUNABLES["paged_attention_prefill"]
    shape = (1, 2048, 32, 8, 128)  # Qwen3-8B's heads, a prompt of 2048 tokens
    result = searching.search(tunable, [shape], "gfx942", space=hk.space(HEADS=[1, 4, 8], TILES=[1, 2]), jobs=1,
                              evaluator="model")
    print(result.report())
    # HEADS=8 does not divide Qwen3's 4 query heads per K/V head: refused, with the reason.
    assert len(result.times) == 4 and len(result.refusals) == 2
    assert all("does not divide the 4 query heads" in str(r) for r in result.refusals)
    [choice] = result.choices.values()
    assert choice.bucket == "H=32 KVH=8 D=128 BS=16 tokens=1025-2048"
    assert choice.seconds == min(s for _, _, s in result.times) and choice.default_seconds > 0
    # One wave per 16 tokens copies each 16 keys for itself; sharing the copy wins.
    assert choice.knobs != {"HEADS": 1, "TILES": 1} and choice.seconds < choice.default_seconds

    tuned_files.use("paged_attention_prefill", {b: tuned.entry_of(c, result) for b, c in result.choices.items()}, monkeypatch,
                    tmp_path, "gfx942")
    args = prefill_case([1500], [0], 32, 8, 128, 16, blocks=100)
    with quiet():
        [(name, waves)] = launched(*args, 0.09)
    assert waves == choice.knobs["HEADS"] * choice.knobs["TILES"] > 1


@pytest.mark.parametrize("knobs, message", [
    ({"HEADS": 3, "TILES": 1}, "is refused: HEADS=3 does not divide the 4 query heads"),
    ({"HEADS": 0, "TILES": 2}, "is refused: HEADS is a positive number of waves"),
    ({"HEADS": 2, "TILES": 1, "parts": 4}, "sets parts, which paged_attention_prefill does not take"),
])
def test_a_choice_that_no_longer_builds_falls_back_once(knobs, message, monkeypatch, tmp_path):
    use(knobs, monkeypatch, tmp_path)
    args = prefill_case(NEW, CACHED, 8, 2, 64, 16)
    with pytest.warns(HKWarning, match=message):
        got = torch.ops.hk.paged_attention_prefill(*args, 0.125)
    close(got, prefill_reference(*args[:6], 0.125))
    with quiet():
        assert launched(*args, 0.125) == TODAY


def test_buckets_and_waves():
    assert paged.prefill_bucket((1, 2048, 32, 8, 128)) == "H=32 KVH=8 D=128 BS=16 tokens=1025-2048"
    assert paged.prefill_bucket((4, 16, 32, 8, 128, 32)) == "H=32 KVH=8 D=128 BS=32 tokens=1-16"
    assert paged.prefill_bucket((1, 40000, 16, 16, 128)) == "H=16 KVH=16 D=128 BS=16 tokens>32768"
    # The sequences do not decide the bucket: the longest prompt does (max_query_len).
    assert paged.prefill_bucket((1, 100, 8, 2, 64)) == paged.prefill_bucket((9, 100, 8, 2, 64)) == BUCKET
    assert paged.prefill_waves(None, 4) == paged.prefill_waves({}, 4) == (1, 1)
    assert paged.prefill_waves({"HEADS": 4, "TILES": 2}, 4) == (4, 2)
    for bad in (0, -1, 2.0, "4", True):
        with pytest.raises(ValueError, match="is a positive number of waves"):
            paged.prefill_waves({"TILES": bad}, 4)
    with pytest.raises(ValueError, match="HEADS=2 does not divide the 1 query heads"):
        paged.prefill_waves({"HEADS": 2}, 1)
    assert all(c.HEADS * c.TILES <= 8 for c in paged.prefill_space(None).candidates())


def test_hk_tune_shapes_of_the_prefill():
    assert cli.parse_shape("paged_attention_prefill", "1,2048,32,8,128") == (1, 2048, 32, 8, 128)
    assert cli.parse_shape("paged_attention_prefill", "2,512,32,8,128,32") == (2, 512, 32, 8, 128, 32)
    for bad in ("1,2048,32,8", "1,2048,32,6,128", "1,2048,32,8,120", "1,2048,32,8,128,8", "0,2048,32,8,128"):
        with pytest.raises(UsageError, match="a paged prefill's shape is SEQS,TOKENS,HEADS,KV_HEADS,D"):
            cli.parse_shape("paged_attention_prefill", bad)
    shapes = cli.shapes_for("paged_attention_prefill", [], ["llama-3-8b"], [128, 2048])
    assert shapes == [(1, 128, 32, 8, 128), (1, 2048, 32, 8, 128)]
    assert cli.engine_tokens("paged_attention_prefill", "vllm", "gfx1100") == [16, 128, 512, 1024, 2048]
    assert cli.engine_tokens("paged_attention_prefill", "vllm", "gfx942")[-3:] == [4096, 8192, 16384]
