"""@hk_targets: the target facts of hk/target/targets.json, readable from Starlark."""

def _hk_targets_impl(rctx):
    facts = json.decode(rctx.read(Label("//hk/target:targets.json")))
    archs = sorted(facts["targets"].keys())
    rctx.file("BUILD.bazel", "")
    rctx.file("targets.bzl", """# Generated from hk/target/targets.json.
ARCHS = {archs}
DEFAULT_ARCH = {default}
""".format(archs = repr(archs), default = repr(facts["default"])))

hk_targets_repository = repository_rule(
    implementation = _hk_targets_impl,
    doc = """Exposes the architectures of hk/target/targets.json as `@hk_targets//:targets.bzl`.

The JSON file is the one source of target facts; Python reads it directly, C++ through a
generated header, Starlark through this repository.

Example:
    hk_targets_repository(name = "hk_targets")
""",
)
