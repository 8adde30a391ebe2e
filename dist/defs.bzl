"""py_wheel: a Python wheel of Bazel targets' files, built reproducibly by dist/wheel.py.

A wheel's name carries its interpreter: `python_tag`/`abi_tag` are "py3"/"none" for pure Python,
and "cp311"/"cp311" (from @hk_python//:defs.bzl, the interpreter the extensions were compiled
for) for one holding native extensions. Building for another CPython is building with another
interpreter: `HK_BASE_PYTHON=python3.12 ./bazelw build //dist:wheels` gives a cp312 wheel.
"""

def _in_wheel(f, packages, strip_prefix):
    """The path of `f` inside the wheel, or None when it is not one of `packages`."""
    if f.owner and f.owner.workspace_name:
        return None  # external repositories (toolchains, the interpreter) never ship
    path = f.short_path
    if strip_prefix:
        if not path.startswith(strip_prefix + "/"):
            return None
        path = path[len(strip_prefix) + 1:]
    for package in packages:
        if path.startswith(package + "/"):
            return path
    return None

def _py_wheel_impl(ctx):
    mapping = {}
    transitive = []
    for dep in ctx.attr.deps:
        transitive.append(dep[DefaultInfo].files)
        transitive.append(dep[DefaultInfo].default_runfiles.files)
    for f in depset(transitive = transitive).to_list():
        path = _in_wheel(f, ctx.attr.packages, ctx.attr.strip_prefix)
        if path and not path.endswith(".pyc"):
            mapping[path] = f
    for target, path in ctx.attr.files.items():
        for f in target.files.to_list():
            mapping[path] = f

    name = "%s-%s-%s-%s-%s.whl" % (
        ctx.attr.distribution.replace("-", "_"),
        ctx.attr.version,
        ctx.attr.python_tag,
        ctx.attr.abi_tag,
        ctx.attr.platform_tag,
    )
    out = ctx.actions.declare_file(name)
    manifest = ctx.actions.declare_file(ctx.label.name + ".files")
    ctx.actions.write(manifest, "".join([
        "%s\t%s\n" % (path, mapping[path].path)
        for path in sorted(mapping.keys())
    ]))

    args = ctx.actions.args()
    args.add("--out", out)
    args.add("--files", manifest)
    args.add("--distribution", ctx.attr.distribution)
    args.add("--version", ctx.attr.version)
    args.add("--tag", "%s-%s-%s" % (ctx.attr.python_tag, ctx.attr.abi_tag, ctx.attr.platform_tag))
    args.add("--summary", ctx.attr.summary)
    args.add("--requires_python", ctx.attr.requires_python)
    args.add_all(ctx.attr.requires, before_each = "--requires")
    for extra, requirements in ctx.attr.extra_requires.items():
        for requirement in requirements:
            args.add("--extra", "%s:%s" % (extra, requirement))
    for group, entries in ctx.attr.entry_points.items():
        for entry in entries:
            args.add("--entry_point", "%s:%s" % (group, entry))
    inputs = [manifest] + mapping.values()
    if ctx.file.description:
        args.add("--description", ctx.file.description)
        inputs.append(ctx.file.description)
    ctx.actions.run(
        outputs = [out],
        inputs = inputs,
        executable = ctx.executable._tool,
        arguments = [args],
        mnemonic = "PyWheel",
        progress_message = "Packing %s" % name,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

py_wheel = rule(
    implementation = _py_wheel_impl,
    doc = """A wheel of the files of `deps` (their sources, data and runfiles) under `packages`.

Example:
    py_wheel(
        name = "hk_wheel",
        distribution = "hk-dsl",
        version = "0.1.0",
        python_tag = PYTHON_TAG,
        abi_tag = PYTHON_TAG,
        platform_tag = "manylinux_2_36_x86_64",
        deps = ["//hk", "//hk/include:headers"],
        packages = ["hk"],
        entry_points = {"console_scripts": ["hk-check = hk.compiler.check_tool:entry"]},
    )
""",
    attrs = {
        "distribution": attr.string(mandatory = True, doc = "(string) the distribution's name, e.g. \"hk-dsl\""),
        "version": attr.string(mandatory = True, doc = "(string) its version"),
        "python_tag": attr.string(default = "py3", doc = "(string) \"py3\", or \"cp311\" for native extensions"),
        "abi_tag": attr.string(default = "none", doc = "(string) \"none\", or the CPython ABI, e.g. \"cp311\""),
        "platform_tag": attr.string(default = "any", doc = "(string) \"any\", or e.g. \"manylinux_2_36_x86_64\""),
        "deps": attr.label_list(doc = "(labels) targets whose files and runfiles are packed"),
        "packages": attr.string_list(mandatory = True, doc = "(strings) top-level packages kept, e.g. [\"hk\"]"),
        "strip_prefix": attr.string(doc = "(string) a directory of the workspace the packages are under"),
        "files": attr.label_keyed_string_dict(allow_files = True, doc = "(label: path) more files, each at a path of the wheel"),
        "requires": attr.string_list(doc = "(strings) Requires-Dist entries"),
        "extra_requires": attr.string_list_dict(doc = "(extra: strings) requirements of each extra"),
        "requires_python": attr.string(default = ">=3.10", doc = "(string) Requires-Python"),
        "entry_points": attr.string_list_dict(doc = "(group: [\"name = module:function\"]) entry points"),
        "summary": attr.string(doc = "(string) the one-line summary"),
        "description": attr.label(allow_single_file = True, doc = "(label) the long description (Markdown)"),
        "_tool": attr.label(default = "//dist:wheel", executable = True, cfg = "host"),
    },
)
