"""hk-tune: searches the library's ops at given shapes on given targets and records the best
candidate of each shape bucket in a tuned file (hk/tuned/<arch>.json's form), which hk.ops
reads at launch (point HK_TUNED at it, or ship it in hk/tuned).

    hk-tune --ops=linear --model=qwen3-8b --tokens=4096 --archs=gfx1100 --out=tuned/
    hk-tune --ops=linear,flash_attention --from-engine=vllm --model=llama-3-8b --archs=gfx942 --out=tuned/
    hk-tune --ops=linear --shape=4096,4096,4096 --shape=512,6144,4096 --archs=gfx1100,gfx950 --out=tuned/
    hk-tune --ops=flash_attention --shape=1,32,8,4096,4096,128,causal --archs=gfx1100 --out=tuned/
    hk-tune --ops=linear_split_k,fused_moe --from-engine=vllm --model=olmoe-1b-7b --archs=gfx1100 --out=tuned/
    hk-tune --ops=awq_gemm --model=qwen3-8b --tokens=1 --archs=gfx942 --out=tuned/
    hk-tune --ops=paged_attention_decode --from-engine=vllm --model=llama-3-8b --archs=gfx942 --out=tuned/
    hk-tune --ops=paged_attention_prefill --from-engine=vllm --model=qwen3-8b --archs=gfx1100 --out=tuned/

--model takes the shapes of a model's layers (hk/autotune/models.json: Qwen3-8B, Llama-3-8B,
OLMoE) at each --tokens, or, with --from-engine=vllm|sglang, at the tokens per step that engine
runs by default on each target (its decode batches above split-K's rows and its prefill chunk;
for linear_split_k and awq_gemm, decode's 1 and up to 32 rows; for fused_moe, one count per range
of rows per expert up to the prefill chunk, from the model's experts and top-k; awq_gemm's
weights in groups of AWQ_GROUP); --shape gives one: a linear's (or linear_split_k's, M up to 32)
M,N,K[,fp16]; an attention's BATCH,HEADS,KV_HEADS,QUERIES,KEYS,D[,causal]; fused_moe's
TOKENS,EXPERTS,TOP_K,HIDDEN,INTERMEDIATE[,fp16]; awq_gemm's M,N,K,G[,bf16] (M up to 32);
paged_attention_decode's SEQS,CONTEXT,HEADS,KV_HEADS,D[,BLOCK_SIZE] (--tokens are its sequences,
of DECODE_CONTEXT keys each; --from-engine, one count per bucket up to the largest decode batch);
paged_attention_prefill's SEQS,TOKENS,HEADS,KV_HEADS,D[,BLOCK_SIZE] (--tokens are one sequence's new
tokens; --from-engine, each bucket's upper end up to the prefill chunk).
--shard=I/N evaluates every N-th candidate into --records_out and --records reads such files
back before searching (how hk_tune spreads a search over Bazel actions). Without a GPU of the
target, candidates are ranked by hk.perf's prediction (each entry records the model's version
and stated error); with one, they are timed. Results are cached per candidate: running again
evaluates only what changed. --out is a directory (<arch>.json in it) or, with one target, a
file; entries of other buckets already in it are kept.

Exit codes: 0 every search found a choice, 1 some search found none (every candidate was
refused: the reasons are printed), 2 a wrong command.
"""

import json
import os
import sys

from absl import flags

FLAGS = flags.FLAGS
_MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models.json")


def define_flags():
    flags.DEFINE_list("ops", ["linear"], "the ops to tune (hk.ops.TUNABLES)")
    flags.DEFINE_multi_string("shape", [], "a shape to tune at (linear, linear_split_k: M,N,K[,fp16]; "
                              "flash_attention: BATCH,HEADS,KV_HEADS,QUERIES,KEYS,D[,causal]; fused_moe: "
                              "TOKENS,EXPERTS,TOP_K,HIDDEN,INTERMEDIATE[,fp16]; int8_scaled_mm: M,N,K; scaled_mm: "
                              "M,N,K[,e4m3|e5m2|e4m3fnuz|e5m2fnuz]; awq_gemm: M,N,K,G[,bf16]; paged_attention_decode: "
                              "SEQS,CONTEXT,HEADS,KV_HEADS,D[,BLOCK_SIZE]; paged_attention_prefill: "
                              "SEQS,TOKENS,HEADS,KV_HEADS,D[,BLOCK_SIZE])")
    flags.DEFINE_list("model", [], "take the shapes of these models' layers (see --list)")
    flags.DEFINE_list("tokens", ["4096"], "the tokens per step (a linear's M) of --model's shapes "
                      "(linear_split_k and awq_gemm take those up to 32, by default 1)")
    flags.DEFINE_enum("from_engine", None, ["vllm", "sglang"], "take --model's tokens per step from what "
                      "this engine runs by default on each target (its decode batches and prefill chunks; "
                      "--tokens, when given, overrides)")
    flags.DEFINE_alias("from-engine", "from_engine")
    flags.DEFINE_multi_string("knob", [], "NAME=V1,V2,...: search these values of a knob (replacing the "
                              "space's; a knob the op takes but the space leaves at its default joins it)")
    flags.DEFINE_list("archs", ["gfx1100"], "target architectures")
    flags.DEFINE_string("out", None, "the tuned file (one target) or a directory for <arch>.json")
    flags.DEFINE_enum("effort", "medium", ["low", "medium", "high"], "how much of a large space to search")
    flags.DEFINE_enum("strategy", "auto", ["auto", "exhaustive", "pattern"], "how to walk the space")
    flags.DEFINE_float("budget", None, "a wall-time budget per search, in seconds")
    flags.DEFINE_integer("jobs", None, "worker processes (default: the machine's cores)", lower_bound=1)
    flags.DEFINE_enum("evaluator", None, ["model", "time"], "rank by hk.perf or time on a GPU (default: "
                      "time where a GPU of the target is present)")
    flags.DEFINE_float("min_gain", 1.0, "keep today's choice unless the best is this much faster "
                       "(1.02: by 2%)", lower_bound=1.0)
    flags.DEFINE_bool("warm", True, "start a pattern search also from the choices the op already has on the "
                      "target (in --out's file and the tuned file launches read), the nearest buckets' first")
    flags.DEFINE_bool("list", False, "list the ops and models and exit")
    flags.DEFINE_string("shard", None, "INDEX/COUNT: evaluate only every COUNT-th candidate of the space, "
                        "starting at INDEX, predicted by the model, and write the results to --records_out "
                        "instead of searching (one op, one target; how hk_tune makes Bazel actions)")
    flags.DEFINE_string("records_out", None, "with --shard: the file the shard's results are written to")
    flags.DEFINE_list("records", [], "shard result files (--shard's) put into the result cache before searching")
    flags.DEFINE_bool("private_cache", False, "compile and cache under a temporary directory, removed at the "
                      "end (a Bazel action's: nothing outside its outputs is written)")


def models():
    with open(_MODELS) as f:
        return json.load(f)["models"]


def linear_shapes(config):
    """[(N, K)] of a model's linear layers: QKV, O, and (unless its MLP is experts) gate-up and down."""
    heads, kv, d, hidden = (config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"],
                            config["hidden_size"])
    shapes = [((heads + 2 * kv) * d, hidden), (hidden, heads * d)]
    if not config.get("num_experts"):
        shapes += [(2 * config["intermediate_size"], hidden), (hidden, config["intermediate_size"])]
    return shapes


# The 8-bit GEMMs tuned at a linear's shapes: int8 W8A8, and fp8 in the target's own format.
MM8_OPS = ("int8_scaled_mm", "scaled_mm")
# The decode-only ops (a split of K, M up to 32 rows).
DECODE_OPS = ("linear_split_k", "awq_gemm")
# Paged decode attention: --tokens (or an engine's decode batches) are its sequences, each of
# DECODE_CONTEXT keys (the context engine routes are predicted at).
PAGED_DECODE = "paged_attention_decode"
DECODE_CONTEXT = 1024
# Paged prefill attention: --tokens are the new tokens of one sequence, nothing cached before them.
PAGED_PREFILL = "paged_attention_prefill"
# The group size of a model's AWQ checkpoint (AutoAWQ's default q_group_size, the one vLLM's AWQ
# route is predicted at); its 4-bit weights are the model's linears.
AWQ_GROUP = 128
FP8_FORMATS = ("e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz")


def engines():
    with open(_MODELS) as f:
        return json.load(f)["engines"]


def engine_tokens(op, engine, arch, config=None):
    """The tokens per step an engine runs on `arch` by default: for a linear, one count per M
    bucket its decode batches reach above decode's split-K rows (each bucket's upper end) and its
    prefill chunk (for the 8-bit GEMMs, which have no split-K: 1 and every bucket's upper end);
    for the split-K linear, a decode of 1 and of up to 32 requests; for paged decode, both ends of
    each bucket of sequences (one choice must serve 17 sequences and 64); for paged prefill, each
    bucket's upper end up to the prefill chunk, and the chunk (prompts of any length up to it);
    for a MoE layer (a model's `config`), the fewest tokens of each range of rows per expert up to
    the prefill chunk; for attention, the prefill chunk."""
    from hk.ops import gemm, moe

    facts = engines()[engine]
    prefill, decode_max = facts["prefill"][arch], facts["decode_max"][arch]
    if op == PAGED_DECODE:  # both ends of each bucket of sequences up to the largest decode batch
        from hk.ops import paged

        highs = {s for s in paged.SEQ_BUCKETS if s <= decode_max} | {decode_max}
        return sorted(highs | {1} | {s + 1 for s in paged.SEQ_BUCKETS if s + 1 <= decode_max})
    if op == PAGED_PREFILL:
        from hk.ops import paged

        return sorted({t for t in paged.PREFILL_BUCKETS if t <= prefill} | {prefill})
    if op in DECODE_OPS:
        return sorted({1, min(gemm.DECODE_ROWS, decode_max)})
    if op == "fused_moe":
        experts, top_k = config["num_experts"], config["experts_per_token"]
        tokens = [max(1, -(-low * experts // top_k)) for low in moe.PER_EXPERT]
        return sorted({t for t in tokens if t <= prefill})
    if op in MM8_OPS:  # no split-K: a decode's rows are the GEMM's own, from one
        return sorted({1} | {m for m in gemm.M_BUCKETS if m <= decode_max} | {prefill})
    if op != "linear":
        return [prefill]
    decode = [m for m in gemm.M_BUCKETS if gemm.DECODE_ROWS < m <= decode_max]
    return sorted(set(decode + [prefill]))


def _dims(text, count, what):
    """(the first `count` comma-separated positive integers of `text`, the words after them)."""
    from hk.compiler.cli import UsageError

    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        dims = tuple(int(p) for p in parts[:count])
    except ValueError:
        dims = ()
    if len(dims) != count or min(dims) < 1 or len(parts) > count + 1:
        raise UsageError("--shape=%s: %s" % (text, what))
    return dims, parts[count:]


def parse_shape(op, text, arch=None):
    from hk.compiler.cli import UsageError
    from hk.ops import awq, gemm

    if op in MM8_OPS:
        int8 = op == "int8_scaled_mm"
        what = "%s's shape is M,N,K%s" % (op, "" if int8 else " with an optional fp8 format (%s; default: the "
                                          "target's e4m3)" % ", ".join(FP8_FORMATS))
        dims, rest = _dims(text, 3, what)
        if int8:
            if rest:
                raise UsageError("--shape=%s: %s" % (text, what))
            return dims + ("i8",)
        if rest and rest[0] not in FP8_FORMATS:
            raise UsageError("--shape=%s: %s" % (text, what))
        return dims + ("fp8" + rest[0] if rest else _target_fp8(arch),)

    if op in (PAGED_DECODE, PAGED_PREFILL):
        from hk.ops import paged

        what = ("a paged %s's shape is SEQS,%s,HEADS,KV_HEADS,D with an optional BLOCK_SIZE (16 by default): HEADS "
                "a multiple of KV_HEADS, D a multiple of 16 up to 256, BLOCK_SIZE of 16"
                % (("decode", "CONTEXT") if op == PAGED_DECODE else ("prefill", "TOKENS")))
        dims, rest = _dims(text, 5, what)
        try:
            bs = (int(rest[0]),) if rest else ()
        except ValueError:
            bs = (0,)
        if dims[2] % dims[3] or dims[4] % 16 or dims[4] > 256 or (bs and (bs[0] < 1 or bs[0] % paged.TILE)):
            raise UsageError("--shape=%s: %s" % (text, what))
        return dims + bs
    if op == "awq_gemm":
        what = ("an AWQ product's shape is M,N,K,G with M up to %d, N a multiple of 8 and G (the group size) a "
                "multiple of %d dividing K, with an optional dtype (fp16 or bf16)" % (gemm.DECODE_ROWS, awq.BK))
        dims, rest = _dims(text, 4, what)
        m, n, k, g = dims
        if (rest and rest[0] not in ("bf16", "fp16")) or m > gemm.DECODE_ROWS or n % 8 or g % awq.BK or k % g:
            raise UsageError("--shape=%s: %s" % (text, what))
        return dims + tuple(rest)
    if op in ("linear", "linear_split_k", "fused_moe"):
        what = {"linear": "a linear's shape is M,N,K",
                "linear_split_k": "a split-K linear's shape is M,N,K with M up to %d" % gemm.DECODE_ROWS,
                "fused_moe": "a MoE layer's shape is TOKENS,EXPERTS,TOP_K,HIDDEN,INTERMEDIATE (TOP_K up to "
                             "EXPERTS)"}[op] + " with an optional dtype (bf16 or fp16)"
        dims, rest = _dims(text, 5 if op == "fused_moe" else 3, what)
        if (rest and rest[0] not in ("bf16", "fp16")) or (op == "linear_split_k" and dims[0] > gemm.DECODE_ROWS) \
                or (op == "fused_moe" and dims[2] > dims[1]):
            raise UsageError("--shape=%s: %s" % (text, what))
        return dims + tuple(rest)
    what = "an attention's shape is BATCH,HEADS,KV_HEADS,QUERIES,KEYS,D with an optional 'causal'"
    dims, rest = _dims(text, 6, what)
    if (rest and rest[0] != "causal") or dims[1] % dims[2]:
        raise UsageError("--shape=%s: %s (HEADS a multiple of KV_HEADS)" % (text, what))
    return dims + (bool(rest),)


def _target_fp8(arch):
    """scaled_mm's operands on `arch`: e4m3 in the format its matrix instruction reads."""
    from hk.compiler.cli import UsageError
    from hk.ops import mm8

    name = mm8.native_fp8(arch) if arch else None
    if name is None:
        raise UsageError("scaled_mm is tuned where the target's matrix instruction reads fp8 (its LDS-staged "
                         "kernel); %s has none: give --archs of those targets, or a format with --shape"
                         % (arch or "no target",))
    return name


def shapes_for(op, given, model_names, tokens, arch=None):
    from hk.compiler.cli import UsageError

    from hk.ops import gemm

    shapes = [parse_shape(op, s, arch) for s in given]
    known = models()
    for name in model_names:
        if name not in known:
            raise UsageError("unknown model %r (known: %s)" % (name, ", ".join(sorted(known))))
        config = known[name]
        counts = tokens(config) if callable(tokens) else tokens  # engine_tokens may need the model
        if op == "linear":
            shapes += [(m, n, k) for m in counts for n, k in linear_shapes(config)]
        elif op in MM8_OPS:
            dtype = "i8" if op == "int8_scaled_mm" else _target_fp8(arch)
            shapes += [(m, n, k, dtype) for m in counts for n, k in linear_shapes(config)]
        elif op in DECODE_OPS:
            decode = [m for m in counts if m <= gemm.DECODE_ROWS]
            if not decode:
                raise UsageError("%s is a decode's linear: give --tokens up to %d (not %s)"
                                 % (op, gemm.DECODE_ROWS, ",".join(map(str, counts))))
            group = (AWQ_GROUP,) if op == "awq_gemm" else ()
            shapes += [(m, n, k) + group for m in decode for n, k in linear_shapes(config)]
        elif op == "fused_moe":
            if not config.get("num_experts"):
                raise UsageError("%s has no experts: fused_moe has no shapes in it" % name)
            shapes += [(t, config["num_experts"], config["experts_per_token"], config["hidden_size"],
                        config["intermediate_size"]) for t in counts]
        elif op == PAGED_DECODE:
            shapes += [(seqs, DECODE_CONTEXT, config["num_attention_heads"], config["num_key_value_heads"],
                        config["head_dim"]) for seqs in counts]
        elif op == PAGED_PREFILL:
            shapes += [(1, t, config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"])
                       for t in counts]
        else:  # a prefill of `tokens` tokens, causal
            shapes += [(1, config["num_attention_heads"], config["num_key_value_heads"], t, t,
                        config["head_dim"], True) for t in counts]
    if not shapes:
        raise UsageError("no shapes to tune %s at: give --shape or --model" % op)
    return list(dict.fromkeys(shapes))


def _check_knob_types(op, searched, knobs):
    """Refuses a --knob value of another type than the values the op's space gives that knob
    (BM=abc for a knob of integers), which every candidate would otherwise fail on."""
    from hk.compiler.cli import UsageError

    for name, values in knobs.items():
        kinds = {type(v) for v in searched.get(name, ())}
        wrong = [v for v in values if kinds and type(v) not in kinds]
        if wrong:
            raise UsageError("--knob=%s=%s: %s's %s takes %s values (%s), not %r" % (
                name, ",".join(map(str, values)), op, name, " or ".join(sorted(k.__name__ for k in kinds)),
                ", ".join(map(repr, searched[name])), wrong[0]))


def knob_values(items):
    """{knob: (values)} of --knob NAME=V1,V2 items (values read as Python literals)."""
    from hk.compiler.cli import UsageError, parse_constants

    knobs = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep or not name or not values.strip():
            raise UsageError("--knob=%s: a knob is NAME=V1,V2,..." % item)
        knobs[name] = tuple(parse_constants(["v=" + v.strip()])["v"] for v in values.split(",") if v.strip())
    return knobs


def tuned_starts(op, arch, out_path, buckets):
    """The knobs `op` already has on `arch` in `out_path` (hk-tune's own file, which wins a bucket
    both hold) and in the tuned file launches read, those of the buckets whose description starts
    most like one of `buckets` first (the same N and K of a linear, the same heads of an
    attention), then hk-tune's own: a pattern search's warm starts."""
    from hk import tuned

    found = {}
    for path in dict.fromkeys([out_path, tuned.path_for(arch)]):
        if path and os.path.exists(path):
            for bucket, entry in tuned.entries(path, arch).get(op, {}).items():
                found.setdefault(bucket, entry)

    def nearness(bucket):
        return max(len(os.path.commonprefix([bucket, b])) for b in buckets)

    starts = []
    for bucket in sorted(found, key=nearness, reverse=True):
        knobs = found[bucket].get("knobs") if isinstance(found[bucket], dict) else None
        if isinstance(knobs, dict) and knobs not in starts:
            starts.append(knobs)
    return starts


def _out_path(out, arch, archs):
    if os.path.isdir(out) or out.endswith(os.sep) or len(archs) > 1:
        return os.path.join(out, arch + ".json")
    return out


def main(argv):
    from tqdm import tqdm

    import hk.ops
    from hk import tuned
    from hk.autotune import searching
    from hk.compiler import cli
    from hk.errors import TuneError

    if len(argv) > 1:
        raise cli.UsageError("unexpected arguments %s" % " ".join(argv[1:]))
    if FLAGS.list:
        print("ops: %s" % ", ".join(sorted(hk.ops.TUNABLES)))
        print("models: %s" % ", ".join(sorted(models())))
        return 0
    unknown = [op for op in FLAGS.ops if op not in hk.ops.TUNABLES]
    if unknown:
        raise cli.UsageError("no tunable op %s (tunable: %s)"
                             % (", ".join(unknown), ", ".join(sorted(hk.ops.TUNABLES))))
    if not FLAGS.out and FLAGS.shard is None:
        raise cli.UsageError("give the tuned file or directory to write with --out")
    try:
        tokens = [int(t) for t in FLAGS.tokens]
    except ValueError:
        raise cli.UsageError("--tokens are integers: %s" % ",".join(FLAGS.tokens)) from None
    cli.check_archs(FLAGS.archs)
    knobs = knob_values(FLAGS.knob)
    for op in FLAGS.ops:
        unknown = set(knobs) - set(hk.ops.TUNABLES[op].knobs)
        if unknown:
            raise cli.UsageError("--knob: %s takes no knob %s (its knobs: %s)" % (
                op, ", ".join(sorted(unknown)), ", ".join(sorted(hk.ops.TUNABLES[op].knobs))))
        for arch in FLAGS.archs:
            _check_knob_types(op, hk.ops.TUNABLES[op].space_for(arch).knobs, knobs)
    if FLAGS.from_engine and not FLAGS.model:
        raise cli.UsageError("--from-engine takes the shapes of --model's layers: name a model")

    def plan_for(arch):
        def tokens_of(op):
            if FLAGS.from_engine and not FLAGS["tokens"].present:
                return lambda config: engine_tokens(op, FLAGS.from_engine, arch, config)
            if op in DECODE_OPS + (PAGED_DECODE,) and not FLAGS["tokens"].present:
                return [1]  # a decode's single row (its bucket is M 1-32), or sequence
            return tokens
        return [(op, shapes_for(op, FLAGS.shape, FLAGS.model, tokens_of(op), arch)) for op in FLAGS.ops]

    plans = {arch: plan_for(arch) for arch in FLAGS.archs}
    if FLAGS.shard is not None:
        return _shard(plans[FLAGS.archs[0]], knobs)
    if FLAGS.records:
        from hk.autotune import shards

        try:
            count = shards.load(FLAGS.records)
        except TuneError as e:
            raise cli.UsageError(str(e)) from None
        print("hk-tune: %d results of %d shard file(s) put into the result cache" % (count, len(FLAGS.records)))
    failed = 0
    for arch in FLAGS.archs:
        path = _out_path(FLAGS.out, arch, FLAGS.archs)
        for op, shapes in plans[arch]:
            bar = tqdm(total=1, unit="candidate", desc="%s %s" % (op, arch), file=sys.stderr, disable=None)

            def progress(done, total, bar=bar):
                bar.total = total
                bar.n = done
                bar.refresh()

            try:
                tunable = hk.ops.TUNABLES[op]
                space = tunable.space_for(arch).replace(**knobs) if knobs else None
                starts = tuned_starts(op, arch, path, {tunable.bucket(s) for s in shapes}) if FLAGS.warm else ()
                result = searching.search(tunable, shapes, arch, space=space, strategy=FLAGS.strategy,
                                       effort=FLAGS.effort, budget_s=FLAGS.budget, jobs=FLAGS.jobs,
                                       evaluator=FLAGS.evaluator, min_gain=FLAGS.min_gain,
                                       progress=progress, starts=starts)
            except TuneError as e:
                bar.close()
                print("FAIL %s on %s: %s" % (op, arch, e))
                failed += 1
                continue
            bar.close()
            print(result.report())
            missing = sorted({hk.ops.TUNABLES[op].bucket(s) for s in shapes} - set(result.choices))
            for bucket in missing:
                print("FAIL %s on %s at %s: every candidate was refused" % (op, arch, bucket))
            failed += bool(missing)
            tuned.write(path, arch, op, {b: tuned.entry_of(c, result) for b, c in result.choices.items()})
            print("hk-tune: %d choices of %s on %s written to %s" % (len(result.choices), op, arch, path))
    return 1 if failed else 0


def _shard(plan, knobs):
    """--shard: one shard's results to --records_out."""
    import hk.ops
    from hk.autotune import shards
    from hk.compiler import cli
    from hk.errors import TuneError

    index, sep, count = FLAGS.shard.partition("/")
    try:
        index, count = int(index), int(count)
    except ValueError:
        raise cli.UsageError("--shard is INDEX/COUNT, not %s" % FLAGS.shard) from None
    if not sep or not 0 <= index < count:
        raise cli.UsageError("--shard is INDEX/COUNT with 0 <= INDEX < COUNT, not %s" % FLAGS.shard)
    if len(plan) != 1 or len(FLAGS.archs) != 1 or not FLAGS.records_out:
        raise cli.UsageError("--shard evaluates one op on one target into --records_out")
    (op, shapes), = plan
    tunable = hk.ops.TUNABLES[op]
    try:
        space = tunable.space_for(FLAGS.archs[0]).replace(**knobs) if knobs else None
        records = shards.evaluate(tunable, shapes, FLAGS.archs[0], index, count, space=space, jobs=FLAGS.jobs)
    except TuneError as e:
        print("FAIL %s on %s, shard %s: %s" % (op, FLAGS.archs[0], FLAGS.shard, e))
        return 1
    shards.write(FLAGS.records_out, records)
    refused = sum(r["record"].get("status") != "ok" for r in records)
    print("hk-tune: shard %s of %s on %s: %d results (%d refused) written to %s"
          % (FLAGS.shard, op, FLAGS.archs[0], len(records), refused, FLAGS.records_out))
    return 0


def _main(argv):
    if not FLAGS.private_cache:
        return main(argv)
    import shutil
    import tempfile

    private = tempfile.mkdtemp(prefix="hk-tune-")
    os.environ["HK_CACHE_DIR"] = private
    try:
        return main(argv)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def entry():
    from hk.compiler import cli

    cli.run_tool("hk-tune", __doc__, define_flags, _main)


if __name__ == "__main__":
    entry()
