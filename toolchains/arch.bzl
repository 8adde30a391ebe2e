"""The target architecture as a Starlark build setting: `--//toolchains:arch=gfx1100`.

.bazelrc maps `--config=gfx1100|gfx1201|gfx942|gfx950` onto it; rules that compile for the GPU
read it through the `ArchInfo` provider of `//toolchains:arch`.
"""

load("@hk_targets//:targets.bzl", "ARCHS")

ArchInfo = provider(
    doc = "The AMDGPU architecture kernels are compiled for.",
    fields = {"arch": "(string) the gfx name, e.g. \"gfx1100\""},
)

def _arch_flag_impl(ctx):
    arch = ctx.build_setting_value
    if arch not in ARCHS:
        fail("--//toolchains:arch=%s is not a target hk-dsl knows; use one of %s (or --config=<arch>)" % (arch, ", ".join(ARCHS)))
    return [ArchInfo(arch = arch)]

arch_flag = rule(
    implementation = _arch_flag_impl,
    build_setting = config.string(flag = True),
    doc = """A string flag holding one of the architectures of hk/target/targets.json.

Example:
    arch_flag(name = "arch", build_setting_default = "gfx1100")
""",
)
