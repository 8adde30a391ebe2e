"""Every float predicate of arith.cmpf the C++ translation takes, on the interpreter and, compiled,
on the emulator for gfx1100 and gfx950: ordered ones are false with a NaN operand, unordered ones
true (the DSL emits six of them, `!=` as une; the rest reach hk from hand-written IR)."""

import math

import pytest
import torch

import hk
from hk.dsl.kernel import Param, TracedKernel
from hk.runtime import toolchain
from tests.fuzz import harness

PREDICATES = {
    "oeq": lambda a, b: a == b, "ogt": lambda a, b: a > b, "oge": lambda a, b: a >= b,
    "olt": lambda a, b: a < b, "ole": lambda a, b: a <= b, "one": lambda a, b: a < b or a > b,
    "ueq": lambda a, b: not (a < b or a > b), "ugt": lambda a, b: not a <= b, "uge": lambda a, b: not a < b,
    "ult": lambda a, b: not a >= b, "ule": lambda a, b: not a > b, "une": lambda a, b: a != b,
}
PAIRS = [(math.nan, 1.0), (1.0, math.nan), (math.nan, math.nan), (1.0, 1.0), (1.0, 2.0), (2.0, 1.0),
         (-0.0, 0.0), (math.inf, math.inf), (-math.inf, math.inf), (math.nan, math.inf)]


def kernel(arch):
    """A kernel storing, for its two float arguments, every predicate (0 or 1) in turn."""
    from hk._mlir import ir

    body = ["    %%c%d = arith.constant %d : index" % (k, k) for k in range(len(PREDICATES))]
    for k, name in enumerate(PREDICATES):
        body += ["    %%p%d = arith.cmpf %s, %%a, %%b : f32" % (k, name),
                 "    %%i%d = arith.extui %%p%d : i1 to i32" % (k, k),
                 "    hk.store_scalar %%i%d, %%o[%%c0, %%c0, %%c0, %%c%d] : i32, !hk.gl<i32>" % (k, k)]
    text = "\n".join(["module {",
                      "  func.func @predicates(%o: !hk.gl<i32>, %a: f32, %b: f32) "
                      "attributes {hk.kernel, hk.warps = 1 : i32} {"] + body + ["    return", "  }", "}"])
    module = ir.Module.parse(text, ir.Context())
    params = [Param("o", hk.Tensor[hk.i32]), Param("a", hk.fp32), Param("b", hk.fp32)]
    return TracedKernel("predicates", arch, {}, params, 1, module, [])


@pytest.mark.parametrize("runner", ["interp", "emu-gfx1100", "emu-gfx950"])
def test_ordered_predicates_are_false_with_nan_and_unordered_ones_true(runner):
    traced = kernel(runner.split("-")[-1] if runner != "interp" else "gfx1100")
    if runner != "interp":
        path = harness.compile_batch([traced], traced.arch, toolchain.find())
        metas = harness.batch_metadata(path)
    for a, b in PAIRS:
        out = torch.full((len(PREDICATES),), 7, dtype=torch.int32)
        if runner == "interp":
            harness.run_interp(traced, (1, 1, 1), [out, a, b])
        else:
            harness.run_compiled(traced, path, metas, (1, 1, 1), [out, a, b])
        expected = [int(fn(a, b)) for fn in PREDICATES.values()]
        assert out.tolist() == expected, "%s on (%r, %r): %s" % (
            runner, a, b, dict(zip(PREDICATES, out.tolist())))
