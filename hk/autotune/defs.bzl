"""hk_tune: a schedule search whose candidates are Bazel actions.

    load("//hk/autotune:defs.bzl", "hk_tune")

    hk_tune(
        name = "qwen3_gfx1100",
        op = "linear",
        arch = "gfx1100",
        model = "qwen3-8b",
        tokens = ["4096"],
        shards = 8,
    )

Each of the `shards` actions evaluates every shards-th candidate of the op's space at every
shape (traced, compiled, gated and predicted by hk.perf, as `hk-tune --shard` does), from its
declared inputs alone, so that a remote executor runs them side by side and the action cache
keeps each shard's results. A last action puts the shards' results into a private result cache
and runs the search, which finds every result there: it writes <name>.json (a tuned file in
hk/tuned/<arch>.json's form) and <name>.txt (the search's report).
"""

def _hk_tune_impl(ctx):
    common = ctx.actions.args()
    common.add("--private_cache")
    common.add("--ops", ctx.attr.op)
    common.add("--archs", ctx.attr.arch)
    common.add("--evaluator", "model")
    common.add("--jobs", "1")  # an action is one process: parallelism comes from the shards
    for s in ctx.attr.shapes:
        common.add("--shape=" + s)
    if ctx.attr.model:
        common.add("--model", ctx.attr.model)
        common.add("--tokens", ",".join(ctx.attr.tokens))
    for k in ctx.attr.knobs:
        common.add("--knob=" + k)

    records = []
    for i in range(ctx.attr.shards):
        out = ctx.actions.declare_file("%s.shard%d.json" % (ctx.label.name, i))
        args = ctx.actions.args()
        args.add("--shard", "%d/%d" % (i, ctx.attr.shards))
        args.add("--records_out", out)
        ctx.actions.run(
            executable = ctx.executable._tool,
            arguments = [common, args],
            outputs = [out],
            mnemonic = "HkTuneShard",
            progress_message = "Evaluating shard %d/%d of %s's candidates on %s" % (i, ctx.attr.shards, ctx.attr.op, ctx.attr.arch),
        )
        records.append(out)

    tuned = ctx.actions.declare_file(ctx.label.name + ".json")
    report = ctx.actions.declare_file(ctx.label.name + ".txt")
    args = ctx.actions.args()
    args.add_joined("--records", records, join_with = ",")
    args.add("--out", tuned)
    ctx.actions.run_shell(
        tools = [ctx.executable._tool],
        inputs = records,
        outputs = [tuned, report],
        command = '"$1" "${@:3}" > "$2"',
        arguments = [ctx.executable._tool.path, report.path, common, args],
        mnemonic = "HkTune",
        progress_message = "Choosing %s's schedules on %s from %d shards" % (ctx.attr.op, ctx.attr.arch, ctx.attr.shards),
    )
    return [DefaultInfo(files = depset([tuned, report]), runfiles = ctx.runfiles(files = [tuned, report] + records))]

hk_tune = rule(
    implementation = _hk_tune_impl,
    doc = """A search of an op's schedules at given shapes on one target, its candidates
evaluated by `shards` actions; outputs <name>.json (the tuned choices) and <name>.txt (the
report), and keeps <name>.shardN.json (each shard's results) in its runfiles.

Example:
    hk_tune(name = "gemm_small", op = "linear", arch = "gfx1100", shapes = ["64,64,64"],
            knobs = ["waves=4", "BM=64"], shards = 2)
""",
    attrs = {
        "op": attr.string(mandatory = True, doc = "The op (hk.ops.TUNABLES), e.g. \"linear\"."),
        "arch": attr.string(mandatory = True, doc = "The target, e.g. \"gfx1100\"."),
        "shapes": attr.string_list(doc = "Shapes as hk-tune --shape takes them (\"M,N,K\" for a linear)."),
        "model": attr.string(doc = "A model whose layers give the shapes (hk-tune --list)."),
        "tokens": attr.string_list(default = ["4096"], doc = "The tokens per step of `model`'s shapes."),
        "knobs": attr.string_list(doc = "NAME=V1,V2 replacing a knob's values (hk-tune --knob)."),
        "shards": attr.int(default = 4, doc = "How many actions evaluate the candidates."),
        # The target configuration, as `bazel run //hk/autotune:hk-tune` and the tests build it: the
        # result keys cover hk's compiled bindings, so shards and searches must share one build of them.
        "_tool": attr.label(default = "//hk/autotune:hk-tune", executable = True, cfg = "target"),
    },
)
