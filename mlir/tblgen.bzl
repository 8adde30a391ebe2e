"""mlir_tblgen: run mlir-tblgen from @llvm_toolchain on an ODS file, one action per output."""

_MLIR_INCLUDE = "usr/lib/llvm-22/include"

def _mlir_tblgen_impl(ctx):
    outputs = []
    include_dirs = {ctx.file.td_file.dirname: True}
    for src in ctx.files.td_srcs:
        include_dirs[src.dirname] = True
    for inc in ctx.attr.includes:
        include_dirs[inc] = True
    mlir_td = ctx.files._mlir_td
    mlir_include = None
    for f in mlir_td:
        if f.path.find("/" + _MLIR_INCLUDE + "/") >= 0:
            mlir_include = f.path[:f.path.find("/" + _MLIR_INCLUDE + "/")] + "/" + _MLIR_INCLUDE
            break
    if not mlir_include:
        fail("@llvm_toolchain//:mlir_td_files holds no file under %s" % _MLIR_INCLUDE)
    for out_name, flags in ctx.attr.outs.items():
        out = ctx.actions.declare_file(out_name)
        outputs.append(out)
        args = ctx.actions.args()
        args.add_all(flags.split(" "))
        args.add("-I", mlir_include)
        for d in include_dirs.keys():
            args.add("-I", d)
        args.add(ctx.file.td_file)
        args.add("-o", out)
        ctx.actions.run(
            executable = ctx.executable._tblgen,
            arguments = [args],
            inputs = depset([ctx.file.td_file] + ctx.files.td_srcs + mlir_td),
            outputs = [out],
            mnemonic = "MlirTblgen",
            progress_message = "mlir-tblgen %s %s" % (flags, ctx.file.td_file.short_path),
        )
    return [DefaultInfo(files = depset(outputs))]

mlir_tblgen = rule(
    implementation = _mlir_tblgen_impl,
    attrs = {
        "td_file": attr.label(allow_single_file = [".td"], mandatory = True, doc = "The ODS file to run on."),
        "td_srcs": attr.label_list(allow_files = [".td"], doc = "ODS files it includes."),
        "includes": attr.string_list(doc = "Extra include directories (execroot-relative)."),
        "outs": attr.string_dict(mandatory = True, doc = "Output file -> mlir-tblgen flags (space-separated)."),
        "_tblgen": attr.label(default = "@llvm_toolchain//:mlir-tblgen", executable = True, cfg = "exec"),
        "_mlir_td": attr.label(default = "@llvm_toolchain//:mlir_td_files"),
    },
    doc = """Generates C++ (or Python) from an ODS file.

Example:
    mlir_tblgen(
        name = "ops_inc",
        td_file = "include/hk/HKOps.td",
        td_srcs = glob(["include/hk/*.td"]),
        outs = {
            "include/hk/HKOps.h.inc": "-gen-op-decls",
            "include/hk/HKOps.cpp.inc": "-gen-op-defs",
        },
    )
""",
)
