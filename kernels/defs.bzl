"""Bazel rules for DSL kernels: hk_kernel traces, translates and compiles; hk_gate_test gates.

    load("//kernels:defs.bzl", "hk_gate_test", "hk_kernel")

    hk_kernel(
        name = "rmsnorm",
        src = "rmsnorm.py",          # defines an @hk.kernel
        kernel = "rmsnorm",          # its name in that file
        constexprs = {"D": "1024"},
        divisors = {"x": "64"},      # the specialization for 128-byte aligned rows
    )

    hk_gate_test(name = "rmsnorm_gate", kernel = ":rmsnorm")

Each kernel yields <name>.<arch>.mlir (the hk module after the passes), <name>.<arch>.cpp and
<name>.<arch>.co, for the architecture `--config=<arch>` selects, each a cached action; editing
one kernel's file re-runs only its actions.
"""

load("//toolchains:hip.bzl", "CodeObjectInfo", "HIP_TOOL_ATTRS", "hip_compile_action", "selected_arch")

def _hk_kernel_impl(ctx):
    arch = ctx.attr.arch or selected_arch(ctx)
    base = "%s.%s" % (ctx.attr.basename or ctx.label.name, arch)
    mlir = ctx.actions.declare_file(base + ".mlir")
    cpp = ctx.actions.declare_file(base + ".cpp")
    co = ctx.actions.declare_file(base + ".co")

    args = ctx.actions.args()
    args.add("--src", ctx.file.src)
    args.add("--kernel", ctx.attr.kernel or ctx.label.name)
    args.add("--arch", arch)
    for k, v in sorted(ctx.attr.constexprs.items()):
        args.add("--constexpr", "%s=%s" % (k, v))
    for k, v in sorted(ctx.attr.divisors.items()):
        args.add("--divisor", "%s=%s" % (k, v))
    args.add("--mlir_out", mlir)
    args.add("--cpp_out", cpp)
    ctx.actions.run(
        executable = ctx.executable._trace,
        arguments = [args],
        inputs = [ctx.file.src] + ctx.files.deps,
        outputs = [mlir, cpp],
        mnemonic = "HkTrace",
        progress_message = "Tracing %s:%s for %s" % (ctx.file.src.short_path, ctx.attr.kernel or ctx.label.name, arch),
    )

    # The tile library's include directory: the prefix of its headers' paths up to hk/include.
    headers = ctx.files._headers
    path = headers[0].path
    include = path[:path.find("hk/include/") + len("hk/include")]
    hip_compile_action(ctx, cpp, co, arch, hdrs = headers, include_dirs = [include])
    return [
        DefaultInfo(files = depset([mlir, cpp, co]), runfiles = ctx.runfiles(files = [mlir, cpp, co])),
        CodeObjectInfo(code_object = co, arch = arch),
    ]

_ATTRS = dict(HIP_TOOL_ATTRS)
_ATTRS.update({
    "src": attr.label(allow_single_file = [".py"], mandatory = True, doc = "The Python file defining the kernel."),
    "kernel": attr.string(doc = "The kernel's name in `src`; default: the target's name."),
    "constexprs": attr.string_dict(doc = "Compile-time constants, NAME -> Python literal."),
    "divisors": attr.string_dict(doc = "What is known of tensor parameters, NAME -> divisor " +
                                       "(see hk.types.divisor_of); default 1."),
    "deps": attr.label_list(allow_files = [".py"], doc = "Python files `src` imports."),
    "arch": attr.string(doc = "The architecture; empty means the one --config=<arch> selects."),
    "basename": attr.string(doc = "Outputs are <basename>.<arch>.*; default: the target's name."),
    "_trace": attr.label(default = "//hk/compiler:trace_tool", executable = True, cfg = "exec"),
    "_headers": attr.label(default = "//hk/include:headers"),
})

hk_kernel = rule(
    implementation = _hk_kernel_impl,
    attrs = _ATTRS,
    doc = """Traces a DSL kernel, translates it to C++ and compiles it for the selected arch.

Outputs <name>.<arch>.mlir, .cpp and .co; provides CodeObjectInfo.

Example:
    hk_kernel(name = "add", src = "add.py", constexprs = {"BLOCK": "64"})
""",
)

def hk_gate_test(name, kernel, warps = 1, max_vgprs = None, min_occupancy = None, **kwargs):
    """The resource gate and the wait gate on a kernel's code object, as a test.

    Args:
      name: the test's name.
      kernel: the hk_kernel (or hip_code_object) target.
      warps: waves per workgroup, for the occupancy figure.
      max_vgprs: refuse more VGPRs than this.
      min_occupancy: refuse fewer waves per SIMD than this.
      **kwargs: passed to py_test (tags, size, ...).

    Example:
        hk_gate_test(name = "add_gate", kernel = ":add")
    """
    args = ["--warps=%d" % warps, "--objdump=$(rootpath @llvm_toolchain//:llvm-objdump)"]
    if max_vgprs != None:
        args.append("--max_vgprs=%d" % max_vgprs)
    if min_occupancy != None:
        args.append("--min_occupancy=%d" % min_occupancy)
    native.py_test(
        name = name,
        srcs = ["//hk/runtime:cocheck.py"],
        main = "//hk/runtime:cocheck.py",
        args = args + ["$(rootpaths %s)" % kernel],
        data = [kernel, "@llvm_toolchain//:llvm-objdump"],
        deps = ["//hk/runtime"],
        **kwargs
    )
