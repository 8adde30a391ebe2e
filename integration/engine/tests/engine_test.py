"""hk_engine, the core every engine patch shares, on a made-up engine: routing tables, the
contract check (all or nothing, one warning), switches, counters and their dump, the CUDA-graph
contract, and patches replaced and put back."""

import json
import os
import subprocess
import sys
import textwrap
import time
import types
import warnings

import pytest

from hk_engine import capture, contract, counters, plugin, routing, switches

TABLE = {
    "target": "gfx1100",
    "ops": {
        "linear": [
            {"when": {"dtype": ["bfloat16", "float16"], "m": [1, 32]}, "route": "hk"},
            {"when": {"dtype": ["bfloat16"], "m": [33, None]}, "route": "triton"},
            {"when": {}, "route": "engine"},
        ],
        "norm": [{"when": {"cols": [None, 1024]}, "route": "hk"}],
    },
}


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    for var in [v for v in os.environ if v.startswith(("HK_FAKE", "HK_ENGINE_ROUTES"))]:
        monkeypatch.delenv(var)
    routing.clear_cache()
    counters.reset()
    capture.reset()
    plugin.reset_uncovered_warnings()
    yield
    routing.clear_cache()


def test_the_first_matching_rule_routes():
    t = routing.Table(TABLE)
    assert t.route("linear", dtype="bfloat16", m=1) == "hk"
    assert t.route("linear", dtype="float16", m=32) == "hk"
    assert t.route("linear", dtype="bfloat16", m=33) == "triton"
    assert t.route("linear", dtype="float16", m=33) == "engine"
    assert t.route("linear", dtype="float32", m=4) == "engine"
    assert t.route("linear", m=4) == "engine"  # a fact a rule names but the call lacks: no match
    assert t.route("norm", cols=1024) == "hk" and t.route("norm", cols=1025) == "engine"
    assert t.route("attention", seqs=3) == "engine"  # no rules: the engine's


def test_an_engine_takes_its_own_rules_else_the_shared_ones():
    # MoE's rules differ per engine (each engine's own kernel predicted apart); linear's are shared.
    t = routing.Table({"ops": {"moe": [{"when": {}, "route": "triton"}], "linear": [{"when": {}, "route": "hk"}]},
                       "engines": {"vllm": {"moe": [{"when": {"m": [1, 8]}, "route": "hk"}]},
                                   "sglang": {"moe": [{"when": {"m": [9, None]}, "route": "hk"}]}}})
    assert t.route("moe", "vllm", m=8) == "hk" and t.route("moe", "vllm", m=9) == "engine"
    assert t.route("moe", "sglang", m=8) == "engine" and t.route("moe", "sglang", m=9) == "hk"
    assert t.route("moe", "other", m=8) == "triton" and t.route("moe", m=8) == "triton"  # no own rules: shared
    assert t.route("linear", "sglang", m=8) == "hk" and t.rules("linear", "vllm") == t.ops["linear"]
    for bad, why in (({"engines": {"vllm": []}}, "engines are"),
                     ({"engines": {"vllm": {"moe": {}}}}, "the rules of vllm's moe are not a list"),
                     ({"engines": {"sglang": {"moe": [{"route": 1}]}}}, "sglang's moe rule 0")):
        with pytest.raises(routing.TableError, match=why):
            routing.Table(bad)


def test_dispatch_routes_by_the_engine_its_counter_names():
    table = routing.Table({"engines": {"vllm": {"moe": [{"when": {}, "route": "hk"}]},
                                       "sglang": {"moe": [{"when": {}, "route": "engine"}]}}})
    served = [plugin.dispatch("%s.moe" % e, "moe", {"m": 4}, lambda: "hk", lambda: "engine", table=table)
              for e in ("vllm", "sglang")]
    assert served == ["hk", "engine"]
    assert counters.snapshot()["vllm.moe"] == {"hk": 1} and counters.snapshot()["sglang.moe"] == {"engine": 1}


def test_a_rule_may_carry_its_basis_and_predicted_figures():
    t = routing.Table({"ops": {"moe": [{"when": {"m": [1, 8]}, "route": "hk", "basis": "predicted at 8 tokens",
                                        "ratio": 1.5, "hk_us": 10.0, "engine_us": 15.0}]}})
    assert t.route("moe", m=8) == "hk" and t.route("moe", m=9) == "engine"


@pytest.mark.parametrize("bad, message", [
    ({"ops": {"linear": {"route": "hk"}}}, "not a list"),
    ({"ops": {"linear": [{"when": {}}]}}, "a rule is"),
    ({"ops": {"linear": [{"when": {"m": [1, 2, 3]}, "route": "hk"}]}}, "neither a list of names nor a range"),
    ({"ops": {"linear": [{"when": {"m": 4}, "route": "hk"}]}}, "neither a list of names nor a range"),
    ([], "a table is"),
    ({"ops": {"moe": [{"when": {}, "route": "hk", "basis": 3}]}}, "basis is text"),
    ({"ops": {"moe": [{"when": {}, "route": "hk", "ratio": "1.2"}]}}, "ratio is a positive number"),
    ({"ops": {"moe": [{"when": {}, "route": "hk", "hk_us": -1}]}}, "hk_us is a positive number"),
])
def test_a_malformed_table_is_refused_with_its_fault(bad, message):
    with pytest.raises(routing.TableError, match=message):
        routing.Table(bad, "bad.json")


def test_shipped_tables_load_and_route_by_their_published_rules(monkeypatch):
    assert {"gfx1100", "gfx1201", "gfx942", "gfx950"} <= set(routing.shipped_targets())
    for arch in routing.shipped_targets():
        t = routing.table(arch)
        assert t.target == arch and t.provenance
        assert all(rule.get("basis") for rules in t.ops.values() for rule in rules)
    # The ops with no code object to predict route by published measurements (routes_test checks
    # the predicted ones against their figures).
    gfx1100, gfx950 = routing.table("gfx1100"), routing.table("gfx950")
    assert gfx1100.route("linear", dtype="bfloat16", m=7, n=4096, k=4096) == "hk"  # 1.28-1.39x hipBLASLt
    assert gfx1100.route("linear", dtype="float32", m=7) == "engine"
    assert gfx950.route("linear", dtype="bfloat16", m=7) == "engine"  # 0.41x hipBLASLt
    assert gfx950.route("rms_norm", dtype="bfloat16", form="fused_add") == "hk"
    assert gfx950.route("rms_norm", dtype="bfloat16", form="plain") == "engine"
    assert routing.table("gfx942").route("linear", dtype="bfloat16", m=1) == "engine"
    assert routing.table("gfx9999").route("linear", dtype="bfloat16", m=1) == "engine"


def test_hk_engine_routes_overrides_the_shipped_table(tmp_path, monkeypatch):
    path = tmp_path / "routes.json"
    path.write_text(json.dumps({"target": "any", "ops": {"attention_decode": [{"when": {}, "route": "hk"}]}}))
    monkeypatch.setenv("HK_ENGINE_ROUTES", str(path))
    routing.clear_cache()
    assert routing.table("gfx1100").route("attention_decode", seqs=2) == "hk"
    path.write_text("{not json")
    routing.clear_cache()
    with pytest.raises(routing.TableError, match="cannot read the routing table"):
        routing.table("gfx1100")


def test_switches(monkeypatch):
    assert switches.enabled("fake") and switches.enabled("fake", "linear")
    monkeypatch.setenv("HK_FAKE_LINEAR", "0")
    assert not switches.enabled("fake", "linear") and switches.enabled("fake", "norm")
    monkeypatch.setenv("HK_FAKE", "off")
    assert not switches.enabled("fake") and not switches.enabled("fake", "norm")
    assert switches.variable("vllm", "moe") == "HK_VLLM_MOE"


# A made-up engine: a module with a version, a layer method and a module function to patch.
ENGINE = textwrap.dedent("""\
    __version__ = "1.4.2"

    class Linear:
        def apply(self, layer, x, bias=None):
            return ("engine", x)

        @staticmethod
        def pack(w):
            return ("engine-pack", w)

    def rms_norm(x, weight, eps):
        return ("engine", x)
    """)


@pytest.fixture
def engine(tmp_path, monkeypatch):
    (tmp_path / "fake_engine.py").write_text(ENGINE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("fake_engine", None)
    import fake_engine

    yield fake_engine
    sys.modules.pop("fake_engine", None)


def make_plugin(engine, version="1.4.2", params=("self", "layer", "x", "bias"), installed=None):
    def wrap_apply(original):
        def apply(self, layer, x, bias=None):
            return plugin.dispatch("fake.linear", "linear", {"dtype": "bfloat16", "m": x},
                                   lambda: ("hk", x), lambda: original(self, layer, x, bias),
                                   uncovered="odd" if x % 2 else None, arch="gfx1100",
                                   others={"triton": lambda: ("triton", x)})
        return apply

    def wrap_pack(original):
        return lambda w: ("hk-pack", w)

    patches = [
        plugin.Patch("linear", [plugin.Target("fake_engine.Linear.apply", wrap_apply, params),
                                plugin.Target("fake_engine.Linear.pack", wrap_pack, ("w",))]),
        plugin.Patch("norm", [plugin.Target("fake_engine.rms_norm", lambda o: lambda x, w, e: ("hk", x),
                                            ("x", "weight", "eps"))],
                     install=(lambda: installed.append("norm")) if installed is not None else None,
                     uninstall=(lambda: installed.remove("norm")) if installed is not None else None),
    ]
    return plugin.Plugin("fake", version=version, supported=("1.4.",), patches=patches)


def test_register_patches_routes_counts_and_unregister_restores(engine, monkeypatch):
    monkeypatch.setenv("HK_ENGINE_ROUTES", "")
    original_apply, original_pack = engine.Linear.apply, engine.Linear.__dict__["pack"]
    installed = []
    p = make_plugin(engine, installed=installed)
    assert p.register() and p.register()  # once; a second call does nothing
    assert p.names() == ["linear", "norm"] and installed == ["norm"]
    layer = engine.Linear()
    assert layer.apply(None, 2) == ("hk", 2)                     # m 2: the table's hk
    assert layer.apply(None, 3) == ("engine", 3)                 # uncovered: the engine's
    assert engine.Linear.pack(1) == ("hk-pack", 1)               # a staticmethod stays one
    assert engine.rms_norm(5, None, 1e-6) == ("hk", 5)
    # One registration in this process (the plugin counts it once, a second call not again).
    assert counters.snapshot() == {"fake.plugin": {"patched": 1}, "fake.linear": {"hk": 1, "engine:uncovered": 1}}
    p.unregister()
    assert engine.Linear.apply is original_apply and engine.Linear.__dict__["pack"] is original_pack
    assert layer.apply(None, 2) == ("engine", 2) and installed == []


def test_other_routes_and_the_capture_contract(engine, monkeypatch, tmp_path):
    path = tmp_path / "routes.json"
    path.write_text(json.dumps(TABLE))
    monkeypatch.setenv("HK_ENGINE_ROUTES", str(path))
    p = make_plugin(engine)
    assert p.register()
    layer = engine.Linear()
    assert layer.apply(None, 40) == ("triton", 40)
    monkeypatch.setattr(capture, "capturing", lambda: True)
    assert layer.apply(None, 4) == ("engine", 4)  # never launched: not under capture
    monkeypatch.setattr(capture, "capturing", lambda: False)
    assert layer.apply(None, 4) == ("hk", 4)
    monkeypatch.setattr(capture, "capturing", lambda: True)
    assert layer.apply(None, 4) == ("hk", 4)  # launched before: its kernel is loaded
    assert counters.snapshot()["fake.linear"] == {"triton": 1, "engine:capture": 1, "hk": 2}
    p.unregister()


def test_switches_leave_a_patch_or_the_plugin_off(engine, monkeypatch):
    monkeypatch.setenv("HK_FAKE_NORM", "0")
    p = make_plugin(engine)
    assert p.register() and p.names() == ["linear"]
    assert engine.rms_norm(5, None, 1e-6) == ("engine", 5)
    p.unregister()
    monkeypatch.setenv("HK_FAKE", "0")
    assert not make_plugin(engine).register()
    assert engine.Linear().apply(None, 2) == ("engine", 2)
    assert counters.snapshot()["fake.plugin"] == {"patched": 1, "off": 1}


@pytest.mark.parametrize("change, expected", [
    (lambda e: delattr(e, "rms_norm"), "fake_engine has no attribute rms_norm"),
    (lambda e: setattr(e.Linear, "apply", lambda self, layer, inputs: None), "takes (self, layer, inputs)"),
    (None, "fake 1.3.9 is not a version this plugin was written for (1.4.*)"),
])
def test_an_engine_not_as_expected_stays_stock_with_one_warning(engine, change, expected):
    version = "1.4.2"
    if change:
        change(engine)
    else:
        version = "1.3.9"
    apply = engine.Linear.apply
    p = make_plugin(engine, version=version)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not p.register()
    assert len(caught) == 1 and issubclass(caught[0].category, plugin.EngineWarning)
    assert expected in str(caught[0].message), str(caught[0].message)
    assert engine.Linear.apply is apply and p.names() == []
    assert counters.snapshot() == {"fake.plugin": {"refused": 1}}


def test_calls_hk_does_not_cover_warn_once_per_patch_and_reason(engine):
    p = make_plugin(engine)
    assert p.register()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in (3, 5, 7, 2):  # odd: "odd", which hk does not cover
            engine.Linear().apply(None, x)
        plugin.dispatch("fake.norm", "rms_norm", {}, lambda: "hk", lambda: "engine", uncovered="dtype")
        plugin.dispatch("fake.norm", "rms_norm", {}, lambda: "hk", lambda: "engine", uncovered="dtype")
    assert sorted(str(w.message) for w in caught if issubclass(w.category, plugin.UncoveredWarning)) == [
        "fake.linear: hk's kernel does not cover these calls (odd); the engine's own kernel serves them "
        "(counted as engine:uncovered)",
        "fake.norm: hk's kernel does not cover these calls (dtype); the engine's own kernel serves them "
        "(counted as engine:uncovered)"]
    assert counters.snapshot()["fake.linear"] == {"engine:uncovered": 3, "hk": 1}
    p.unregister()


def test_contract_resolves_modules_attributes_and_enum_members(engine):
    obj, parent, name = contract.resolve("fake_engine.Linear.apply")
    assert parent is engine.Linear and name == "apply"
    assert contract.resolve("os.path.join")[0] is os.path.join
    with pytest.raises(LookupError, match="no_such_engine"):
        contract.resolve("no_such_engine.x")
    assert contract.check("fake", "1.4.0", ("1.4.",), [contract.Seam("fake_engine.Linear", None)]) == []


def test_counters_are_written_while_the_process_lives_which_may_never_exit(tmp_path):
    # Engines kill their workers: the counts reach PATH.<pid> within a second of each change.
    code = ("import os, time; from hk_engine import counters; counters.count('sglang.attention', 'hk', 4); "
            "print('counted', flush=True); time.sleep(60)")
    env = dict(os.environ, HK_ENGINE_COUNTERS=str(tmp_path / "counts"))
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, universal_newlines=True)
    try:
        assert proc.stdout.readline().strip() == "counted"
        written = tmp_path / ("counts.%d" % proc.pid)
        deadline = time.monotonic() + 10
        while not written.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert json.loads(written.read_text()) == {"sglang.attention": {"hk": 4}}
    finally:
        proc.kill()
        proc.wait()
    assert [p.name for p in tmp_path.iterdir()] == [written.name]  # no half-written file left


def test_counters_are_dumped_at_exit_when_asked(tmp_path):
    code = ("from hk_engine import counters; counters.count('vllm.linear', 'hk', 3); "
            "counters.count('vllm.linear', 'engine')")
    env = dict(os.environ, HK_ENGINE_COUNTERS=str(tmp_path / "counts"))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    (dumped,) = [p for p in tmp_path.iterdir() if p.name.startswith("counts.")]
    assert json.loads(dumped.read_text()) == {"vllm.linear": {"engine": 1, "hk": 3}}
    env["HK_ENGINE_COUNTERS"] = "-"
    out = subprocess.run([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE,
                         universal_newlines=True, check=True)
    assert '"hk": 3' in out.stderr
    del env["HK_ENGINE_COUNTERS"]
    quiet = subprocess.run([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE,
                           universal_newlines=True, check=True)
    assert "counters" not in quiet.stderr


def test_read_all_gathers_each_process_counts(tmp_path):
    code = "from hk_engine import counters; counters.count('vllm.linear', 'hk', %d)"
    env = dict(os.environ, HK_ENGINE_COUNTERS=str(tmp_path / "counts"))
    for n in (2, 5):
        subprocess.run([sys.executable, "-c", code % n], env=env, check=True)
    (tmp_path / "counts.tmp").write_text("{")     # not a pid: never read
    (tmp_path / "other.123").write_text("{}")     # another prefix
    counts = counters.read_all(tmp_path / "counts")
    assert sorted(c["vllm.linear"]["hk"] for c in counts.values()) == [2, 5]
    assert all(isinstance(pid, int) for pid in counts)
