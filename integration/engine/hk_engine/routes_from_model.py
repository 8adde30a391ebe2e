"""hk-routes: the engines' routing tables (hk_engine/tables/<arch>.json) from hk.perf's
predictions of hk's kernel and of the engine's own Triton kernel for the same call.

    bazel run //integration/engine:hk-routes -- --out=$PWD/integration/engine/hk_engine/tables

For each target and each op whose engine kernel is Triton (vLLM 0.33's AWQ GEMM, W8A8 int8
GEMM, 128 x 128 block-scaled fp8 GEMM, fused MoE GEMMs and unified paged attention; SGLang
0.5.23's fused MoE GEMMs, 128 x 128 block-scaled fp8 GEMM, decode attention (split-K or Lean,
whichever `sglang serve` runs at the bucket) and extend attention;
each read from its engine's pinned environment and compiled ahead of time for the target:
predicted_ops), at a set of token buckets over a model's shapes
(hk/autotune/models.json), both launches are predicted and the op's rule for the bucket routes
to hk when the engine's predicted time is at least (1 + margin) times hk's, the margin being the
model's stated error for the target by default: a route the model cannot vouch for stays on the
engine, the default a table falls back to anyway. Each such rule records the ratio (engine / hk)
and both times. A bucket's rule covers the token counts above the previous bucket up to its own.
Where the engines' kernels for an op differ (MoE, attention), each engine's rules are its own
(the table's "engines"; the plugins read their engine's, routing.Table.rules); the other ops'
rules are shared ("ops"). The block-scaled fp8 GEMM has both: SGLang's own rules, predicted
against its kernel, and the shared ones, against vLLM's, which vLLM reads.

Ops with no code object the model can read (the engine calls hipBLASLt or its C++ kernels: the
plain linear, RMSNorm, rotary, SiLU-and-mul, the KV cache write, the AWQ path above 255 tokens,
the W8A8 fp8 GEMM) get rules whose "basis" says so, hk only where a published measurement
supports it.

Exit codes: 0 tables written, 1 a prediction failed for some op (its rule says why), 2 a wrong
command.
"""

import datetime
import json
import os
import sys
import tempfile

from absl import app, flags

from hk_engine import engine_kernels as ek
from hk_engine import routing
from hk_engine.predicted_ops import (AwqGemm, Fp8BlockScaledMM, FusedMoe, Int8ScaledMM, PagedAttention,
                                     SglangDecodeAttention, SglangExtendAttention, SglangFp8BlockScaledMM,
                                     SglangFusedMoe)

FLAGS = flags.FLAGS
ARCHS = ["gfx1100", "gfx1201", "gfx942", "gfx950"]
HALF = ["bfloat16", "float16"]
FLOATS = HALF + ["float32"]


def define_flags():
    flags.DEFINE_list("archs", ARCHS, "the targets whose tables to write")
    flags.DEFINE_list("ops", None, "the predicted ops to predict again, by PREDICTED's keys (awq_gemm, vllm.moe, "
                      "sglang.moe, ...; default: all); the shipped tables' rules of the others stay")
    flags.DEFINE_list("tokens", None, "token buckets for every predicted op (default: each op's own)")
    flags.DEFINE_integer("shapes", None, "predict only the first N shapes of each op's model (a quick run)",
                         lower_bound=1)
    flags.DEFINE_string("out", None, "the directory to write <arch>.json into")
    flags.DEFINE_string("vllm_python", None, "vLLM's environment's interpreter (default: @vllm_env's)")
    flags.DEFINE_string("vllm_root", None, "or the site-packages holding vllm (instead of --vllm_python)")
    flags.DEFINE_string("sglang_python", None, "SGLang's environment's interpreter (default: @sglang_env's)")
    flags.DEFINE_string("sglang_root", None, "or the site-packages holding sglang (instead of --sglang_python)")
    flags.DEFINE_string("margin", "stated", "route to hk when the engine is predicted this much slower "
                        "(0.1: 10%); \"stated\": the model's stated error for the target")
    flags.DEFINE_integer("jobs", 1, "worker processes for the predictions", lower_bound=1)


_UNIFIED = "vllm.v1.attention.ops.triton_unified_attention"
# What the unified attention module computes at import from the platform: only its fp8 range
# (the defaults of constants the bf16 launch does not use).
_PLATFORM = {"float8_info": "torch.finfo(torch.float8_e4m3fn)"}

_SGL_MOE = "sglang.kernels.ops.moe.fused_moe_triton_kernels"
_SGL_GEMM = "sglang.kernels.ops.gemm.fp8_kernel"
_SGL_ATTENTION = "sglang.kernels.ops.attention."

# Keyed by Op.key: the op's name for a shared rule, "<engine>.<op>" for an engine's own.
PREDICTED = {op.key: op for op in [
    AwqGemm("awq_gemm", "vllm", "vllm.model_executor.layers.quantization.awq_triton", "awq_gemm_kernel",
            "qwen3-8b", (1, 8, 32, 128), ("float16", "bfloat16"), upper=255),
    FusedMoe("moe", "vllm", "vllm.model_executor.layers.fused_moe.fused_moe", "fused_moe_kernel",
             "olmoe-1b-7b", (1, 8, 32, 128, 512, 2048), ("bfloat16", "float16"), per_engine=True),
    Int8ScaledMM("int8_scaled_mm", "vllm",
                 "vllm.model_executor.layers.quantization.compressed_tensors.triton_scaled_mm", "scaled_mm_kernel",
                 "qwen3-8b", (1, 32, 128, 512, 2048), ("bfloat16", "float16")),
    Fp8BlockScaledMM("fp8_block_scaled_mm", "vllm", "vllm.model_executor.layers.quantization.utils.fp8_utils",
                     "_w8a8_triton_block_scaled_mm", "qwen3-8b", (1, 32, 128, 2048), ("bfloat16", "float16")),
    PagedAttention("attention_decode", "vllm", _UNIFIED, "kernel_unified_attention", "qwen3-8b",
                   (1, 4, 16, 64, 256), ("bfloat16",), given=_PLATFORM, fact="seqs", kernels=("reduce_segments",),
                   per_engine=True),
    PagedAttention("attention_prefill", "vllm", _UNIFIED, "kernel_unified_attention", "qwen3-8b",
                   (128, 512, 2048), ("bfloat16",), given=_PLATFORM, fact="tokens", per_engine=True),
    SglangFusedMoe("moe", "sglang", _SGL_MOE, "fused_moe_kernel", "olmoe-1b-7b", (1, 8, 32, 128, 512, 2048),
                   ("bfloat16", "float16"), per_engine=True),
    SglangFp8BlockScaledMM("fp8_block_scaled_mm", "sglang", _SGL_GEMM, "_w8a8_block_fp8_matmul", "qwen3-8b",
                           (1, 32, 128, 2048), ("bfloat16", "float16"), per_engine=True),
    SglangDecodeAttention("attention_decode", "sglang", _SGL_ATTENTION + "decode_attention",
                          "_fwd_grouped_kernel_stage1", "qwen3-8b", (1, 4, 16, 64, 256), ("bfloat16",), fact="seqs",
                          kernels=("_fwd_kernel_stage2", "_lean_attention_decode_kernel"), per_engine=True),
    SglangExtendAttention("attention_prefill", "sglang", _SGL_ATTENTION + "extend_attention", "_fwd_kernel",
                          "qwen3-8b", (128, 512, 2048), ("bfloat16",), fact="tokens", per_engine=True),
]}
# The engines whose own Triton kernels are predicted, with the package holding them.
ENGINES = ("vllm", "sglang")


# ---------------------------------------------------------------------------------------------
# Ops the model does not predict (most have no code object it can read): rules from published
# measurements (the system's record, W7900 for gfx1100 and MI355X for gfx950), hk only where one
# shows hk ahead.

NO_CODE_OBJECT = {
    "linear": "the engine multiplies with hipBLASLt/rocBLAS through torch: no code object to predict",
    "rms_norm": "the engine's kernel is C++ (vLLM's _C, SGLang's sgl_kernel): no code object to predict",
    "rotary": "the engine's kernel is C++ (vLLM's _C): no code object to predict",
    "silu_and_mul": "the engine's kernel is C++ (vLLM's _C): no code object to predict",
    "kv_cache_write": "the engine's kernel is C++ (vLLM's _C reshape_and_cache_flash): no code object to predict",
    "awq_gemm": "above 255 tokens vLLM dequantizes (Triton) and multiplies with hipBLASLt: no code object "
                "for its GEMM",
    "fp8_scaled_mm": "vLLM multiplies W8A8 fp8 with AITER's GEMMs or torch._scaled_mm (hipBLASLt): no code object "
                     "to predict",
}

NONE_PUBLISHED = "no published measurement of hk against the engine on this target"
_W7900 = {
    "linear": [({"dtype": HALF}, "hk", "published (W7900): hk's GEMM 1.28-1.39x hipBLASLt on Qwen3-8B's linear "
                "shapes; decode GEMV 1.93-2.03x hipBLASLt at 1-32 tokens")],
    "awq_gemm": [({"dtype": HALF, "m": [256, None]}, "hk", "published (W7900): Qwen3-8B-AWQ 1.07-3.80x per request "
                  "against stock vLLM 0.31")],
    "rms_norm": [({"dtype": FLOATS}, "hk", "published (W7900): RMSNorm 1.02-1.12x, fused add + RMSNorm a tie "
                  "(0.83-1.11x), against the fastest of autotuned Triton, FlyDSL and Inductor")],
    "rotary": [({}, "engine", NONE_PUBLISHED + " (RoPE's published ratio is MI355X's, against torch)")],
    "silu_and_mul": [({}, "engine", NONE_PUBLISHED + " (SiLU-mul's published ratio is MI355X's, against torch)")],
    "kv_cache_write": [({"dtype": ["bfloat16"]}, "hk", "published (W7900): KV cache write 1.18-3.00x a Triton "
                        "row kernel")],
}
_MI355X = {
    "linear": [({}, "engine", "published (MI355X): hk's own GEMM 0.41x hipBLASLt")],
    "rms_norm": [({"dtype": HALF, "form": ["fused_add"]}, "hk", "published (MI355X): fused add + RMSNorm "
                  "1.06-1.44x torch"),
                 ({}, "engine", "published (MI355X): hk's plain norm and elementwise kernels 0.59-1.05x torch")],
    "rotary": [({"dtype": HALF}, "hk", "published (MI355X): RoPE 8.85x torch")],
    "silu_and_mul": [({"dtype": HALF}, "hk", "published (MI355X): SiLU-mul 1.28-1.82x torch")],
}
PUBLISHED = {"gfx1100": _W7900, "gfx950": _MI355X}


# Where the system's record measured hk against the same engine kernel on the target's GPU, the
# measurement decides the buckets it covers: the model's stated error was fitted on GEMM
# throughput, and at these latency- and memory-bound shapes its prediction disagrees with the
# measurement by more than that error. The prediction stays in the rule beside it. Keyed by
# PREDICTED's keys: a measurement against vLLM's kernel decides only vLLM's rules.
MEASURED = {
    "gfx1100": {
        "awq_gemm": [([1, 255], "hk", "measured (W7900): the W4A16 decode GEMM 1.40-2.61x vLLM 0.31's Triton AWQ "
                      "kernel")],
        "vllm.moe": [([1, 256], "hk", "measured (W7900): the MoE GEMM 1.00-2.77x vLLM 0.31's Triton fused_moe at 1-256 "
                      "tokens"),
                     ([257, None], "engine", "measured (W7900): the MoE GEMM slower than Triton's above 256 "
                      "tokens")],
        "vllm.attention_prefill": [([1, None], "hk", "measured (W7900): paged prefill 3.6-7.9x vLLM's Triton "
                                    "unified_attention, cached prefixes and chunks included")],
        "vllm.attention_decode": [([1, 64], "engine", "measured (W7900): paged decode 0.83-0.95x vLLM 0.31's "
                                   "Triton attention per layer at 16-64 requests (up to 8, Triton's kernel on hk's "
                                   "cache)")],
    },
}


def measured(arch, op, lo, hi):
    """(route, basis) of a published measurement of `op` (a PREDICTED key) covering tokens lo..hi
    (hi None: open), or None."""
    for (mlo, mhi), route, basis in MEASURED.get(arch, {}).get(op, []):
        if mlo <= lo and (mhi is None or (hi is not None and hi <= mhi)):
            return route, basis
    return None


def measured_engine_within(arch, op, lo, hi):
    """The basis of a published measurement that finds the engine faster somewhere in lo..hi."""
    for (mlo, mhi), route, basis in MEASURED.get(arch, {}).get(op, []):
        if route == routing.ENGINE and (hi is None or mlo <= hi) and (mhi is None or lo <= mhi):
            return basis
    return None


def published_rules(arch, op):
    """The rules of an op the model cannot predict on `arch`, each with its basis."""
    why = NO_CODE_OBJECT[op]
    rules = [{"when": when, "route": route, "basis": "%s; %s" % (why, basis)}
             for when, route, basis in PUBLISHED.get(arch, {}).get(op, [])]
    if not rules or rules[-1]["when"]:
        rest = "%s; %s" % (why, NONE_PUBLISHED) if not rules else "%s; the other calls: no published measurement " \
            "of hk ahead" % why
        rules.append({"when": {}, "route": routing.ENGINE, "basis": rest})
    return rules


# ---------------------------------------------------------------------------------------------
# Predictions and the rules they give.

def margin_for(arch, margin):
    """The margin hk must be predicted faster by: a number, or the stated error for `arch`."""
    if margin == "stated":
        from hk.perf import device as devices
        from hk.perf.model import stated_error

        return stated_error(devices.get(None, arch=arch))
    return float(margin)


def decide(hk_seconds, engine_seconds, margin):
    """(route, ratio): hk when the engine's predicted time is at least (1 + margin) times hk's."""
    ratio = engine_seconds / hk_seconds
    return (routing.HK if ratio >= 1.0 + margin else routing.ENGINE), ratio


def ranges(tokens, upper=None):
    """[lo, hi] per bucket: above the previous bucket up to this one, the last open (or `upper`)."""
    out, lo = [], 1
    for i, t in enumerate(tokens):
        hi = t if i < len(tokens) - 1 else upper
        out.append([lo, hi])
        lo = t + 1
    return out


def predicted_rules(op, tokens, outcomes, margin, previous, arch=None):
    """The rules of a predicted op from its buckets' outcomes ((hk s, engine s) or an error text);
    a bucket that could not be predicted keeps the previous table's route and says why; a bucket
    a measurement on `arch` covers takes the measured route (MEASURED)."""
    rules = []
    for (lo, hi), t, outcome in zip(ranges(tokens, op.upper), tokens, outcomes):
        when = {"dtype": list(op.dtypes), op.fact: [lo, hi]}
        # The engine's kernel at the bucket, where it runs more than one (Op.against).
        launch = op.against(arch, t) if arch else None
        known = measured(arch, op.key, lo, hi)
        if known and isinstance(outcome, str):
            rules.append({"when": when, "route": known[0], "basis": "%s; not predicted (%s)" % (known[1], outcome)})
            continue
        if known:
            mine, theirs = outcome
            rules.append({"when": when, "route": known[0], "basis": "%s; decides over the prediction at %s %d"
                          % (known[1], op.fact, t), "ratio": round(theirs / mine, 3),
                          "hk_us": round(mine * 1e6, 2), "engine_us": round(theirs * 1e6, 2)})
            continue
        if isinstance(outcome, str):
            route = previous.route(op.name, op.engine if op.per_engine else None,
                                   **{"dtype": op.dtypes[0], op.fact: t}) if previous else routing.ENGINE
            rules.append({"when": when, "route": route, "basis": "not predicted (%s)%s; the previous table's route"
                          % (outcome, " against " + launch if launch else "")})
            continue
        mine, theirs = outcome
        route, ratio = decide(mine, theirs, margin)
        basis = "predicted at %s %d" % (op.fact, t)
        if launch:
            basis = "%s against %s" % (basis, launch)
        against = measured_engine_within(arch, op.key, lo, hi) if route == routing.HK else None
        if against:  # a measurement finds the engine faster in part of the bucket: it stays there
            route, basis = routing.ENGINE, "%s, but %s, within this bucket" % (basis, against)
        rules.append({"when": when, "route": route, "basis": basis, "ratio": round(ratio, 3),
                      "hk_us": round(mine * 1e6, 2), "engine_us": round(theirs * 1e6, 2)})
    return rules


def _predict_bucket(job):
    """(hk seconds, engine seconds) summed over the op's shapes at one bucket, or the reason."""
    import warnings

    from hk.errors import HKError, HKWarning

    op, kernels, arch, tokens, shapes = job
    mine = theirs = 0.0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HKWarning)
            for shape in shapes:
                a, b = op.predict(kernels, arch, tokens, shape)
                mine, theirs = mine + a, theirs + b
    except HKError as e:
        return (getattr(e, "message", None) or str(e)).strip().splitlines()[0][:300]
    return mine, theirs


_JOBS = []


def _in_worker(i):
    return _predict_bucket(_JOBS[i])


def run_jobs(jobs, workers, progress=None):
    """Each job's outcome, in order (workers > 1: forked processes)."""
    import concurrent.futures
    import multiprocessing

    _JOBS[:] = jobs
    out = [None] * len(jobs)
    try:
        if workers > 1 and len(jobs) > 1:
            ctx = multiprocessing.get_context("fork")
            with concurrent.futures.ProcessPoolExecutor(min(workers, len(jobs)), mp_context=ctx) as pool:
                futures = {pool.submit(_in_worker, i): i for i in range(len(jobs))}
                for f in concurrent.futures.as_completed(futures):
                    out[futures[f]] = f.result()
                    if progress:
                        progress()
        else:
            for i in range(len(jobs)):
                out[i] = _in_worker(i)
                if progress:
                    progress()
    finally:
        _JOBS.clear()
    return out


def load_kernels(ops, roots, directory):
    """{op key: {kernel name: its JITFunction}} lifted from each op's engine package."""
    out = {}
    for op in ops:
        names = [op.kernel] + list(op.kernels)
        if op.engine not in roots:
            raise ek.EngineKernelError("no %s environment to read %s's kernels from" % (op.engine, op.key),
                                       hint="pass --%s_python or --%s_root" % (op.engine, op.engine))
        source = ek.lift(roots[op.engine], op.engine, op.module, names, op.given)
        module = ek.load(source, directory, "%s_%s" % (op.engine, op.name))
        out[op.key] = {name: getattr(module, name) for name in names}
    return out


def previous_rules(previous, key):
    """(rules, provenance line) of PREDICTED[key] in a previous Table, or None. An engine's own
    rules may come from a table older than the per-engine rules, whose shared rules of the op
    were predicted against that engine's kernel (its provenance line names the engine)."""
    op = PREDICTED[key]
    prov = previous.provenance if isinstance(previous.provenance, dict) else {}
    lines = prov.get("predicted", {})
    if not op.per_engine:
        return (previous.ops[op.name], lines.get(key)) if op.name in previous.ops else None
    own = previous.engines.get(op.engine, {})
    if op.name in own:
        return own[op.name], lines.get(key)
    line = lines.get(op.name) or ""
    if op.name in previous.ops and line.startswith(op.engine + " "):
        return previous.ops[op.name], line
    return None


def kept_rules(previous, ops, model, versions, margin):
    """{PREDICTED key: (rules, provenance line)} of the predicted ops not among `ops` in the
    previous Table, which must be of this model and margin, and of these versions of Triton and
    of the engines whose rules it keeps (so that its rules of the other ops stand beside the new
    ones as if predicted with them)."""
    new = {op.key for op in ops}
    kept = {k: previous_rules(previous, k) for k in PREDICTED if k not in new}
    kept = {k: v for k, v in kept.items() if v}
    if not kept:
        return {}
    prov = previous.provenance if isinstance(previous.provenance, dict) else {}
    packages = ["triton"] + sorted({PREDICTED[k].engine for k in kept})
    was = (prov.get("model"), {p: (prov.get("packages") or {}).get(p) for p in packages}, prov.get("margin"))
    now = (model, {p: versions.get(p) for p in packages}, margin)
    if was != now:
        raise ek.EngineKernelError(
            "%s was predicted by model %s with %s at margin %s, not model %s with %s at margin %s: its rules of "
            "the other ops cannot stand beside new ones; predict every op again (no --ops)"
            % ((previous.source,) + was + now))
    return kept


def _in_order(d, order=None):
    """`d` (keyed by op) in the order of `order` (default: PREDICTED's ops, then NO_CODE_OBJECT)."""
    order = order or list(dict.fromkeys(op.name for op in PREDICTED.values())) + list(NO_CODE_OBJECT)
    return dict(sorted(d.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def build_tables(archs, ops, roots, margin="stated", tokens=None, shapes=None, jobs=1, previous=None,
                 progress=None, keep=False, *, directory):
    """{arch: table} predicted for `ops` (Op objects) at `tokens` (or each op's buckets), the
    engines' packages under roots[engine]; `previous` maps an arch to its previous Table. `keep`:
    the previous table's rules of the other predicted ops stay (kept_rules). `directory` is the
    run's scratch: the engines' kernels lifted into it, Triton's cache (hk-routes removes it)."""
    import triton

    from hk.autotune import fingerprint
    from hk.perf import device as devices
    from hk.perf.model import stated_error

    ek.triton_cache(directory)
    kernels = load_kernels(ops, roots, directory)
    plan, work = [], []
    for arch in archs:
        for op in ops:
            buckets = tuple(int(t) for t in tokens) if tokens else op.tokens
            if op.upper:
                buckets = tuple(t for t in buckets if t <= op.upper)
            plan.append((arch, op, buckets))
            work += [(op, kernels[op.key], arch, t, op.shapes(shapes)) for t in buckets]
    versions = {engine: ek.installed_version(root, engine) for engine, root in sorted(roots.items())}
    versions["triton"] = triton.__version__
    model = fingerprint.model_version()
    kept = {arch: kept_rules(previous[arch], ops, model, versions, margin_for(arch, margin))
            if keep and (previous or {}).get(arch) else {} for arch in archs}
    if progress:
        progress(len(work))
    outcomes = iter(run_jobs(work, jobs, progress and (lambda: progress(None))))
    today = datetime.date.today().isoformat()
    tables = {}
    for arch in archs:
        chosen = margin_for(arch, margin)
        table_ops, engines = {}, {}

        def place(op, rules):  # an engine's own rules, or the shared ones
            (engines.setdefault(op.engine, {}) if op.per_engine else table_ops)[op.name] = rules

        for key, (rules, _) in kept[arch].items():
            place(PREDICTED[key], rules)
        for a, op, buckets in plan:
            if a == arch:
                rules = predicted_rules(op, buckets, [next(outcomes) for _ in buckets], chosen,
                                        (previous or {}).get(arch), arch)
                place(op, rules + (published_rules(arch, op.name) if op.upper else []))
        for name in NO_CODE_OBJECT:
            if name not in table_ops:
                table_ops[name] = published_rules(arch, name)
        tables[arch] = {
            "target": arch,
            "provenance": {
                "kind": "model",
                "model": model,
                "error": stated_error(devices.get(None, arch=arch)),
                "margin": chosen,
                "date": today,
                "packages": versions,
                "predicted": _in_order({**{key: line for key, (_, line) in kept[arch].items() if line},
                                        **{op.key: "%s %s's %s on %s's shapes" % (
                                            op.engine, versions[op.engine], op.described, op.model)
                                           for op in ops}},
                                       list(PREDICTED)),
                "rule": "a predicted rule routes to hk when the engine's predicted time is at least (1 + margin) "
                        "times hk's (ratio = engine / hk), unless a published measurement of the same kernels "
                        "on the target's GPU covers it (its basis starts with 'measured'); every other rule "
                        "names its basis",
                "command": "bazel run //integration/engine:hk-routes -- --jobs=2 --out=<tables directory>",
            },
            "ops": _in_order(table_ops),
            "engines": {e: _in_order(engines[e]) for e in ENGINES if e in engines},
        }
        routing.Table(tables[arch], "<generated %s>" % arch)  # the form routing.py reads
    return tables


def write(tables, out):
    os.makedirs(out, exist_ok=True)
    for arch, data in tables.items():
        with open(os.path.join(out, "%s.json" % arch), "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")


def _runfile(path):
    """A runfile of this binary (an engine's interpreter: "vllm_env/python"), or None."""
    from hk.runtime import toolchain

    for root in toolchain._runfiles_roots():
        if os.path.exists(os.path.join(root, path)):
            return os.path.join(root, path)
    return None


def main(argv):
    if len(argv) > 1:
        raise app.UsageError("unexpected arguments: %s" % " ".join(argv[1:]))
    names = FLAGS.ops or list(PREDICTED)
    unknown = [n for n in names if n not in PREDICTED]
    bad_archs = [a for a in FLAGS.archs if a not in ARCHS]
    if unknown or bad_archs or not FLAGS.out:
        print("hk-routes: %s" % ("unknown ops %s (predicted: %s)" % (unknown, ", ".join(PREDICTED)) if unknown else
                                  "unknown targets %s (%s)" % (bad_archs, ", ".join(ARCHS)) if bad_archs else
                                  "--out names the directory to write the tables into"), file=sys.stderr)
        return 2
    try:
        if FLAGS.margin != "stated":
            float(FLAGS.margin)
    except ValueError:
        print("hk-routes: --margin is a number or \"stated\", not %r" % FLAGS.margin, file=sys.stderr)
        return 2
    ops = [PREDICTED[n] for n in names]
    # Every engine's package (the provenance names the versions of all the rules it keeps).
    try:
        roots = {e: ek.package_root(getattr(FLAGS, e + "_python") or _runfile("%s_env/python" % e),
                                    getattr(FLAGS, e + "_root")) for e in ENGINES}
    except ek.EngineKernelError as e:
        print("hk-routes: %s" % e, file=sys.stderr)
        return 2
    previous = {a: routing.table(a) for a in FLAGS.archs}
    from tqdm import tqdm

    bar = tqdm(unit="bucket", desc="predicting")

    def progress(total):
        if total is not None:
            bar.total = total
            bar.refresh()
        else:
            bar.update(1)

    try:
        with tempfile.TemporaryDirectory(prefix="hk-routes-") as scratch:
            tables = build_tables(FLAGS.archs, ops, roots, FLAGS.margin, FLAGS.tokens, FLAGS.shapes,
                                  FLAGS.jobs, previous, directory=scratch, progress=progress,
                                  keep=bool(FLAGS.ops))
    except ek.EngineKernelError as e:
        print("hk-routes: %s" % e, file=sys.stderr)
        return 2
    bar.close()
    write(tables, FLAGS.out)
    failed = 0
    for arch, data in tables.items():
        table = routing.Table(data)
        for name in names:  # the others were kept from the shipped table, or not predicted
            op = PREDICTED[name]
            for r in table.rules(op.name, op.engine if op.per_engine else None):
                if "ratio" in r:
                    print("%-8s %-24s %s %-14s %-6s engine/hk %.2f (hk %.1f us, engine %.1f us)"
                          % (arch, name, op.fact, r["when"][op.fact], r["route"], r["ratio"], r["hk_us"],
                             r["engine_us"]))
                elif r["basis"].startswith("not predicted ("):
                    failed += 1
                    print("%-8s %-24s %-6s %s" % (arch, name, r["route"], r["basis"]))
    print("hk-routes: wrote %s" % ", ".join(os.path.join(FLAGS.out, "%s.json" % a) for a in tables))
    return 1 if failed else 0


def run():
    define_flags()
    app.run(main)


if __name__ == "__main__":
    run()
