"""hk.tuned at launch: hk.ops.linear takes the knobs its bucket records; a file from another hk
version or target, one that does not parse, a knob the op does not take, and a choice that no
longer builds each fall back to the default with one warning; HK_TUNED as a directory;
HK_AUTOTUNE=1 searches a bucket with no entry once."""

import json

import pytest
import torch

import hk
import hk.ops
from hk import tuned
from hk.errors import HKWarning
from hk.ops import gemm
from hk.runtime import launch
from tests.autotune.tuned_files import quiet

BUCKET = "bf16 N=64 K=64 M=33-64"
KNOBS = {"waves": 8, "BM": 64, "BN": 64, "BK": 64, "UNROLL": 4}


@pytest.fixture
def tuned_file(tmp_path, monkeypatch):
    """write(ops=..., **fields): the tuned file HK_TUNED names, for gfx1100 by default."""
    monkeypatch.setenv("HK_DEVICE", "interp")
    monkeypatch.setenv("HK_ARCH", "gfx1100")
    monkeypatch.delenv("HK_AUTOTUNE", raising=False)
    path = tmp_path / "gfx1100.json"
    monkeypatch.setenv("HK_TUNED", str(path))

    def write(ops=None, text=None, **fields):
        raw = {"format": tuned.FORMAT, "hk_version": hk.__version__, "arch": "gfx1100",
               "ops": ops if ops is not None else {"linear": {BUCKET: {"knobs": KNOBS}}}}
        raw.update(fields)
        path.write_text(text if text is not None else json.dumps(raw))
        tuned.forget()
        return path

    tuned.forget()
    yield write
    tuned.forget()


def operands(m=64, n=64, k=64):
    torch.manual_seed(0)
    return torch.randn(m, k, dtype=torch.bfloat16), torch.randn(n, k, dtype=torch.bfloat16)


def launched(m=64):
    """(warps, constants) of the GEMM launch hk.ops.linear makes at M=m, N=K=64."""
    x, w = operands(m)
    out = torch.empty(m, 64, dtype=torch.bfloat16)
    with launch.capture() as launches:
        gemm.launch_linear(x, w, None, out)
    [(kernel, _, _, constants)] = launches
    return kernel.warps, constants


def test_the_recorded_knobs_are_what_a_launch_takes(tuned_file):
    tuned_file()
    assert launched() == (8, {"BM": 64, "BN": 64, "BK": 64, "UNROLL": 4})
    assert launched(m=128) == (4, {})  # a bucket with no entry: the default


def test_the_tuned_kernel_computes_the_product(tuned_file):
    tuned_file()
    x, w = operands()
    with quiet():
        y = hk.ops.linear(x, w)
    torch.testing.assert_close(y.float(), x.float() @ w.float().T, atol=0.1, rtol=0.02)


@pytest.mark.parametrize("fields, message", [
    ({"hk_version": "0.0.1"}, "written by hk 0.0.1"),
    ({"arch": "gfx950"}, "holds the choices of gfx950, not gfx1100"),
    ({"format": 99}, "its format is 99"),
    ({"text": "{ not json"}, "is not JSON"),
    ({"ops": {"linear": {BUCKET: {"knobs": dict(KNOBS, BLOCK=3)}}}}, "sets BLOCK, which linear does not take"),
    ({"ops": {"linear": {BUCKET: {"seconds": 1.0}}}}, "has no knobs"),
])
def test_an_unusable_file_or_entry_falls_back_with_one_warning(tuned_file, fields, message):
    tuned_file(**fields)
    with pytest.warns(HKWarning, match=message):
        assert launched() == (4, {})
    with quiet():  # once: later launches are quiet
        assert launched() == (4, {})


def test_a_missing_file_named_by_hk_tuned_is_a_warning(tuned_file, monkeypatch, tmp_path):
    monkeypatch.setenv("HK_TUNED", str(tmp_path / "absent.json"))
    with pytest.warns(HKWarning, match="there is no such file"):
        assert launched() == (4, {})


def test_a_choice_that_no_longer_builds_falls_back_to_the_default_once(tuned_file):
    # BK 24 is no whole number of 16-column tiles: tracing refuses it.
    tuned_file(ops={"linear": {BUCKET: {"knobs": dict(KNOBS, BK=24)}}})
    x, w = operands()
    with pytest.warns(HKWarning, match="is refused: .*multiple of 16 but got 24; using the default"):
        y = hk.ops.linear(x, w)
    torch.testing.assert_close(y.float(), x.float() @ w.float().T, atol=0.1, rtol=0.02)
    with quiet():
        hk.ops.linear(x, w)
        assert launched() == (4, {})


def test_hk_tuned_may_name_a_directory_of_arch_files(tuned_file, monkeypatch):
    path = tuned_file()
    monkeypatch.setenv("HK_TUNED", str(path.parent))
    assert launched() == (8, {"BM": 64, "BN": 64, "BK": 64, "UNROLL": 4})


def test_the_shipped_files_are_this_versions_and_their_knobs_build(monkeypatch):
    import glob
    import os

    monkeypatch.delenv("HK_TUNED", raising=False)
    for path in glob.glob(os.path.join(os.path.dirname(tuned.__file__), "*.json")):
        raw = json.load(open(path))
        arch = os.path.basename(path)[:-len(".json")]
        assert raw["hk_version"] == hk.__version__ and raw["arch"] == arch, path
        assert set(raw["ops"]) <= set(hk.ops.TUNABLES), path
        for op, bucket, entry in [(op, b, e) for op, entries in raw["ops"].items() for b, e in entries.items()]:
            assert set(entry["knobs"]) <= hk.ops.TUNABLES[op].knobs, (path, bucket)
            assert entry["seconds"] > 0 and entry["evaluator"] in ("model", "time") and entry["date"], (path, bucket)
            if entry["evaluator"] == "model":
                assert entry["model"] and entry["error"] is not None, (path, bucket)


def test_hk_autotune_searches_a_missing_bucket_once(tuned_file, monkeypatch):
    tuned_file(ops={})
    monkeypatch.setenv("HK_AUTOTUNE", "1")
    calls = []

    class Found:
        choices = {BUCKET: type("Choice", (), {"knobs": KNOBS})()}

    def fake_search(tunable, shapes, arch, **options):
        calls.append((tunable.name, shapes, arch, options))
        return Found()

    monkeypatch.setattr("hk.autotune.searching.search", fake_search)
    assert launched() == (8, {"BM": 64, "BN": 64, "BK": 64, "UNROLL": 4})
    assert launched() == (8, {"BM": 64, "BN": 64, "BK": 64, "UNROLL": 4})
    assert calls == [("linear", [(64, 64, 64, "bf16")], "gfx1100", {"effort": "low"})]


def test_hk_autotune_that_fails_warns_and_takes_the_default(tuned_file, monkeypatch):
    tuned_file(ops={})
    monkeypatch.setenv("HK_AUTOTUNE", "1")

    def failing(*args, **options):
        raise hk.errors.TuneError("every candidate was refused")

    monkeypatch.setattr("hk.autotune.searching.search", failing)
    with pytest.warns(HKWarning, match="HK_AUTOTUNE: searching linear .* failed"):
        assert launched() == (4, {})


def test_attention_takes_its_buckets_knobs(tuned_file):
    from hk.ops import attention

    bucket = "d64 g2 causal Nq=1-128 Nk=1-128"
    tuned_file(ops={"flash_attention": {bucket: {"knobs": {"KB": 16, "WAVES": 4, "KREAD": 32}}}})
    q = torch.randn(1, 4, 64, 64, dtype=torch.bfloat16)
    k = torch.randn(1, 2, 64, 64, dtype=torch.bfloat16)
    out = torch.empty_like(q)
    with launch.capture() as launches:
        attention.launch_attention(q, k, k, 0.125, True, out)
        attention.launch_attention(q[:, :, :32], k[:, :, :32], k[:, :, :32], 0.125, False, out[:, :, :32])
    assert [kernel for kernel, _, _, _ in launches] == [attention.attention_kernel(64, 2, 16, 4, 32),
                                                       attention.attention_kernel(64, 2)]


def test_a_launch_computes_its_bucket_once_per_shape_and_reads_once_per_bucket(tuned_file, monkeypatch):
    import dataclasses

    tuned_file()
    buckets, resolved = [], []
    counted = dataclasses.replace(gemm.LINEAR, bucket=lambda shape: buckets.append(shape) or gemm.linear_bucket(shape))
    real = tuned._resolve
    monkeypatch.setattr(tuned, "_resolve", lambda *a: resolved.append(a[1]) or real(*a))
    for m in (64, 40, 64, 40, 64):  # one bucket, M=33-64
        assert tuned.lookup(counted, (m, 64, 64, "bf16"), "gfx1100") == KNOBS
    assert buckets == [(64, 64, 64, "bf16"), (40, 64, 64, "bf16")] and resolved == [(64, 64, 64, "bf16")]
    # A refusal after the shape is known is what its next lookup returns.
    with pytest.warns(HKWarning, match="is refused: no longer builds"):
        tuned.refuse(counted, (40, 64, 64, "bf16"), "gfx1100", ValueError("no longer builds"))
    assert tuned.lookup(counted, (64, 64, 64, "bf16"), "gfx1100") is None


def test_hk_tuned_is_read_at_each_launch(tuned_file, monkeypatch, tmp_path):
    first = tuned_file()  # HK_TUNED names it before the first launch
    assert launched() == (8, {"BM": 64, "BN": 64, "BK": 64, "UNROLL": 4})
    other = tmp_path / "other" / "gfx1100.json"
    other.parent.mkdir()
    other.write_text(json.dumps({"format": tuned.FORMAT, "hk_version": hk.__version__, "arch": "gfx1100",
                                 "ops": {"linear": {BUCKET: {"knobs": {"waves": 4, "BM": 64}}}}}))
    monkeypatch.setenv("HK_TUNED", str(other))
    assert launched() == (4, {"BM": 64})
    monkeypatch.setenv("HK_TUNED", str(first))
    assert launched() == (8, {"BM": 64, "BN": 64, "BK": 64, "UNROLL": 4})


def test_linear_keeps_its_choice_per_layout_until_the_tuned_choices_change(tuned_file, monkeypatch):
    import hk.interp

    tuned_file(ops={})
    ran, full = [], []
    monkeypatch.setattr(hk.interp, "run", lambda traced, grid, args: ran.append((traced.warps, traced.constants["BM"])))
    real = gemm._launch_linear
    monkeypatch.setattr(gemm, "_launch_linear", lambda *a: full.append(1) or real(*a))
    x, w = operands()
    out = torch.empty(64, 64, dtype=torch.bfloat16)
    for _ in range(3):
        gemm.launch_linear(x, w, None, out)
    assert ran == [(4, 128)] * 3 and len(full) == 1
    tuned_file()  # a new file (tuned.forget()): the next call looks its bucket up again
    gemm.launch_linear(x, w, None, out)
    gemm.launch_linear(x, w, None, out)
    assert ran[3:] == [(8, 64)] * 2 and len(full) == 2
    with launch.capture() as launches:  # hk.perf's capture still sees the kept launch
        gemm.launch_linear(x, w, None, out)
    assert [(k.warps, c) for k, _, _, c in launches] == [(8, {"BM": 64, "BN": 64, "BK": 64, "UNROLL": 4})]
    assert len(ran) == 5 and len(full) == 2
    gemm.launch_linear(x[:40], w, None, out[:40])  # another M: its own checks and lookup
    assert ran[-1] == (8, 64) and len(full) == 3
    # An operand the op copies (x's columns two elements apart) is checked and copied at each call.
    wide = torch.randn(64, 128, dtype=torch.bfloat16)[:, ::2]
    gemm.launch_linear(wide, w, None, out)
    gemm.launch_linear(wide, w, None, out)
    assert len(full) == 5


SPLIT_BUCKET = "bf16 N=64 K=512 M=1-32"


def split_launched():
    """(parts, steps per part, the product's constants) of hk.ops.linear at M=1, N=64, K=512."""
    x, w = operands(1, 64, 512)
    with launch.capture() as launches:
        gemm.launch_linear(x, w, None, torch.empty(1, 64, dtype=torch.bfloat16))
    [(product, args, _, constants), (total, _, _, _)] = launches
    assert product.name.startswith("gemm_split") and total.name == "split_sum_bf16"
    return args[2].shape[0], args[3], constants


def test_split_k_takes_its_buckets_parts_and_schedule(tuned_file):
    tuned_file(ops={"linear_split_k": {SPLIT_BUCKET: {"knobs": {"parts": 4, "BN": 64}}}})
    assert split_launched() == (4, 4, {"BN": 64})
    x, w = operands(1, 64, 512)
    with quiet():
        y = hk.ops.linear(x, w)
    torch.testing.assert_close(y.float(), x.float() @ w.float().T, atol=0.1, rtol=0.02)
    tuned_file(ops={})
    assert split_launched() == (2, 8, {})  # today's rule: K's 16 steps in 2 parts


@pytest.mark.parametrize("knobs, message", [
    ({"parts": 4, "BLOCK": 2}, "sets BLOCK, which linear_split_k does not take"),
    ({"parts": 4, "BK": 24}, "is refused: .*multiple of 16 but got 24"),
    ({"parts": -1}, "is refused: parts is 0"),
])
def test_a_split_k_choice_that_no_longer_passes_falls_back_once(tuned_file, knobs, message):
    tuned_file(ops={"linear_split_k": {SPLIT_BUCKET: {"knobs": knobs}}})
    x, w = operands(1, 64, 512)
    with pytest.warns(HKWarning, match=message):
        y = hk.ops.linear(x, w)
    torch.testing.assert_close(y.float(), x.float() @ w.float().T, atol=0.1, rtol=0.02)
    with quiet():
        assert split_launched() == (2, 8, {})


def moe_operands():
    from hk.ops import moe

    torch.manual_seed(0)
    x = torch.randn(4, 64, dtype=torch.bfloat16)
    w1 = torch.randn(4, 128, 64, dtype=torch.bfloat16) * 0.1
    w2 = torch.randn(4, 64, 64, dtype=torch.bfloat16) * 0.1
    return x, w1, w2, torch.rand(4, 2), moe.routing(4, 4, 2)


def moe_blocks():
    """The block sizes of the grouped GEMMs hk.ops.fused_moe launches (4 tokens, 4 experts, top-2)."""
    x, w1, w2, weights, ids = moe_operands()
    with launch.capture() as launches:
        hk.ops.moe.launch_fused(x, w1, w2, weights, ids, None, torch.empty_like(x))
    return [k.name.rsplit("_b", 1)[1] for k, _, _, _ in launches if k.name.startswith("moe_gemm")]


MOE_BUCKET = "bf16 E=4 top_k=2 K=64 I=64 rows/expert=0-3"


def test_fused_moe_takes_its_buckets_block(tuned_file):
    from hk.ops import moe

    tuned_file(ops={"fused_moe": {MOE_BUCKET: {"knobs": {"block": 32}}}})
    assert moe_blocks() == ["32", "32_weighted"]
    x, w1, w2, weights, ids = moe_operands()
    with quiet():
        y = hk.ops.fused_moe(x, w1, w2, weights, ids)
    torch.testing.assert_close(y.float(), moe.reference(x, w1, w2, weights, ids).float(), atol=0.05, rtol=0.02)
    tuned_file(ops={})
    assert moe_blocks() == ["16", "16_weighted"]  # today's rule at 2 rows per expert


def test_a_moe_block_that_no_longer_passes_falls_back_once(tuned_file):
    tuned_file(ops={"fused_moe": {MOE_BUCKET: {"knobs": {"block": 24}}}})
    with pytest.warns(HKWarning, match="is refused: block is 0 .* not 24; using the default"):
        assert moe_blocks() == ["16", "16_weighted"]
    with quiet():
        assert moe_blocks() == ["16", "16_weighted"]
