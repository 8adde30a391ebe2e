"""hk-tune: searches the library's ops at given shapes on given targets and records the best
candidate of each shape bucket in a tuned file (hk/tuned/<arch>.json's form), which hk.ops
reads at launch (point HK_TUNED at it, or ship it in hk/tuned).

    hk-tune --ops=linear --model=qwen3-8b --tokens=4096 --archs=gfx1100 --out=tuned/
    hk-tune --ops=linear --shape=4096,4096,4096 --shape=512,6144,4096 --archs=gfx1100,gfx950 --out=tuned/
    hk-tune --ops=flash_attention --shape=1,32,8,4096,4096,128,causal --archs=gfx1100 --out=tuned/

--model takes the shapes of a model's layers (hk/autotune/models.json: Qwen3-8B, Llama-3-8B,
OLMoE) at each --tokens; --shape gives one: a linear's M,N,K[,fp16]; an attention's
BATCH,HEADS,KV_HEADS,QUERIES,KEYS,D[,causal]. Without a GPU of the
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
    flags.DEFINE_multi_string("shape", [], "a shape to tune at (linear: M,N,K[,fp16]; flash_attention: "
                              "BATCH,HEADS,KV_HEADS,QUERIES,KEYS,D[,causal])")
    flags.DEFINE_list("model", [], "take the shapes of these models' layers (see --list)")
    flags.DEFINE_list("tokens", ["4096"], "the tokens per step (a linear's M) of --model's shapes")
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
    flags.DEFINE_bool("list", False, "list the ops and models and exit")


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


def parse_shape(op, text):
    from hk.compiler.cli import UsageError

    if op == "linear":
        what = "a linear's shape is M,N,K with an optional dtype (bf16 or fp16)"
        dims, rest = _dims(text, 3, what)
        if rest and rest[0] not in ("bf16", "fp16"):
            raise UsageError("--shape=%s: %s" % (text, what))
        return dims + tuple(rest)
    what = "an attention's shape is BATCH,HEADS,KV_HEADS,QUERIES,KEYS,D with an optional 'causal'"
    dims, rest = _dims(text, 6, what)
    if (rest and rest[0] != "causal") or dims[1] % dims[2]:
        raise UsageError("--shape=%s: %s (HEADS a multiple of KV_HEADS)" % (text, what))
    return dims + (bool(rest),)


def shapes_for(op, given, model_names, tokens):
    from hk.compiler.cli import UsageError

    shapes = [parse_shape(op, s) for s in given]
    known = models()
    for name in model_names:
        if name not in known:
            raise UsageError("unknown model %r (known: %s)" % (name, ", ".join(sorted(known))))
        config = known[name]
        if op == "linear":
            shapes += [(m, n, k) for m in tokens for n, k in linear_shapes(config)]
        else:  # a prefill of `tokens` tokens, causal
            shapes += [(1, config["num_attention_heads"], config["num_key_value_heads"], t, t,
                        config["head_dim"], True) for t in tokens]
    if not shapes:
        raise UsageError("no shapes to tune %s at: give --shape or --model" % op)
    return list(dict.fromkeys(shapes))


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
    if not FLAGS.out:
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
    plan = [(op, shapes_for(op, FLAGS.shape, FLAGS.model, tokens)) for op in FLAGS.ops]
    failed = 0
    for arch in FLAGS.archs:
        path = _out_path(FLAGS.out, arch, FLAGS.archs)
        for op, shapes in plan:
            bar = tqdm(total=1, unit="candidate", desc="%s %s" % (op, arch), file=sys.stderr, disable=None)

            def progress(done, total, bar=bar):
                bar.total = total
                bar.n = done
                bar.refresh()

            try:
                tunable = hk.ops.TUNABLES[op]
                space = tunable.space_for(arch).replace(**knobs) if knobs else None
                result = searching.search(tunable, shapes, arch, space=space, strategy=FLAGS.strategy,
                                       effort=FLAGS.effort, budget_s=FLAGS.budget, jobs=FLAGS.jobs,
                                       evaluator=FLAGS.evaluator, min_gain=FLAGS.min_gain,
                                       progress=progress)
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


def entry():
    from hk.compiler import cli

    cli.run_tool("hk-tune", __doc__, define_flags, main)


if __name__ == "__main__":
    entry()
