"""hk-routes (routes_from_model): the engine's own Triton kernel read from vLLM's or SGLang's
pinned environment, compiled for a target and predicted beside hk's kernel; the table it writes
routes as the predictions say, each engine by its own kernels' where they differ; the shipped
tables are the model's, each rule with its basis."""

import json
import os

import pytest

from hk.errors import HKError
from hk_engine import engine_kernels as ek
from hk_engine import predicted_ops as po
from hk_engine import routes_from_model as rfm
from hk_engine import routing


@pytest.fixture(scope="module")
def vllm_root():
    return ek.package_root(rfm._runfile("vllm_env/python"))


@pytest.fixture(scope="module")
def sglang_root():
    return ek.package_root(rfm._runfile("sglang_env/python"))


@pytest.fixture(autouse=True)
def clean():
    routing.clear_cache()
    yield
    routing.clear_cache()


def test_the_engine_kernel_is_lifted_from_the_pinned_package(vllm_root, tmp_path):
    op = rfm.PREDICTED["awq_gemm"]
    source = ek.lift(vllm_root, "vllm", op.module, [op.kernel])
    assert "def awq_gemm_kernel(" in source and "from vllm" not in source
    module = ek.load(source, str(tmp_path), "lifted_awq_test")
    assert module.awq_gemm_kernel.arg_names[:3] == ["a_ptr", "b_ptr", "c_ptr"]
    with pytest.raises(ek.EngineKernelError, match="has no @triton.jit function no_such_kernel"):
        ek.lift(vllm_root, "vllm", op.module, ["no_such_kernel"])


def test_generator_end_to_end_routes_as_the_predictions_say(vllm_root, tmp_path):
    # gfx942: no measurement there decides over the prediction (MEASURED).
    op = rfm.PREDICTED["awq_gemm"]
    tables = rfm.build_tables(["gfx942"], [op], {"vllm": vllm_root}, margin="stated", tokens=[1, 8], shapes=1,
                              directory=str(tmp_path))
    rfm.write(tables, str(tmp_path / "tables"))
    table = routing.Table.load(str(tmp_path / "tables" / "gfx942.json"))
    assert table.provenance["kind"] == "model" and table.provenance["packages"]["vllm"] == \
        ek.installed_version(vllm_root, "vllm")
    # The test's own predictions of the bucket at 8 tokens (covering 2 to 255 tokens).
    ek.triton_cache(str(tmp_path))
    kernels = rfm.load_kernels([op], {"vllm": vllm_root}, str(tmp_path))[op.name]
    mine, theirs = op.predict(kernels, "gfx942", 8, op.shapes(1)[0])
    margin = rfm.margin_for("gfx942", "stated")
    expected = "hk" if theirs >= (1 + margin) * mine else "engine"
    for m in (2, 8, 200):
        assert table.route("awq_gemm", dtype="float16", m=m, n=6144, k=4096, group=128) == expected
    (rule,) = [r for r in table.ops["awq_gemm"] if r["when"].get("m") == [2, 255]]
    assert rule["hk_us"] == pytest.approx(mine * 1e6, rel=1e-3)
    assert rule["engine_us"] == pytest.approx(theirs * 1e6, rel=1e-3)
    # Above 255 tokens vLLM's GEMM is hipBLASLt's, and nothing is published for gfx942: the
    # engine, with its basis.
    above = [r for r in table.ops["awq_gemm"] if not r["when"]]
    assert above and "no code object" in above[0]["basis"] and "no published measurement" in above[0]["basis"]
    assert table.route("awq_gemm", dtype="float16", m=300) == above[0]["route"] == "engine"


class _Unpredictable(rfm.AwqGemm):
    def predict(self, kernels, arch, tokens, shape):
        raise HKError("no facts for this launch")


def test_a_bucket_that_cannot_be_predicted_keeps_the_previous_route(vllm_root, tmp_path):
    op = _Unpredictable("awq_gemm", "vllm", rfm.PREDICTED["awq_gemm"].module, "awq_gemm_kernel", "qwen3-8b", (1, 8),
                        ("float16",), upper=255)
    previous = routing.Table({"target": "gfx942", "ops": {"awq_gemm": [{"when": {"m": [1, 1]}, "route": "hk"}]}})
    tables = rfm.build_tables(["gfx942"], [op], {"vllm": vllm_root}, tokens=[1, 8], shapes=1,
                              previous={"gfx942": previous}, directory=str(tmp_path))
    rules = tables["gfx942"]["ops"]["awq_gemm"]
    assert [r["route"] for r in rules[:2]] == ["hk", "engine"]
    assert all("not predicted (no facts for this launch)" in r["basis"] for r in rules[:2])


def test_the_rule_routes_hk_only_beyond_the_margin():
    assert rfm.decide(1.0, 1.2, 0.1) == ("hk", pytest.approx(1.2))
    assert rfm.decide(1.0, 1.05, 0.1)[0] == "engine"
    assert rfm.decide(2.0, 1.0, 0.0)[0] == "engine"
    assert rfm.ranges([1, 8, 32]) == [[1, 1], [2, 8], [9, None]]
    assert rfm.ranges([1, 8], upper=255) == [[1, 1], [2, 255]]


@pytest.mark.parametrize("arch", rfm.ARCHS)
def test_shipped_tables_are_the_models_with_a_basis_for_every_rule(arch, vllm_root, sglang_root):
    from hk.autotune import fingerprint

    path = os.path.join(os.path.dirname(routing.__file__), "tables", "%s.json" % arch)
    with open(path) as f:
        data = json.load(f)
    table = routing.Table(data, path)
    prov = table.provenance
    assert prov["kind"] == "model" and prov["model"] == fingerprint.model_version(), \
        "the table predates hk.perf's current version: regenerate it (%s)" % prov.get("command")
    assert prov["error"] == rfm.margin_for(arch, "stated")
    assert prov["packages"]["vllm"] == ek.installed_version(vllm_root, "vllm")
    assert prov["packages"]["sglang"] == ek.installed_version(sglang_root, "sglang")
    assert "not predicted" not in prov or "fused_moe" not in prov["not predicted"]
    # Each predicted op's rules where its engine reads them: an engine's own, or the shared ones.
    placed = {key: table.engines[op.engine][op.name] if op.per_engine else table.ops[op.name]
              for key, op in rfm.PREDICTED.items()}
    assert set(prov["predicted"]) == set(rfm.PREDICTED)
    for op in set(table.ops) - {o.name for o in rfm.PREDICTED.values() if not o.per_engine}:
        assert op in rfm.NO_CODE_OBJECT, "%s: a shared rule of an op each engine predicts apart" % op
    for op, rules in list(placed.items()) + [(n, table.ops[n]) for n in rfm.NO_CODE_OBJECT]:
        assert rules, op
        for rule in rules:
            assert rule.get("basis"), (op, rule)
            if "ratio" in rule:
                assert rule["ratio"] == pytest.approx(rule["engine_us"] / rule["hk_us"], rel=0.01, abs=6e-4)  # 3 places
            lo, hi = rule["when"].get("m") or rule["when"].get("seqs") or rule["when"].get("tokens") or (None, None)
            lo = lo if op in rfm.PREDICTED else None  # (a measurement is of a predicted op)
            known = rfm.measured(arch, op, lo, hi) if lo is not None else None
            if known:  # a measurement on the target decides over the prediction
                assert rule["route"] == known[0] and rule["basis"].startswith(known[1]), (op, rule)
            elif "ratio" in rule:
                want = rfm.decide(rule["hk_us"], rule["engine_us"], prov["margin"])[0]
                if want == "hk" and rfm.measured_engine_within(arch, op, lo, hi):
                    want = "engine"
                assert rule["route"] == want, (op, rule)
    assert set(rfm.NO_CODE_OBJECT) <= set(table.ops)


@pytest.mark.parametrize("argv, message", [
    (["--archs=gfx9", "--out=t"], "unknown targets ['gfx9']"),
    (["--ops=linear", "--out=t"], "unknown ops ['linear']"),
    (["--archs=gfx1100"], "--out names the directory"),
    (["--margin=wide", "--out=t"], "--margin is a number or \"stated\""),
])
def test_a_wrong_command_exits_2_saying_why(argv, message, capsys):
    from absl import flags

    if "margin" not in flags.FLAGS:
        rfm.define_flags()
    flags.FLAGS.unparse_flags()
    flags.FLAGS(["hk-routes"] + argv)
    assert rfm.main(["hk-routes"]) == 2
    assert message in capsys.readouterr().err


def test_a_measurement_decides_the_buckets_it_covers():
    class Op:
        name, key, engine, per_engine, fact, dtypes, upper = "moe", "vllm.moe", "vllm", True, "m", ("bfloat16",), None
        against = staticmethod(lambda arch, tokens: None)  # (one engine kernel: Op.against's)

    # hk predicted 3x slower up to 256 tokens, 3x faster above: gfx1100's record says the opposite.
    rules = rfm.predicted_rules(Op, [256, 512], [(1.0, 0.33), (1.0, 3.0)], 0.05, None, "gfx1100")
    assert [r["route"] for r in rules] == ["hk", "engine"]
    assert all(r["basis"].startswith("measured (W7900)") and "decides over the prediction" in r["basis"]
               for r in rules)
    assert rules[0]["ratio"] == 0.33
    # A bucket no measurement covers, or another target: the prediction decides.
    assert rfm.measured("gfx1100", "vllm.moe", 200, 300) is None
    # A measurement against vLLM's kernel decides nothing of SGLang's rules.
    Op.key, Op.engine = "sglang.moe", "sglang"
    assert [r["route"] for r in rfm.predicted_rules(Op, [256, 512], [(1.0, 0.33), (1.0, 3.0)], 0.05, None,
                                                    "gfx1100")] == ["engine", "hk"]
    Op.key, Op.engine = "vllm.moe", "vllm"
    assert [r["route"] for r in rfm.predicted_rules(Op, [256, 512], [(1.0, 0.33), (1.0, 3.0)], 0.05, None,
                                                    "gfx942")] == ["engine", "hk"]
    # A bucket a measurement covers only in part (129-512 against the engine above 256): predicted
    # faster on hk, it stays on the engine, saying why.
    rules = rfm.predicted_rules(Op, [128, 512], [(1.0, 3.0), (1.0, 3.0)], 0.05, None, "gfx1100")
    assert rules[1]["when"]["m"] == [129, None] and rules[1]["route"] == "engine"
    assert "within this bucket" in rules[1]["basis"] and rules[1]["basis"].startswith("predicted at m 512, but "
                                                                                    "measured (W7900)")



@pytest.mark.parametrize("tuned_knobs, block", [({"block": 128}, 128), (None, None)])
def test_moe_predicts_the_block_hk_launches(monkeypatch, tuned_knobs, block):
    # hk.ops.fused_moe launches the tuned block of its bucket (block_for's without one): the
    # prediction of hk's side is of the same kernels.
    from hk import perf, tuned
    from hk.ops import moe

    asked, blocks = [], []
    monkeypatch.setattr(tuned, "lookup", lambda t, shape, arch: asked.append((t.name, shape, arch)) or tuned_knobs)
    monkeypatch.setattr(moe, "moe_gemm_kernel", lambda dtype, per_row, weighted, b: blocks.append(b))
    monkeypatch.setattr(perf, "predict", lambda *a, **kw: type("P", (), {"seconds": 1e-6})())
    monkeypatch.setattr(po, "_engine_seconds", lambda *a, **kw: 1e-6)
    op = rfm.PREDICTED["vllm.moe"]
    experts, top_k, hidden, inter = shape = op.shapes(1)[0]
    mine, _ = op.predict({op.kernel: None}, "gfx1100", 4, shape)
    assert asked == [("fused_moe", (4, experts, top_k, hidden, inter, "bf16"), "gfx1100")]
    assert blocks == [block or moe.block_for(4 * top_k, experts)] * 2 and mine == pytest.approx(2e-6)


def test_int8_gemm_is_predicted_against_vllms_triton_kernel(vllm_root, tmp_path):
    # vLLM's triton_scaled_mm lifted from the pinned package, compiled for gfx950 at the tile its
    # heuristic picks for one row, beside hk.ops.int8_scaled_mm's own launch.
    import torch

    from hk import perf
    from hk.ops import mm8

    op = rfm.PREDICTED["int8_scaled_mm"]
    (n, k), = op.shapes(1)
    tables = rfm.build_tables(["gfx950"], [op], {"vllm": vllm_root}, tokens=[1], shapes=1, directory=str(tmp_path))
    rule, = tables["gfx950"]["ops"]["int8_scaled_mm"]
    assert rule["basis"] == "predicted at m 1" and rule["engine_us"] > 0
    meta = dict(device="meta")
    mine = perf.predict_call(mm8.launch_int8, torch.empty(1, k, dtype=torch.int8, **meta),
                             torch.empty(n, k, dtype=torch.int8, **meta).t(),
                             torch.empty(1, 1, **meta), torch.empty(1, n, **meta), None, None, None,
                             torch.empty(1, n, dtype=torch.bfloat16, **meta), arch="gfx950")
    assert rule["hk_us"] == pytest.approx(sum(p.seconds for p in mine) * 1e6, rel=1e-3)
    assert rule["route"] == rfm.decide(rule["hk_us"], rule["engine_us"], rfm.margin_for("gfx950", "stated"))[0]
    table = routing.Table(tables["gfx950"])
    assert table.route("int8_scaled_mm", dtype="bfloat16", m=300, n=n, k=k) == rule["route"]
    assert rfm.Int8ScaledMM.vllm_tile(1, 6144) == (64, 64, 256)   # triton_scaled_mm's heuristic
    assert rfm.Int8ScaledMM.vllm_tile(32, 24576) == (64, 128, 256)
    assert rfm.Int8ScaledMM.vllm_tile(33, 4096) == (64, 64, 256)
    assert rfm.Int8ScaledMM.vllm_tile(100, 4096) == (64, 128, 128)
    assert rfm.Int8ScaledMM.vllm_tile(129, 4096) == (128, 128, 128)


def _block_args(op, arch, m, n, k):
    """_w8a8_triton_block_scaled_mm's arguments as w8a8_triton_block_scaled_mm passes them (and
    SGLang's _w8a8_block_fp8_matmul's, of the same names, as w8a8_block_fp8_matmul_triton does), in
    the fp8 of the engine's platform on arch."""
    name = str(op.fp8_dtype(arch)).replace("torch.", "")
    return dict(A=ek.Ptr(name, m * k), B=ek.Ptr(name, n * k), C=ek.Ptr("bfloat16", m * n * 2),
                As=ek.Ptr("float32", m * (k // 128) * 4), Bs=ek.Ptr("float32", (n // 128) * (k // 128) * 4),
                M=m, N=n, K=k, group_n=128, group_k=128, stride_am=k, stride_ak=1, stride_bk=1, stride_bn=k,
                stride_cm=n, stride_cn=1, stride_As_m=k // 128, stride_As_k=1, stride_Bs_k=1, stride_Bs_n=k // 128)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201", "gfx942", "gfx950"])
def test_vllms_block_scaled_fp8_kernel_compiles_for_every_target(vllm_root, tmp_path, arch):
    # vLLM's _w8a8_triton_block_scaled_mm lifted from the pinned package, compiled at its default
    # config (no tuned json for an AMD device at these shapes), in the platform's fp8: FNUZ on
    # gfx942, OCP elsewhere (gfx1100 has no fp8 dot: Triton converts).
    import torch

    op = rfm.PREDICTED["fp8_block_scaled_mm"]
    assert op.fp8_dtype(arch) == (torch.float8_e4m3fnuz if arch == "gfx942" else torch.float8_e4m3fn)
    (n, k), = op.shapes(1)
    ek.triton_cache(str(tmp_path))
    kernels = rfm.load_kernels([op], {"vllm": vllm_root}, str(tmp_path))[op.key]
    co, name, _, _ = ek.compile_kernel(kernels[op.kernel], arch, _block_args(op, arch, 33, n, k), dict(op.CONFIG),
                                       op.WARPS, op.STAGES)
    assert co and name.startswith("_w8a8_triton_block_scaled_mm")


def test_block_scaled_fp8_gemm_is_predicted_against_vllms_triton_kernel(vllm_root, tmp_path, monkeypatch):
    # Its launch as vLLM computes it (grid cdiv(M, 64) * cdiv(N, 128), 4 warps, 2 stages) beside
    # hk.ops.scaled_mm's block-scaled launch, and the rule the generator writes from them.
    import torch

    from hk import perf
    from hk.ops import mm8

    arch, m = "gfx942", 33  # (gfx950's fp8 MFMA, v_mfma_f32_32x32x64_f8f6f4, is not the emulator's)
    op = rfm.PREDICTED["fp8_block_scaled_mm"]
    (n, k), = op.shapes(1)
    seen, real = [], po._engine_seconds

    def engine_seconds(fn, a, args, consts, grid, warps, stages=2, options=None):
        seen.append((a, grid, warps, stages, consts, args))
        return real(fn, a, args, consts, grid, warps, stages, options)

    monkeypatch.setattr(po, "_engine_seconds", engine_seconds)
    tables = rfm.build_tables([arch], [op], {"vllm": vllm_root}, tokens=[m], shapes=1, directory=str(tmp_path))
    (a, grid, warps, stages, consts, args), = seen
    assert (a, grid, warps, stages, consts) == (arch, (n // 128,), 4, 2, op.CONFIG)
    assert {key: v for key, v in args.items() if not isinstance(v, ek.Ptr)} == {
        key: v for key, v in _block_args(op, arch, m, n, k).items() if not isinstance(v, ek.Ptr)}
    rule, = tables[arch]["ops"]["fp8_block_scaled_mm"]
    assert rule["basis"] == "predicted at m %d" % m and rule["when"] == {"dtype": ["bfloat16", "float16"],
                                                                         "m": [1, None]}
    meta = dict(device="meta")
    fp8 = op.fp8_dtype(arch)
    mine = perf.predict_call(mm8.launch_fp8, torch.empty(m, k, dtype=fp8, **meta),
                             torch.empty(n, k, dtype=fp8, **meta).t(), torch.empty(m, k // 128, **meta),
                             torch.empty(k // 128, n // 128, **meta), None,
                             torch.empty(m, n, dtype=torch.bfloat16, **meta), arch=arch)
    assert rule["hk_us"] == pytest.approx(sum(p.seconds for p in mine) * 1e6, rel=1e-3)
    assert rule["route"] == rfm.decide(rule["hk_us"], rule["engine_us"], rfm.margin_for(arch, "stated"))[0]
    table = routing.Table(tables[arch])
    assert table.route("fp8_block_scaled_mm", "vllm", dtype="bfloat16", m=500, n=n, k=k) == rule["route"]


def test_predicting_some_ops_keeps_the_others_rules_of_the_same_model(vllm_root, tmp_path):
    from hk.autotune import fingerprint

    op = _Unpredictable("awq_gemm", "vllm", rfm.PREDICTED["awq_gemm"].module, "awq_gemm_kernel", "qwen3-8b", (1,),
                        ("float16",), upper=255)
    moe = [{"when": {"m": [1, None]}, "route": "hk", "basis": "predicted at m 1", "ratio": 2.0, "hk_us": 1.0,
            "engine_us": 2.0}]
    versions = {"vllm": ek.installed_version(vllm_root, "vllm"), "triton": __import__("triton").__version__}
    prov = {"model": fingerprint.model_version(), "packages": versions, "margin": rfm.margin_for("gfx942", "stated"),
            "predicted": {"vllm.moe": "vllm 0.33's fused_moe_kernel", "sglang.moe": "sglang 0.5's fused_moe_kernel"}}
    sglang_moe = [dict(moe[0], route="engine", ratio=0.5, engine_us=0.5)]
    previous = routing.Table({"target": "gfx942", "provenance": prov, "ops": {},
                              "engines": {"vllm": {"moe": moe}, "sglang": {"moe": sglang_moe}}}, "gfx942.json")
    tables = rfm.build_tables(["gfx942"], [op], {"vllm": vllm_root}, tokens=[1], shapes=1,
                              previous={"gfx942": previous}, directory=str(tmp_path), keep=True)
    table = tables["gfx942"]
    assert table["engines"] == {"vllm": {"moe": moe}, "sglang": {"moe": sglang_moe}} and "awq_gemm" in table["ops"]
    assert "moe" not in table["ops"]  # each engine's own, none shared
    assert table["provenance"]["predicted"]["vllm.moe"] == "vllm 0.33's fused_moe_kernel"
    assert list(table["provenance"]["predicted"])[:3] == ["awq_gemm", "vllm.moe", "sglang.moe"]  # PREDICTED's order
    assert routing.Table(table).route("moe", "sglang", m=4) == "engine"
    assert routing.Table(table).route("moe", "vllm", m=4) == "hk"
    # A table from before the per-engine rules: its shared MoE rules, predicted against vLLM's
    # kernel (so its provenance says), are vLLM's own, and SGLang has none to keep.
    old = routing.Table({"target": "gfx942", "provenance": dict(prov, predicted={"moe": "vllm 0.33's fused_moe"}),
                         "ops": {"moe": moe}}, "gfx942.json")
    assert rfm.previous_rules(old, "vllm.moe") == (moe, "vllm 0.33's fused_moe")
    assert rfm.previous_rules(old, "sglang.moe") is None
    # Its packages name no SGLang: only the versions of the engines whose rules stay must match.
    assert set(rfm.kept_rules(old, [op], prov["model"], dict(versions, sglang="0.5"), prov["margin"])) == {"vllm.moe"}
    with pytest.raises(ek.EngineKernelError, match="predict every op again"):
        rfm.kept_rules(previous, [op], prov["model"], dict(versions, sglang="0.5"), prov["margin"])
    # Rules of another model (or packages, or margin) cannot stand beside new ones.
    for field, value in (("model", "0.0.9+old"), ("margin", 0.5)):
        stale = routing.Table({"target": "gfx942", "provenance": dict(prov, **{field: value}),
                               "engines": {"vllm": {"moe": moe}}}, "gfx942.json")
        with pytest.raises(ek.EngineKernelError, match="gfx942.json was predicted by model .* predict every op "
                                                       "again"):
            rfm.build_tables(["gfx942"], [op], {"vllm": vllm_root}, tokens=[1], shapes=1,
                             previous={"gfx942": stale}, directory=str(tmp_path), keep=True)


SGLANG = [key for key in rfm.PREDICTED if key.startswith("sglang.")]


@pytest.mark.parametrize("arch", rfm.ARCHS)
def test_sglangs_kernels_are_lifted_and_compiled_for_every_target(arch, sglang_root, tmp_path, monkeypatch):
    # Each SGLang kernel lifted from the pinned package and compiled by Triton for the target at
    # the launch SGLang's ROCm build makes (the prediction of the code object left out: timed apart).
    from hk import perf

    launches = []
    monkeypatch.setattr(perf, "predict_code_object", lambda co, name, grid, block, values, arch, shared_mem:
                        launches.append((name, grid, block, len(co))) or type("P", (), {"seconds": 1e-6})())
    ops = [rfm.PREDICTED[k] for k in SGLANG]
    counts = {"moe": 128, "fp8_block_scaled_mm": 33, "attention_decode": 4, "attention_prefill": 128}
    assert {op.name for op in ops} == set(counts)
    ek.triton_cache(str(tmp_path))
    kernels = rfm.load_kernels(ops, {"sglang": sglang_root}, str(tmp_path))
    assert "from sglang" not in open(str(tmp_path / "sglang_moe.py")).read()
    assert "from sglang" not in open(str(tmp_path / "sglang_fp8_block_scaled_mm.py")).read()
    wave = ek.WAVE[arch]
    for op in ops:
        count = counts[op.name]
        # hk's side is the same launch as in the comparison with vLLM's kernel: not run here.
        monkeypatch.setattr(type(op), "hk_seconds", lambda *a: 1e-6)
        launches.clear()
        op.predict(kernels[op.key], arch, count, op.shapes(1)[0])
        assert all(size > 0 for *_, size in launches), launches
        if op.name == "moe":  # 128 tokens over 64 experts: get_default_config's 64x64 tile, 4 warps, both GEMMs
            experts, top_k, hidden, inter = op.shapes(1)[0]
            em = po.SglangFusedMoe.padded(128 * top_k, experts, 64)
            tiles = -(-em // 64)
            assert [g for _, g, _, _ in launches] == [(tiles * (2 * inter // 64),), (tiles * (hidden // 64),)]
            assert {b for _, _, b, _ in launches} == {(4 * wave,)}
        elif op.name == "fp8_block_scaled_mm":  # 33 rows: one 64-row tile per 128 columns of out, 4 warps
            (n, _), = op.shapes(1)
            assert [(g, b) for _, g, b, _ in launches] == [((n // 128,), (4 * wave,))]
            assert launches[0][0].startswith("_w8a8_block_fp8_matmul")
        elif op.name == "attention_decode":  # stage 1 over (seqs, head tiles, 16 splits), then stage 2
            heads, kvh, d = op.shapes(1)[0]
            assert [g for _, g, _, _ in launches] == [(4, heads // (heads // kvh), 16), (4, heads)]
        else:  # one causal sequence: (1, heads, query tiles), gfx950's 128-row tile in 8 warps
            heads = op.shapes(1)[0][0]
            rows, warps = (128, 8) if arch == "gfx950" else (64, 4)
            assert [(g, b) for _, g, b, _ in launches] == [((1, heads, 128 // rows), (warps * wave,))]


def test_sglangs_moe_is_predicted_into_its_own_rules(vllm_root, sglang_root, tmp_path):
    # SGLang's fused_moe_kernel predicted beside hk's grouped GEMMs: the rule lands in SGLang's own
    # rules, which the SGLang plugin reads and the vLLM plugin does not.
    op = rfm.PREDICTED["sglang.moe"]
    tables = rfm.build_tables(["gfx942"], [op], {"vllm": vllm_root, "sglang": sglang_root}, tokens=[8], shapes=1,
                              directory=str(tmp_path))
    data = tables["gfx942"]
    assert data["provenance"]["packages"]["sglang"] == ek.installed_version(sglang_root, "sglang")
    assert data["provenance"]["predicted"]["sglang.moe"].startswith("sglang %s's fused_moe_kernel"
                                                                    % ek.installed_version(sglang_root, "sglang"))
    rule, = data["engines"]["sglang"]["moe"]
    assert "moe" not in data["ops"] and "vllm" not in data["engines"]
    assert rule["basis"] == "predicted at m 8" and rule["when"] == {"dtype": ["bfloat16", "float16"], "m": [1, None]}
    # hk's side: the same launches as the comparison with vLLM's kernel.
    assert rule["hk_us"] == pytest.approx(po.FusedMoe.hk_seconds(op, "gfx942", 8, op.shapes(1)[0]) * 1e6, rel=1e-3)
    assert rule["route"] == rfm.decide(rule["hk_us"], rule["engine_us"], rfm.margin_for("gfx942", "stated"))[0]
    table = routing.Table(data)
    assert table.route("moe", "sglang", dtype="bfloat16", m=300) == rule["route"]
    assert table.route("moe", "vllm", dtype="bfloat16", m=300) == "engine"  # not SGLang's rule


def test_sglangs_block_scaled_fp8_gemm_is_predicted_into_its_own_rules(vllm_root, sglang_root, tmp_path,
                                                                      monkeypatch):
    # SGLang's _w8a8_block_fp8_matmul at its default config (3 stages where vLLM's kernel takes 2,
    # needs_masking as SGLang computes it) beside the same hk launch as vLLM's: its rule lands in
    # SGLang's own rules, which SGLang's block calls take over the shared ones.
    arch, m = "gfx942", 33  # (gfx950's fp8 MFMA is not the emulator's)
    op = rfm.PREDICTED["sglang.fp8_block_scaled_mm"]
    assert isinstance(op, po.Fp8BlockScaledMM) and op.engine == "sglang" and op.per_engine
    assert op.constexprs(4096) == {"needs_masking": False} and op.constexprs(4160) == {"needs_masking": True}
    (n, k), = op.shapes(1)
    seen, real = [], po._engine_seconds

    def engine_seconds(fn, a, args, consts, grid, warps, stages=2, options=None):
        seen.append((fn.__name__, a, grid, warps, stages, options, consts, args))
        return real(fn, a, args, consts, grid, warps, stages, options)

    monkeypatch.setattr(po, "_engine_seconds", engine_seconds)
    tables = rfm.build_tables([arch], [op], {"vllm": vllm_root, "sglang": sglang_root}, tokens=[m], shapes=1,
                              directory=str(tmp_path))
    (name, a, grid, warps, stages, options, consts, args), = seen
    assert (name, a, grid, warps, stages, options) == ("_w8a8_block_fp8_matmul", arch, (n // 128,), 4, 3, None)
    assert consts == {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 32,
                      "needs_masking": False}
    assert {key: v for key, v in args.items() if not isinstance(v, ek.Ptr)} == {
        key: v for key, v in _block_args(op, arch, m, n, k).items() if not isinstance(v, ek.Ptr)}
    assert args["A"].dtype == args["B"].dtype == "float8_e4m3fnuz"  # SGLang's fp8 on gfx942
    data = tables[arch]
    assert data["provenance"]["predicted"]["sglang.fp8_block_scaled_mm"].startswith(
        "sglang %s's _w8a8_block_fp8_matmul" % ek.installed_version(sglang_root, "sglang"))
    rule, = data["engines"]["sglang"]["fp8_block_scaled_mm"]
    assert "fp8_block_scaled_mm" not in data["ops"]
    assert rule["basis"] == "predicted at m %d" % m and rule["when"] == {"dtype": ["bfloat16", "float16"],
                                                                         "m": [1, None]}
    # hk's side: the same launch as the comparison with vLLM's kernel.
    assert rule["hk_us"] == pytest.approx(po.Fp8BlockScaledMM.hk_seconds(op, arch, m, (n, k)) * 1e6, rel=1e-3)
    assert rule["route"] == rfm.decide(rule["hk_us"], rule["engine_us"], rfm.margin_for(arch, "stated"))[0]
    # SGLang's calls take its own rule; vLLM's take the shared ones (none here: the engine).
    other = "engine" if rule["route"] == "hk" else "hk"
    table = routing.Table(dict(data, ops={"fp8_block_scaled_mm": [{"when": {}, "route": other}]}))
    assert table.route("fp8_block_scaled_mm", "sglang", dtype="bfloat16", m=500, n=n, k=k) == rule["route"]
    assert table.route("fp8_block_scaled_mm", "vllm", dtype="bfloat16", m=500, n=n, k=k) == other


def test_sglangs_decode_splits_as_its_backend_computes_them():
    # get_num_kv_splits_triton: MI300X's 304 units over 4 sequences of 1024 keys fill 16 splits,
    # 64 sequences 3; a W7900's 48 units 2 splits at 16 sequences.
    split = po.SglangDecodeAttention.kv_splits
    assert split([1024] * 4, 32, 8, 304) == [16] * 4
    assert split([1024] * 64, 32, 8, 304) == [3] * 64
    assert split([1024] * 16, 32, 8, 48) == [2] * 16
    assert split([1024, 64], 32, 8, 304) == [16, 1]  # uneven: the short one in fewer


# SGLang's own choice and launch of its decode kernels, computed by its package in its own
# environment (it imports on a CPU): its gates, the batch sizes its decode graphs capture, and
# the Lean launch its wrapper makes (the kernel's launch recorded instead of run), as JSON.
_SGLANG_LEAN = r"""
import json, sys, types
import torch
import sglang.kernels.ops.attention.decode_attention as d
from sglang.srt.arg_groups import cuda_graph_hook

cases = json.loads(sys.argv[1])
d._is_hip = True  # its ROCm build
out = {"gates": [], "capture": {}, "launches": []}
for heads, group, batch, keys in cases["gates"]:
    out["gates"].append([d._lean_head_tiles(heads, group), d.lean_capture_policy(heads, group, batch),
                         d.lean_decode_seqlen_gate(heads, group, batch, keys)])
serve = types.SimpleNamespace(disable_cuda_graph_padding=False, speculative_algorithm=None)
for top in cases["capture"]:
    out["capture"][str(top)] = cuda_graph_hook.generate_decode_cuda_graph_batch_sizes(serve, top)


class Launch:
    def __getitem__(self, grid):
        def record(*args, **kwargs):
            tiles = args[7].tolist()
            scalars = [a for a in args if isinstance(a, (int, float))]
            out["launches"][-1].update(grid=list(grid), kwargs=kwargs, scalars=scalars, tiles=tiles)
        return record


d._lean_attention_decode_kernel = Launch()
for cores, heads, kvh, dim, seqs, context in cases["launches"]:
    d._NUM_CU = cores
    programs, remap, xcds = d._lean_decode_launch_params(kvh, heads // kvh)
    out["launches"].append({"params": [programs, remap, xcds]})
    q = torch.empty(seqs, heads, dim, dtype=torch.bfloat16)
    kv = torch.empty(seqs * context, kvh, dim, dtype=torch.bfloat16)
    indptr = torch.arange(seqs + 1, dtype=torch.int32) * context
    part = lambda *shape: torch.empty(programs, d._LEAN_BLOCK_M, *shape, dtype=torch.float32)
    d._decode_lean_attention_fwd(q, kv, kv, torch.empty_like(q), indptr, torch.arange(seqs * context),
                                 programs, dim ** -0.5, 1.0, remap, xcds, part(), part(), part(dim),
                                 torch.zeros(programs, dtype=torch.int32), page_size=1)
print(json.dumps(out))
"""


def _sglang_computes(cases, tmp):
    import subprocess

    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", HOME=str(tmp))
    out = subprocess.run([rfm._runfile("sglang_env/python"), "-c", _SGLANG_LEAN, json.dumps(cases)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, cwd=str(tmp))
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# Qwen3-8B's heads (the op's model), MI300X-like and RDNA-like unit counts, a long and a short context.
_GATES = [(32, 4, b, b * n) for b in (1, 4, 8, 12, 13, 16, 64, 256) for n in (1024, 4096, 16384, 65536)] + \
    [(8, 8, 16, 16 * 200000), (8, 8, 64, 64 * 100000), (64, 1, 2, 2 * 16384), (64, 1, 1, 8000), (0, 4, 0, 0)]


@pytest.fixture(scope="module")
def sglang_lean(tmp_path_factory):
    heads, kvh, d = rfm.PREDICTED["sglang.attention_decode"].shapes(1)[0]
    cores = po.SglangDecodeAttention.cores
    launches = [(cores(a), heads, kvh, d, s, n) for a in rfm.ARCHS for s, n in ((16, 1024), (3, 4100))]
    launches.append((cores("gfx942"), 28, 4, 128, 2, 300))  # no XCD remap (4 K/V heads)
    tops = sorted({po.SglangDecodeAttention.decode_max(a) for a in rfm.ARCHS})
    cases = {"gates": _GATES, "capture": tops, "launches": launches}
    return cases, _sglang_computes(cases, tmp_path_factory.mktemp("sglang"))


def test_sglangs_lean_gates_are_its_own(sglang_lean):
    # The Lean choice's data (LEAN_CAPTURED, LEAN_EAGER, CAPTURE_BS) gives what SGLang's own
    # lean_capture_policy, lean_decode_seqlen_gate and graph batch sizes give.
    cases, theirs = sglang_lean
    op = po.SglangDecodeAttention
    for (heads, group, batch, keys), (tiles, captured, eager) in zip(cases["gates"], theirs["gates"]):
        if heads:
            assert op.head_tiles(heads, group) == tiles
        assert op.lean_captured(heads, group, batch) == captured, (heads, group, batch)
        assert op.lean_eager(heads, group, batch, keys) == eager, (heads, group, batch, keys)
    assert any(e for *_, e in theirs["gates"]) and not all(e for *_, e in theirs["gates"])
    for top, sizes in theirs["capture"].items():
        top = int(top)
        for seqs in range(1, top + 2):
            fits = [b for b in sizes if b >= seqs]
            assert op.graph_batch(seqs, top) == (min(fits) if fits else None), (seqs, top)


def test_each_bucket_predicts_the_decode_kernel_sglang_serve_runs(sglang_lean):
    # Up to its largest decode graph (models.json's decode_max) a step replays the graph of its
    # padded batch, whose kernel lean_capture_policy chose at capture; above, the eager gate
    # chooses by the real context (1024 keys: never Lean, below its 4K floor).
    cases, theirs = sglang_lean
    op = rfm.PREDICTED["sglang.attention_decode"]
    heads, kvh, d = shape = op.shapes(1)[0]
    gate = {tuple(c): t for c, t in zip(map(tuple, cases["gates"]), theirs["gates"])}
    chosen = {}
    for arch in rfm.ARCHS:
        top = po.SglangDecodeAttention.decode_max(arch)
        sizes = theirs["capture"][str(top)]
        for seqs in op.tokens:
            fits = [b for b in sizes if b >= seqs]
            if fits:
                want = gate[(heads, heads // kvh, min(fits), min(fits) * op.CONTEXT)][1]
            else:
                want = gate[(heads, heads // kvh, seqs, seqs * op.CONTEXT)][2]
            chosen[arch, seqs] = op.runs_lean(arch, seqs, shape)
            assert chosen[arch, seqs] == want, (arch, seqs)
            assert op.against(arch, seqs).startswith("SGLang's %s decode" % ("Lean" if want else "split-K"))
    # Both kernels are predicted somewhere: the CDNA targets capture graphs up to 512 requests.
    assert chosen["gfx942", 16] and chosen["gfx942", 256] and not chosen["gfx942", 4]
    assert not any(chosen["gfx1201", s] for s in op.tokens)
    # A bucket the emulator cannot run says which of SGLang's kernels it is not predicted against.
    rule, = rfm.predicted_rules(op, [16], ["the emulator does not implement v_x"], 0.05, None, "gfx942")
    assert rule["basis"] == "not predicted (the emulator does not implement v_x) against SGLang's Lean decode (its " \
                            "decode graph of 16 requests); the previous table's route" and rule["route"] == "engine"


@pytest.mark.parametrize("arch", rfm.ARCHS)
def test_sglangs_lean_kernel_is_lifted_and_compiled_at_its_launch(arch, sglang_lean, sglang_root, tmp_path,
                                                                  monkeypatch):
    # _lean_attention_decode_kernel lifted from the pinned package and compiled for the target at
    # the grid, constants, warps and stages SGLang's own wrapper launches it with, from the
    # target's compute units, at two batches and contexts.
    import copy

    from hk import perf

    cases, theirs = sglang_lean
    base = rfm.PREDICTED["sglang.attention_decode"]
    ek.triton_cache(str(tmp_path))
    kernels = rfm.load_kernels([base], {"sglang": sglang_root}, str(tmp_path))[base.key]
    assert "from sglang" not in open(str(tmp_path / "sglang_attention_decode.py")).read()
    seen, real = [], po._engine_seconds

    def engine_seconds(fn, a, args, consts, grid, warps, stages=2, options=None):
        seen.append((grid, warps, stages, options, consts, args))
        return real(fn, a, args, consts, grid, warps, stages, options)

    launches, checked = [], 0
    monkeypatch.setattr(po, "_engine_seconds", engine_seconds)
    monkeypatch.setattr(perf, "predict_code_object", lambda co, name, grid, block, values, arch, shared_mem:
                        launches.append((name, grid, block, len(co))) or type("P", (), {"seconds": 1e-6})())
    for (cores, heads, kvh, d, seqs, context), want in zip(cases["launches"], theirs["launches"]):
        if cores != po.SglangDecodeAttention.cores(arch) or heads != base.shapes(1)[0][0]:
            continue
        op = copy.copy(base)
        op.CONTEXT = context
        seen.clear(), launches.clear()
        assert op.lean_seconds(kernels, arch, seqs, (heads, kvh, d)) == 1e-6
        (grid, warps, stages, options, consts, args), = seen
        kw = want["kwargs"]
        assert list(grid) == want["grid"] == [want["params"][0]]
        assert (warps, stages, options) == (kw.pop("num_warps"), kw.pop("num_stages"), None)
        assert consts == kw
        scalars = [v for v in args.values() if not isinstance(v, ek.Ptr) and v is not None]
        assert scalars == pytest.approx(want["scalars"])
        assert args["batch_num_block_n"].array.tolist() == want["tiles"]
        (name, g, block, size), = launches
        assert name.startswith("_lean_attention_decode_kernel") and size > 0
        assert (g, block) == (grid, (warps * ek.WAVE[arch],))
        checked += 1
    assert checked >= 2


def test_a_lean_launch_without_the_xcd_remap(sglang_lean):
    # 4 K/V heads (rows not a multiple of 8): one program per unit, no remap, as SGLang computes.
    cases, theirs = sglang_lean
    (cores, heads, kvh, d, seqs, context), want = cases["launches"][-1], theirs["launches"][-1]
    assert list(po.SglangDecodeAttention.lean_launch(cores, kvh, heads // kvh)) == want["params"]
    assert not want["params"][1] and want["params"][0] == cores


def test_sglangs_lean_decode_is_predicted_end_to_end(vllm_root, sglang_root, tmp_path):
    # gfx942 at 16 sequences: a decode graph SGLang captures with its Lean kernel, predicted
    # beside hk's paged decode into SGLang's own rule, which says which kernel it compares.
    op = rfm.PREDICTED["sglang.attention_decode"]
    tables = rfm.build_tables(["gfx942"], [op], {"vllm": vllm_root, "sglang": sglang_root}, tokens=[16],
                              directory=str(tmp_path))
    data = tables["gfx942"]
    assert "not predicted" not in data["provenance"]
    assert "_lean_attention_decode_kernel (Lean)" in data["provenance"]["predicted"]["sglang.attention_decode"]
    rule, = data["engines"]["sglang"]["attention_decode"]
    assert rule["basis"] == "predicted at seqs 16 against SGLang's Lean decode (its decode graph of 16 requests)", \
        rule
    assert rule["engine_us"] > 0
    assert rule["hk_us"] == pytest.approx(op.hk_seconds("gfx942", 16, op.shapes(1)[0]) * 1e6, rel=1e-3)
    assert rule["route"] == rfm.decide(rule["hk_us"], rule["engine_us"], rfm.margin_for("gfx942", "stated"))[0]
