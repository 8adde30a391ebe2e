"""hip_code_object: compile HIP C++ into a linked AMDGPU code object with the hermetic toolchain.

The action runs hk.runtime.compile, the same compile path the JIT uses. `hip_compile_action`
is the action itself, for rules that produce their C++ first (hk_kernel).
"""

load("//toolchains:arch.bzl", "ArchInfo")

CodeObjectInfo = provider(
    doc = "A compiled AMDGPU code object.",
    fields = {
        "code_object": "(File) the linked ELF code object",
        "arch": "(string) the gfx architecture it was compiled for",
    },
)

# The implicit attributes an action that compiles HIP needs.
HIP_TOOL_ATTRS = {
    "_arch_flag": attr.label(default = "//toolchains:arch", providers = [ArchInfo]),
    "_compile": attr.label(default = "//hk/runtime:compile_tool", executable = True, cfg = "exec"),
    "_hip_clang": attr.label(default = "@rocm_device//:hip_clang", executable = True, cfg = "exec"),
    "_rocm": attr.label(default = "@rocm_device//:rocm"),
    "_rocm_version": attr.label(default = "@rocm_device//:rocm/share/hip/version", allow_single_file = True),
}

def selected_arch(ctx):
    """(string) the architecture `--config=<arch>` selects."""
    return ctx.attr._arch_flag[ArchInfo].arch

def hip_compile_action(ctx, src, out, arch, hdrs = [], include_dirs = [], defines = [], copts = []):
    """Registers the action compiling `src` into the code object `out` for `arch`.

    Args:
      ctx: the rule context (with HIP_TOOL_ATTRS among its attributes).
      src: (File) the HIP source.
      out: (File) the code object to write.
      arch: (string) the gfx architecture.
      hdrs: (list of File) headers the source includes.
      include_dirs: (list of string) include directories, execroot-relative.
      defines: (list of string) preprocessor definitions.
      copts: (list of string) extra compiler flags.
    """
    rocm_root = ctx.file._rocm_version.dirname.rpartition("/share/hip")[0]
    args = ctx.actions.args()
    args.add("--arch", arch)
    args.add("--out", out)
    for d in include_dirs:
        args.add("--include", d)
    for d in defines:
        args.add("--define", d)
    for c in copts:
        args.add("--copt", c)
    args.add(src)
    ctx.actions.run(
        executable = ctx.executable._compile,
        arguments = [args],
        inputs = depset([src] + hdrs + ctx.files._rocm),
        tools = [ctx.attr._hip_clang[DefaultInfo].files_to_run],
        outputs = [out],
        env = {
            "HK_CLANG": ctx.executable._hip_clang.path,
            "HK_ROCM_ROOT": rocm_root,
        },
        mnemonic = "HipCompile",
        progress_message = "Compiling %s for %s" % (src.short_path, arch),
    )

def _hip_code_object_impl(ctx):
    arch = ctx.attr.arch or selected_arch(ctx)
    out = ctx.actions.declare_file(ctx.attr.out or "%s.%s.co" % (ctx.label.name, arch))
    package = ctx.label.package
    hip_compile_action(
        ctx,
        ctx.file.src,
        out,
        arch,
        hdrs = ctx.files.hdrs,
        include_dirs = [("%s/%s" % (package, d)) if package else d for d in ctx.attr.includes],
        defines = ctx.attr.defines,
        copts = ctx.attr.copts,
    )
    return [
        DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out])),
        CodeObjectInfo(code_object = out, arch = arch),
    ]

_ATTRS = dict(HIP_TOOL_ATTRS)
_ATTRS.update({
    "src": attr.label(allow_single_file = [".hip", ".cpp", ".cc"], mandatory = True, doc = "The HIP source."),
    "hdrs": attr.label_list(allow_files = True, doc = "Headers the source includes."),
    "includes": attr.string_list(doc = "Include directories, relative to this package."),
    "defines": attr.string_list(doc = "Preprocessor definitions, NAME or NAME=VALUE."),
    "copts": attr.string_list(doc = "Extra compiler flags."),
    "arch": attr.string(doc = "The architecture; empty means the one --config=<arch> selects."),
    "out": attr.string(doc = "Output file name; default <name>.<arch>.co."),
})

hip_code_object = rule(
    implementation = _hip_code_object_impl,
    attrs = _ATTRS,
    doc = """Compiles one HIP source into a code object for one architecture.

Example:
    hip_code_object(
        name = "smoke",
        src = "smoke_kernel.hip",
        arch = "gfx942",   # or leave empty to follow --config=<arch>
    )
""",
)
