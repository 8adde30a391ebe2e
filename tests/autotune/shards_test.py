"""A search split into shards: hk_tune's actions (tests/autotune:gemm_small_tune, two shards of
the GEMM's two candidates at 64^3) wrote disjoint results that the search read back instead of
evaluating; the same results, imported here, serve this process's search too (a key does not
depend on where the compiler is unpacked); shards and their files refused when malformed."""

import glob
import json
import os

import pytest

import hk
import hk.ops
from hk.autotune import searching, shards
from hk.errors import TuneError

HERE = os.path.dirname(os.path.abspath(__file__))
SPACE = dict(waves=[4], BM=[64], BN=[64], BK=[32], UNROLL=[2, 4])


def _outputs(suffix):
    found = sorted(glob.glob(os.path.join(HERE, "gemm_small_tune" + suffix)))
    assert found, "hk_tune's outputs are missing beside %s" % HERE
    return found


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HK_DEVICE", raising=False)
    return tmp_path


def _space():
    return hk.ops.gemm.LINEAR.space_for("gfx1100").replace(**SPACE)


def test_the_actions_split_the_candidates_and_the_search_evaluated_nothing():
    files = _outputs(".shard*.json")
    assert len(files) == 2
    per_shard = [{json.dumps(r["knobs"], sort_keys=True) for r in json.load(open(f))["records"]} for f in files]
    assert per_shard[0] and per_shard[1] and not per_shard[0] & per_shard[1]
    unroll = {json.loads(k)["UNROLL"] for s in per_shard for k in s}
    assert unroll == {2, 4}
    report = open(_outputs(".txt")[0]).read()
    assert "0 results evaluated" in report and "put into the result cache" in report, report
    tuned = json.load(open(_outputs(".json")[0]))
    entry = tuned["ops"]["linear"]["bf16 N=64 K=64 M=33-64"]
    times = {r["knobs"]["UNROLL"]: r["record"]["seconds"] for f in files for r in json.load(open(f))["records"]
             if r["record"]["status"] == "ok"}
    assert entry["knobs"]["UNROLL"] == min(times, key=times.get)


def test_imported_shards_serve_a_search_here(cache):
    assert shards.load(_outputs(".shard*.json")) >= 2
    result = searching.search(hk.ops.gemm.LINEAR, [(64, 64, 64)], "gfx1100", space=_space(), evaluator="model",
                              jobs=1)
    assert result.fresh == 0 and result.cached >= 2, result.report()


def test_a_shard_evaluated_here_matches_the_actions(cache):
    records = shards.evaluate(hk.ops.gemm.LINEAR, [(64, 64, 64)], "gfx1100", 1, 2, space=_space())
    theirs = {r["key"]: r["record"] for r in json.load(open(_outputs(".shard1.json")[0]))["records"]}
    assert records and {r["key"] for r in records} == set(theirs)
    for r in records:
        assert r["record"]["seconds"] == pytest.approx(theirs[r["key"]]["seconds"], rel=1e-9)


@pytest.mark.parametrize("index, count", [(2, 2), (-1, 2), (0, 0)])
def test_a_shard_out_of_range_is_refused(cache, index, count):
    with pytest.raises(TuneError, match="0 <= INDEX < COUNT"):
        shards.evaluate(hk.ops.gemm.LINEAR, [(64, 64, 64)], "gfx1100", index, count, space=_space())


@pytest.mark.parametrize("text", ["not json", '{"format": 9, "records": []}', '{"format": 1, "records": [{"key": 1}]}'])
def test_a_file_that_is_not_a_shards_is_refused(cache, text):
    path = cache / "bad.json"
    path.write_text(text)
    with pytest.raises(TuneError, match="bad.json is not a shard's results"):
        shards.load([str(path)])
