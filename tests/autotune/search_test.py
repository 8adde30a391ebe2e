"""hk.autotune.search on a small kernel: candidates built in worker processes, the refused ones
counted with their stage and reason, the rest ranked by hk.perf's prediction; the result cache
makes a second search evaluate nothing and a space with a value added evaluate only the new
candidate; a damaged entry is evaluated again; bad searches are TuneErrors."""

import os

import pytest
import torch

import hk
from hk.autotune import evaluate, results
from hk.errors import HKWarning, TuneError
from tests.autotune.stand_ins import Clock

ARCH = "gfx1100"


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, p.ROWS),), tune=hk.space(ROWS=[16, 24, 32]))
def double(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, ROWS=16):
    i = hk.arch.block_idx.x
    o[0, 0, i, 0] = x[0, 0, i, 0].load(hk.RT(hk.fp32, ROWS, 64)) * 2.0


def shapes():
    return [tuple(torch.empty(rows, 64, dtype=torch.float32, device="meta") for _ in range(2))
            for rows in (64, 256)]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HK_DEVICE", raising=False)


def counting(monkeypatch):
    """The candidates evaluated in this process, as knob dicts."""
    seen = []
    predict = evaluate.predict

    def spy(job):
        seen.append(job.config.as_dict())
        return predict(job)

    monkeypatch.setattr(evaluate, "predict", spy)
    return seen


def test_search_ranks_by_prediction_counts_refusals_and_a_second_search_is_free(monkeypatch):
    first = hk.autotune.search(double, shapes(), ARCH, jobs=2, evaluator="model")
    assert (first.candidates, first.fresh, first.cached) == (3, 6, 0)
    assert first.refused_by_stage() == {"trace": 1}
    [refusal] = {(r.stage, r.reason) for r in first.refusals}
    assert "multiple of 16 but got 24" in refusal[1]
    assert len(first.choices) == 2 and first.strategy == "exhaustive"
    for bucket, choice in first.choices.items():
        assert choice.seconds == min(s for _, shape, s in first.times if shape == bucket)
        assert choice.knobs["ROWS"] in (16, 32) and choice.default_seconds >= choice.seconds
    assert "W7900" in first.device and first.error is not None and first.model_version.startswith(hk.__version__)
    assert "refused (trace 1)" in first.report()

    # The second search reads every result: no candidate is built or predicted.
    def never(job):
        raise AssertionError("evaluated %s again" % job.config)

    monkeypatch.setattr(evaluate, "predict", never)
    second = hk.autotune.search(double, shapes(), ARCH, jobs=1, evaluator="model")
    assert (second.fresh, second.cached) == (0, 6)
    assert {b: c.knobs for b, c in second.choices.items()} == {b: c.knobs for b, c in first.choices.items()}
    assert second.refused_by_stage() == {"trace": 1}
    # Asked for a large gain, every bucket keeps today's choice (still from the cache).
    kept = hk.autotune.search(double, shapes(), ARCH, jobs=1, evaluator="model", min_gain=1e6)
    assert all(c.knobs == {"ROWS": 16} and c.gain == 1.0 for c in kept.choices.values())


def test_a_knob_value_added_evaluates_only_the_new_candidate(monkeypatch):
    hk.autotune.search(double, shapes()[:1], ARCH, jobs=1, evaluator="model")
    seen = counting(monkeypatch)
    wider = double.tune.with_values(ROWS=[48])
    result = hk.autotune.search(double, shapes()[:1], ARCH, space=wider, jobs=1, evaluator="model")
    assert seen == [{"ROWS": 48}]
    assert (result.candidates, result.fresh, result.cached) == (4, 1, 3)


def test_a_damaged_result_is_evaluated_again_with_a_warning(monkeypatch):
    hk.autotune.search(double, shapes()[:1], ARCH, space=hk.space(ROWS=[16]), jobs=1, evaluator="model")
    [path] = [os.path.join(d, n) for d, _, names in os.walk(results.root()) for n in names]
    with open(path, "r+") as f:
        f.truncate(10)
    seen = counting(monkeypatch)
    with pytest.warns(HKWarning, match="is damaged"):
        result = hk.autotune.search(double, shapes()[:1], ARCH, space=hk.space(ROWS=[16]), jobs=1,
                                    evaluator="model")
    assert seen == [{"ROWS": 16}] and result.fresh == 1


def test_a_spilling_candidate_is_refused_by_the_gate():
    # A 256 x 64 fp32 tile is 512 registers a lane.
    result = hk.autotune.search(double, shapes()[:1], ARCH, space=hk.space(ROWS=[16, 256]), jobs=1,
                                evaluator="model")
    [stage] = set(result.refused_by_stage())
    assert stage in ("verify", "gate") and list(result.choices.values())[0].knobs == {"ROWS": 16}


def test_a_pattern_search_starts_also_from_tuned_choices(monkeypatch):
    seen = counting(monkeypatch)
    result = hk.autotune.search(double, shapes()[:1], ARCH, jobs=1, evaluator="model", strategy="pattern",
                                effort="low", starts=[{"ROWS": 32}, {"ROWS": 48}, {"COLS": 8}, {"ROWS": 16}])
    # Today's choice alone, then the one start the space admits (48 is no value of it, COLS no
    # knob, 16 today's), before any neighbour.
    assert seen[:2] == [{"ROWS": 16}, {"ROWS": 32}]
    assert result.starts == 1 and "pattern search (also from 1 tuned choice)" in result.report()
    assert hk.autotune.search(double, shapes()[:1], ARCH, jobs=1, evaluator="model").starts == 0


@pytest.mark.parametrize("options, message", [
    (dict(space=hk.space(COLS=[64])), "double takes no knob COLS"),
    (dict(space=hk.space(ROWS=[24])), r"every candidate was refused \(trace 1\)"),
    (dict(shapes=[]), "no shapes to search at"),
    (dict(effort="max"), "effort is one of"),
    (dict(strategy="random"), "the strategy is"),
    (dict(evaluator="time"), "the 'time' evaluator needs a GPU of gfx1100"),
    (dict(min_gain=0.5), "min_gain is at least 1.0"),
])
def test_bad_searches_are_tune_errors(options, message):
    given = shapes()[:1] if "shapes" not in options else options.pop("shapes")
    with pytest.raises(TuneError, match=message):
        hk.autotune.search(double, given, ARCH, jobs=1, **dict(dict(evaluator="model"), **options))


def test_a_kernel_without_a_space_is_refused():
    @hk.kernel(grid=(1,))
    def plain(x: hk.Tensor[hk.fp32], *, N=1):
        pass

    with pytest.raises(TuneError, match="declares no search space"):
        hk.autotune.search(plain, [()], ARCH)


def test_the_timed_evaluator_builds_then_times_each_shape(monkeypatch):
    # No GPU here: the interpreter runs the launches and the clock is the test's.
    monkeypatch.setenv("HK_DEVICE", "interp")
    from hk.autotune.space import Config
    from hk.autotune.tunable import of_kernel

    tunable = of_kernel(double)
    job = evaluate.Job(tunable, Config({"ROWS": 16}), ARCH, [(shapes()[0], "k1")], "time")
    [(key, record)] = evaluate.time(job, clock=Clock(2e-6), tensor_device="cpu")
    assert key == "k1" and record["status"] == "ok" and record["seconds"] == 2e-6
    refused = evaluate.Job(tunable, Config({"ROWS": 24}), ARCH, [(shapes()[0], "k2")], "time")
    [(_, record)] = evaluate.time(refused, clock=Clock(2e-6), tensor_device="cpu")
    assert record["status"] == "refused" and record["stage"] == "trace"


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), tune=hk.space(X=[1, 2]))
def flaky(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, X=1):
    i = hk.arch.block_idx.x
    scale = {1: 2.0}[X]  # X=2: a Python error while tracing, not a refusal of hk's
    o[0, 0, i, 0] = x[0, 0, i, 0].load(hk.RT(hk.fp32, 16, 64)) * scale


def test_a_foreign_exception_is_reported_but_never_cached(monkeypatch):
    first = hk.autotune.search(flaky, shapes()[:1], ARCH, jobs=1, evaluator="model")
    [refusal] = first.refusals
    assert refusal.knobs == {"X": 2} and "KeyError" in refusal.reason
    seen = counting(monkeypatch)
    hk.autotune.search(flaky, shapes()[:1], ARCH, jobs=1, evaluator="model")
    assert seen == [{"X": 2}]


def test_how_the_work_is_shared_changes_no_record():
    # Whole candidates first, the last ones a shape at a time; whichever worker makes a record,
    # it is the prediction hk.perf makes of that candidate at that shape on its own, to the bit.
    from hk import perf
    from hk.autotune.space import Config
    from hk.autotune.tunable import of_kernel

    tunable = of_kernel(double)
    configs = [Config({"ROWS": r}) for r in (16, 32, 24, 16, 32, 16)]
    jobs = [evaluate.Job(tunable, c, ARCH, [(s, "k%d.%d" % (n, i)) for i, s in enumerate(shapes())], "model")
            for n, c in enumerate(configs)]
    parts = evaluate._parts(jobs, 2)
    assert [(i, s) for i, s, _ in parts] == [(0, [0, 1]), (1, [0, 1]), (2, [0]), (3, [0]), (4, [0]), (5, [0]),
                                             (2, [1]), (3, [1]), (4, [1]), (5, [1])]
    finished = []
    shared = evaluate.run(jobs, workers=2, done=finished.append)
    assert sorted(id(j) for j in finished) == sorted(id(j) for j in jobs)
    alone = evaluate.run(jobs, workers=1)
    assert shared == alone
    for job, outcome in zip(jobs, shared):
        assert [k for k, _ in outcome] == [k for _, k in job.shapes]
        for (shape, _), (_, record) in zip(job.shapes, outcome):
            if job.config["ROWS"] == 24:
                assert record["status"] == "refused" and record["stage"] == "trace"
                continue
            direct = perf.predict(double, *shape, arch=ARCH, **job.config.as_dict())
            assert record["status"] == "ok" and record["seconds"] == direct.seconds
