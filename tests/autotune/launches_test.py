"""Candidates of several launches: decode's split-K linear (the split product and the sum of its
parts) and a MoE layer (its two grouped GEMMs), each searched over a tiny space on gfx1100 with
every launch of a candidate predicted and the times summed; the fastest goes into a tuned file
that hk.ops then launches with, computing what torch does on the interpreter. A multi-launch
candidate is timed as one unit; bad declarations and searches are TuneErrors."""

import json

import pytest
import torch

import hk
import hk.ops
from hk import perf, tuned
from hk.autotune import evaluate, searching
from hk.autotune.space import Config
from hk.autotune.tunable import Tunable
from hk.errors import TuneError
from hk.ops import gemm, moe
from hk.runtime import launch
from tests.autotune.stand_ins import Clock

ARCH = "gfx1100"
SPLIT_SHAPE = (1, 64, 512)            # M=1: K's 16 steps in 2 parts by today's rule
MOE_SHAPE = (4, 4, 2, 64, 64)         # 4 tokens, 4 experts, top-2, K 64, I 64


@pytest.fixture(autouse=True)
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("HK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HK_DEVICE", raising=False)
    monkeypatch.delenv("HK_AUTOTUNE", raising=False)
    tuned.forget()
    yield
    tuned.forget()


def spied(monkeypatch):
    """{knobs: record} of every candidate predicted in this process."""
    seen = {}
    real = evaluate.predict

    def spy(job):
        out = real(job)
        for _, record in out:
            seen[tuple(sorted(job.config.as_dict().items()))] = record
        return out

    monkeypatch.setattr(evaluate, "predict", spy)
    return seen


def separately(tunable, knobs, shape):
    """The candidate's launches, each predicted on its own."""
    return [perf.predict(x.kernel, *x.args, arch=ARCH, **x.constants).seconds
            for x in tunable.launches_of(Config(knobs), shape)]


def search_and_write(tunable, shape, space, monkeypatch, tmp_path):
    """(search result, the ok records by knobs) of a search whose choices are written to the
    tuned file HK_TUNED then names, as hk-tune writes them."""
    seen = spied(monkeypatch)
    result = searching.search(tunable, [shape], ARCH, space=space, jobs=1, evaluator="model")
    path = tmp_path / (ARCH + ".json")
    tuned.write(str(path), ARCH, tunable.name, {b: tuned.entry_of(c, result) for b, c in result.choices.items()})
    monkeypatch.setenv("HK_TUNED", str(path))
    monkeypatch.setenv("HK_DEVICE", "interp")
    monkeypatch.setenv("HK_ARCH", ARCH)
    return result, seen


def test_split_k_search_sums_both_launches_and_linear_takes_the_choice(monkeypatch, tmp_path):
    space = hk.space(parts=[0, 4, 16])  # 2, 4 and 16 parts of K's 16 steps
    result, seen = search_and_write(gemm.SPLIT_K, SPLIT_SHAPE, space, monkeypatch, tmp_path)
    assert result.candidates == 3 and not result.refusals
    for record in seen.values():
        assert record["status"] == "ok" and len(record["launches"]) == 2
        assert record["seconds"] == pytest.approx(sum(record["launches"]), rel=1e-12)
    [choice] = result.choices.values()
    assert choice.bucket == "bf16 N=64 K=512 M=1-32"
    assert choice.seconds == min(s for _, _, s in result.times)
    # The sum is what each launch predicts on its own.
    alone = separately(gemm.SPLIT_K, choice.knobs, SPLIT_SHAPE)
    assert len(alone) == 2 and choice.seconds == pytest.approx(sum(alone), rel=1e-9)
    assert json.load(open(tmp_path / (ARCH + ".json")))["ops"]["linear_split_k"][choice.bucket]["knobs"] == choice.knobs

    # hk.ops.linear at M=1 launches the chosen parts, and computes the product.
    torch.manual_seed(0)
    x, w = torch.randn(1, 512, dtype=torch.bfloat16), torch.randn(64, 512, dtype=torch.bfloat16)
    with launch.capture() as launches:
        gemm.launch_linear(x, w, None, torch.empty(1, 64, dtype=torch.bfloat16))
    product, constants, parts, per = gemm.split_plan(choice.knobs, SPLIT_SHAPE + ("bf16",))
    [(k1, args1, _, c1), (k2, args2, _, _)] = launches
    assert (k1, c1, args1[2].shape[0], args1[3]) == (product, constants, parts, per)
    assert k2 is gemm.split_sum_kernel(hk.bf16, False) and args2[0] is args1[2]
    y = hk.ops.linear(x, w)
    torch.testing.assert_close(y.float(), x.float() @ w.float().T, atol=0.1, rtol=0.02)


def test_moe_search_sums_both_grouped_gemms_and_fused_moe_takes_the_choice(monkeypatch, tmp_path):
    space = hk.space(block=[0, 32])  # today's rule (16 here) and 32
    result, seen = search_and_write(moe.FUSED_MOE, MOE_SHAPE, space, monkeypatch, tmp_path)
    assert result.candidates == 2 and not result.refusals
    for record in seen.values():
        assert record["status"] == "ok" and len(record["launches"]) == 2
    [choice] = result.choices.values()
    assert choice.bucket == "bf16 E=4 top_k=2 K=64 I=64 rows/expert=0-3"
    assert choice.seconds == min(s for _, _, s in result.times)
    alone = separately(moe.FUSED_MOE, choice.knobs, MOE_SHAPE)
    assert choice.seconds == pytest.approx(sum(alone), rel=1e-9)

    torch.manual_seed(0)
    x = torch.randn(4, 64, dtype=torch.bfloat16)
    w1 = torch.randn(4, 128, 64, dtype=torch.bfloat16) * 0.1
    w2 = torch.randn(4, 64, 64, dtype=torch.bfloat16) * 0.1
    ids = moe.routing(4, 4, 2)
    weights = torch.rand(4, 2)
    with launch.capture() as launches:
        moe.launch_fused(x, w1, w2, weights, ids, None, torch.empty_like(x))
    block = moe.block_of(choice.knobs, 8, 4)
    grouped = [k for k, _, _, _ in launches if k.name.startswith("moe_gemm")]
    assert grouped == [moe.moe_gemm_kernel(hk.bf16, 2, False, block), moe.moe_gemm_kernel(hk.bf16, 1, True, block)]
    y = hk.ops.fused_moe(x, w1, w2, weights, ids)
    torch.testing.assert_close(y.float(), moe.reference(x, w1, w2, weights, ids).float(), atol=0.05, rtol=0.02)


def test_a_candidate_of_several_launches_is_timed_as_one_unit(monkeypatch):
    # No GPU here: the interpreter runs the launches and the clock is the test's.
    monkeypatch.setenv("HK_DEVICE", "interp")
    ran = []
    import hk.interp

    real = hk.interp.run
    monkeypatch.setattr(hk.interp, "run",
                        lambda traced, grid, args: ran.append(traced.name) or real(traced, grid, args))
    from hk.autotune import timing

    measure = timing.measure
    monkeypatch.setattr(timing, "measure", lambda fn, clock=None: measure(fn, warmup=1, runs=2, clock=clock))
    job = evaluate.Job(gemm.SPLIT_K, Config({"parts": 4}), ARCH, [(SPLIT_SHAPE, "k1")], "time")
    [(key, record)] = evaluate.time(job, clock=Clock(3e-6), tensor_device="cpu")
    assert key == "k1" and record["status"] == "ok" and record["seconds"] == 3e-6
    # Each run (one warm-up, two timed) is the product then the sum.
    assert ran == ["gemm_split", "split_sum_bf16"] * 3


def test_shards_of_a_multi_launch_search_serve_it(monkeypatch, tmp_path):
    from hk.autotune import shards

    space = hk.space(block=[0, 32])
    files = []
    for index in range(2):
        path = str(tmp_path / ("shard%d.json" % index))
        records = shards.evaluate(moe.FUSED_MOE, [MOE_SHAPE], ARCH, index, 2, space=space)
        assert [r["knobs"] for r in records] == [{"block": (0, 32)[index]}]
        assert all(len(r["record"]["launches"]) == 2 for r in records)
        shards.write(path, records)
        files.append(path)
    monkeypatch.setenv("HK_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert shards.load(files) == 2
    result = searching.search(moe.FUSED_MOE, [MOE_SHAPE], ARCH, space=space, jobs=1, evaluator="model")
    assert (result.fresh, result.cached) == (0, 2)


def test_bad_declarations_and_searches_are_tune_errors():
    with pytest.raises(TuneError, match="linear_split_k takes no knob BLOCK"):
        searching.search(gemm.SPLIT_K, [SPLIT_SHAPE], ARCH, space=hk.space(BLOCK=[1]), evaluator="model")
    with pytest.raises(TuneError, match="fused_moe takes no knob BM"):
        searching.search(moe.FUSED_MOE, [MOE_SHAPE], ARCH, space=hk.space(BM=[64]), evaluator="model")
    with pytest.raises(TuneError, match="needs at least one knob"):
        searching.search(moe.FUSED_MOE, [MOE_SHAPE], ARCH, space=hk.space(), evaluator="model")
    with pytest.raises(TuneError, match="no shapes to search at"):
        searching.search(gemm.SPLIT_K, [], ARCH, evaluator="model")
    with pytest.raises(TuneError, match="either kernel and arguments .* not both"):
        Tunable(name="x", space=None, knobs=frozenset(), default=dict, bucket=str, describe=str,
                kernel=lambda c, s: None, arguments=tuple, launches=lambda c, s: [])
    with pytest.raises(TuneError, match="not neither"):
        Tunable(name="x", space=None, knobs=frozenset(), default=dict, bucket=str, describe=str)
    empty = Tunable(name="x", space=None, knobs=frozenset(), default=dict, bucket=str, describe=str,
                    launches=lambda c, s: [])
    with pytest.raises(TuneError, match="a non-empty list of hk.autotune.Launch"):
        empty.launches_of(Config({}), ())


def test_a_knob_value_a_candidate_cannot_take_is_refused_at_declare():
    # A block that is no multiple of 16 and parts < 0: the factories refuse them, no build runs.
    refused = searching.search(moe.FUSED_MOE, [MOE_SHAPE], ARCH, space=hk.space(block=[0, 24]), jobs=1,
                               evaluator="model")
    assert refused.refused_by_stage() == {"declare": 1}
    [r] = refused.refusals
    assert r.knobs == {"block": 24} and "a multiple of 16 up to 128, not 24" in r.reason
