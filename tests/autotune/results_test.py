"""The result cache: a key per candidate that changes with each thing that decides a result;
entries written whole under concurrent writers; a damaged entry is a warning and a miss, never
a result."""

import json
import multiprocessing
import os

import pytest

from hk.autotune import results
from hk.autotune.space import Config
from hk.errors import HKWarning

PARTS = dict(source_digest="src", config=Config({"BM": 128, "BK": 32}), target="model gfx1100 W7900",
             compiler_digest="cc", model_version="0.1.0+abc", shape="bf16 M=64 N=64 K=64")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HK_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_key_changes_with_every_part_and_not_with_the_knobs_order():
    base = results.key(**PARTS)
    assert results.key(**dict(PARTS, config={"BK": 32, "BM": 128})) == base
    for name, other in (("source_digest", "src2"), ("config", Config({"BM": 64, "BK": 32})),
                        ("target", "model gfx950 MI355X"), ("compiler_digest", "cc2"),
                        ("model_version", "0.1.0+def"), ("shape", "bf16 M=128 N=64 K=64")):
        assert results.key(**dict(PARTS, **{name: other})) != base, name


def test_put_then_get_and_a_miss():
    k = results.key(**PARTS)
    assert results.get(k) is None
    results.put(k, {"status": "ok", "seconds": 1.5e-6})
    assert results.get(k) == {"status": "ok", "seconds": 1.5e-6}
    assert os.path.exists(os.path.join(results.root(), k[:2], k + ".json"))


@pytest.mark.parametrize("damage", [
    lambda text: text[: len(text) // 2],                                 # truncated
    lambda text: text.replace("1.5e-06", "1.5e-09"),                     # a value edited
    lambda text: "not json",
    lambda text: json.dumps({"record": {"status": "ok"}}),               # no key, no digest
])
def test_a_damaged_entry_is_a_warning_and_a_miss(damage):
    k = results.key(**PARTS)
    results.put(k, {"status": "ok", "seconds": 1.5e-6})
    path = os.path.join(results.root(), k[:2], k + ".json")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(damage(text))
    with pytest.warns(HKWarning, match="is damaged"):
        assert results.get(k) is None
    results.put(k, {"status": "ok", "seconds": 2e-6})  # evaluated again, written whole
    assert results.get(k)["seconds"] == 2e-6


def _writer(args):
    cache, index = args
    os.environ["HK_CACHE_DIR"] = cache
    k = results.key(**dict(PARTS, shape="s%d" % (index % 3)))
    for i in range(30):
        results.put(k, {"status": "ok", "seconds": float(index), "padding": "x" * 4096})
        record = results.get(k)
        assert record is not None and record["padding"] == "x" * 4096
    return True


def test_concurrent_writers_and_readers_never_see_a_partial_entry(cache_dir):
    with multiprocessing.get_context("fork").Pool(4) as pool:
        assert all(pool.map(_writer, [(str(cache_dir), i) for i in range(8)]))
    leftovers = [n for _, _, names in os.walk(results.root()) for n in names if n.endswith(".tmp")]
    assert not leftovers
