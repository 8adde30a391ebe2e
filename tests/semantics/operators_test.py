"""Every operator docs/language.md lists on values, on every pair of operand kinds and every
dtype it documents (operator_table.py), on the interpreter and, compiled, on the emulator for
gfx1100 and gfx950, against answers written out from docs/semantics.md: NaN, infinities, -0.0,
the largest and smallest floats, integer overflow and division by zero. Bit for bit, except
where the semantics leave room (the sign of a zero from max/min/relu; pow within a few ulp).

The table's kernels (the cases of one pair of kinds and dtype, in parts: operator_kernels.py)
are compiled in BATCHES code objects per architecture (a clang run each, at once) and each run
once per runner; a case checks its slots. An instruction the emulator lacks fails the cases of
its kernel.
"""

import concurrent.futures
import functools
import os

import pytest
import torch

from hk.errors import HKError, TraceError
from hk.runtime import toolchain
from tests.fuzz import harness
from tests.semantics import operator_kernels, operator_table
from tests.semantics.operator_table import FLOATS, MANTISSA, MIN_EXP

RUNNERS = ["interp", "emu-gfx1100", "emu-gfx950"]
BATCHES = 2  # code objects per architecture, compiled at once (the machines have two cores)
GROUPS = operator_kernels.groups()
GROUP_OF = {case.id: g for g in GROUPS for case in g.cases}
CASES = [case for g in GROUPS for case in g.cases]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return Runs(str(tmp_path_factory.mktemp("operators")))


class Runs:
    """The table's kernels, imported from files (errors name them), and each group's arguments
    after a run on each runner, computed on first use."""

    def __init__(self, directory):
        self.directory = directory

    @functools.cached_property
    def kernels(self):
        kernels = {}
        for g in GROUPS:
            path = os.path.join(self.directory, g.name + ".py")
            with open(path, "w") as f:
                f.write(g.source())
            kernels[g.name] = getattr(harness.load_module(path, g.name), g.name)
        return kernels

    @functools.lru_cache(maxsize=None)
    def compiled(self, arch):
        """Every group traced for `arch` and compiled in BATCHES code objects at once (one clang
        run each, in parallel): {name: (traced, path, metadata)}."""
        traced = [self.kernels[g.name].trace(arch) for g in GROUPS]
        batches = [traced[k::BATCHES] for k in range(BATCHES)]
        tc = toolchain.find()
        with concurrent.futures.ThreadPoolExecutor(BATCHES) as pool:
            paths = list(pool.map(lambda batch: harness.compile_batch(batch, arch, tc), batches))
        out = {}
        for batch, path in zip(batches, paths):
            metas = harness.batch_metadata(path)
            out.update({t.name: (t, path, metas) for t in batch})
        return out

    @functools.lru_cache(maxsize=None)
    def results(self, group_name, runner):
        """The group's arguments after its launches on `runner`."""
        group = next(g for g in GROUPS if g.name == group_name)
        args = group.arguments()
        for launch in range(group.launches):
            call = args + group.scalar_arguments(launch)
            if runner == "interp":
                harness.run_interp(self.kernels[group.name].trace("gfx1100"), (1, 1, 1), call)
                continue
            traced, path, metas = self.compiled(runner.split("-")[1])[group.name]
            harness.run_compiled(traced, path, metas, (1, 1, 1), call)
        return args


def _ulp(x, dtype):
    """The spacing of `dtype`'s values at |x|."""
    exp = max(torch.frexp(torch.tensor(abs(x), dtype=torch.float64)).exponent.item() - 1,
              MIN_EXP[dtype] + MANTISSA[dtype] - 1)
    return 2.0 ** (exp - (MANTISSA[dtype] - 1))


def mismatches(got, want, row, dtype):
    """Indices where `got` is not `want` as the row's semantics require."""
    if dtype not in FLOATS:
        return (got != want).nonzero().tolist()
    g, w = got.double(), want.double()
    nan = torch.isnan(g) & torch.isnan(w)
    width = {1: torch.int8, 2: torch.int16, 4: torch.int32}[got.element_size()]
    same = nan | (got.view(width) == want.view(width))
    if row.zero_sign_open:
        same |= (g == 0) & (w == 0)
    if row.approx:  # a few ulp of fp32, or one of a narrower dtype, at the answer
        finite = torch.isfinite(w) & torch.isfinite(g)
        tol = torch.tensor([max(4 * _ulp(v, "fp32"), _ulp(v, dtype)) for v in w.flatten().tolist()],
                           dtype=torch.float64).reshape(w.shape)
        same |= finite & ((g - w).abs() <= tol)
    return (~same).nonzero().tolist()


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_operator(runs, runner, case):
    group = GROUP_OF[case.id]
    args = runs.results(group.name, runner)
    pairs = group.operand_pairs()
    problems = []
    for slot in [s for s in group.slots if s.case is case]:
        got, want = group.result(args, slot), operator_kernels.expected(group, slot)
        bad = mismatches(got, want, case.row, slot.out)
        for index in bad[:4]:
            operands = _operands(slot, _at(pairs, index))
            problems.append("%s: %s on %s gives %r, expected %r" % (
                slot.id, slot.expr, operands[:1 if case.row.unary else 2], got[tuple(index)].item(),
                want[tuple(index)].item()))
        if len(bad) > 4:
            problems.append("%s: %d more" % (slot.id, len(bad) - 4))
    assert problems == [], "\n".join(problems)


def _at(pairs, index):
    return pairs[index[0]] if len(index) == 1 else pairs[index[0]][index[1]]


def _operands(slot, pair):
    """The operands of one element, a Python constant as the compute type has it."""
    number = slot.number
    if number is not None and slot.case.dtype in FLOATS:
        number = operator_table.f32(float(number))
    return [number if x is None else x for x in pair]


def test_the_table_covers_every_documented_operator():
    rows = {row.name for row in operator_table.TABLE}
    for name in ("add", "sub", "mul", "div", "pow", "floordiv", "mod", "and", "or", "xor", "shl", "shr",
                 "lt", "le", "gt", "ge", "eq", "ne", "neg", "where", "hk.maximum", "hk.minimum"):
        assert name in rows
    assert {"to_" + d for d in operator_table.ALL} <= rows
    # Every row has a case for each pair of kinds it lists, and every kind and dtype appears.
    for row in operator_table.TABLE:
        listed = {(k,) if row.unary else k for k in row.kinds}
        assert {c.kinds for c in CASES if c.row is row} == listed, row.name
    assert {k for c in CASES for k in c.kinds} == {"tile", "vector", "scalar", "number"}
    assert {c.dtype for c in CASES} == set(operator_table.ALL)


# What the language does not document is refused at its line, with what to do -----------------

REFUSED = [
    ("v < w", "comparisons take register tiles, not vectors"),
    ("v != 1.0", "comparisons take register tiles, not vectors"),
    ("n / n", "/ is not defined on i32 scalars"),
    ("f // 2.0", "// is not defined on f32 scalars"),
    ("f % 2.0", "% is not defined on f32 scalars"),
    ("f & f", "& is not defined on f32 scalars"),
    ("f ** 2.0", "** takes register tiles and vectors"),
    ("n + 0.5", "cannot combine the integer device value with the float 0.5"),
    ("t8 & t8", "& is defined on i32 tiles and vectors"),
    ("hk.math.pow(ti, ti)", "hk.math.pow needs a floating-point tile"),
]


@pytest.mark.parametrize("expr,message", REFUSED, ids=[e for e, _ in REFUSED])
def test_an_undocumented_combination_is_refused_at_its_line(tmp_path, expr, message):
    index = [e for e, _ in REFUSED].index(expr)
    source = "\n".join([
        "import hk", "", "",
        "@hk.kernel(grid=(1,))",
        "def refused(x: hk.Tensor[hk.fp32], i8: hk.Tensor[hk.i8], i32: hk.Tensor[hk.i32], n: int, f: float):",
        '    v, w = x[0, 0, 0, 0].load(hk.RV(hk.fp32, 16)), x[0, 0, 1, 0].load(hk.RV(hk.fp32, 16))',
        "    t8, ti = i8[0, 0, 0, 0].load(hk.RT(hk.i8, 16, 16)), i32[0, 0, 0, 0].load(hk.RT(hk.i32, 16, 16))",
        "    r = %s" % expr,
        ""])
    path = tmp_path / "refused.py"
    path.write_text(source)
    kernel = harness.load_module(str(path), "refused_%d" % index).refused
    with pytest.raises(HKError) as info:
        kernel.trace("gfx1100")
    assert isinstance(info.value, TraceError), info.value
    assert message in str(info.value)
    assert (info.value.location.file, info.value.location.line) == (str(path), 8)
    assert info.value.hint
