"""@hk_targets: the target facts of hk/target/targets.json, readable from Starlark."""

def _hk_targets_impl(rctx):
    facts = json.decode(rctx.read(Label("//hk/target:targets.json")))
    archs = sorted(facts["targets"].keys())
    fnuz = [arch for arch in archs if facts["targets"][arch]["fp8_format"] == "fnuz"]
    fp8 = [arch for arch in archs if facts["targets"][arch]["fp8_format"]]
    rctx.file("BUILD.bazel", "")
    rctx.file("targets.bzl", """# Generated from hk/target/targets.json.
ARCHS = {archs}
DEFAULT_ARCH = {default}
# The architectures whose fp8 format is FNUZ, and those with an fp8 matrix instruction.
FNUZ_ARCHS = {fnuz}
FP8_ARCHS = {fp8}
""".format(archs = repr(archs), default = repr(facts["default"]), fnuz = repr(fnuz), fp8 = repr(fp8)))

hk_targets_repository = repository_rule(
    implementation = _hk_targets_impl,
    doc = """Exposes the architectures of hk/target/targets.json as `@hk_targets//:targets.bzl`
(ARCHS, DEFAULT_ARCH, FNUZ_ARCHS, those whose fp8 format is FNUZ, and FP8_ARCHS, those with an
fp8 matrix instruction in either format).

The JSON file is the one source of target facts; Python reads it directly, C++ through a
generated header, Starlark through this repository.

Example:
    hk_targets_repository(name = "hk_targets")
""",
)
