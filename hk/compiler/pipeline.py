"""hk-kernel-pipeline and the C++ translation, from Python, with hk errors."""

from hk.compiler import diagnostics as diag


def _native():
    from hk._mlir import _hk

    return _hk


def verify(module):
    ok, diagnostics = _native().verify(module.operation)
    if not ok:
        diag.raise_errors(diagnostics, "verification")


def run(module, arch, strict=False, derive_waits=True):
    """Runs the pipeline in place; returns its warnings; raises VerifyError on an error."""
    ok, diagnostics = _native().run_pipeline(module.operation, arch, strict, derive_waits)
    if not ok:
        diag.raise_errors(diagnostics, "hk-kernel-pipeline")
    return [d for d in diagnostics if d["severity"] == "warning"]


def translate(module, arch):
    ok, text, diagnostics = _native().translate_to_cpp(module.operation, arch)
    if not ok:
        diag.raise_errors(diagnostics, "the C++ translation")
    return text
