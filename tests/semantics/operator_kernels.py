"""The operator table (operator_table.py) as kernels: the cases of one pair of operand kinds in
one dtype, computed by a kernel (or a few, MAX_SLOTS apart) into slots of its outputs, with the
inputs it reads and, per slot, the answer the table writes out.

The operands cover every pair of a dtype's sixteen VALUES (and the NUMBERS each operator meets):
a tile operand is a 16 x 16 tile of them, a vector one row of it (a row per iteration of a
device loop when two vectors meet). A device scalar beside a tile or vector is a kernel argument,
one launch per value; two device scalars are loaded (load_scalar) in a device loop over them.
"""

import dataclasses
import math

import torch

from tests.semantics import operator_table as table
from tests.semantics.operator_table import FLOATS, SENTINEL, TORCH, VALUES

# The name each kind's operand has in the kernel: (left, right).
OPERANDS = {
    ("tile", "tile"): ("x", "y"), ("tile", "scalar"): ("y", "p"), ("scalar", "tile"): ("p", "y"),
    ("tile", "number"): ("y", None), ("number", "tile"): (None, "y"),
    ("vector", "vector"): ("v", "w"), ("vector", "scalar"): ("w", "p"), ("scalar", "vector"): ("p", "w"),
    ("vector", "number"): ("w", None), ("number", "vector"): (None, "w"),
    ("scalar", "scalar"): ("p", "q"), ("scalar", "number"): ("p", None), ("number", "scalar"): (None, "p"),
    ("tile",): ("y",), ("vector",): ("w",), ("scalar",): ("p",),
}


def literal(n):
    """`n` as Python source; a negative one in parentheses (-0.0 ** y is -(0.0 ** y))."""
    if isinstance(n, float) and not math.isfinite(n):
        text = 'float("nan")' if n != n else '%sfloat("inf")' % ("-" if n < 0 else "")
    else:
        text = repr(n)
    return "(%s)" % text if text.startswith("-") else text


@dataclasses.dataclass
class Slot:
    """One result a kernel stores: `index` of output `out` (a dtype), holding `expr`."""

    case: object
    number: object        # the Python constant operand, if any
    form: str             # "value", or "if" (a scalar comparison as an `if` condition)
    out: str
    index: int = 0
    expr: str = ""

    @property
    def id(self):
        extra = "" if self.number is None else " with %s" % literal(self.number)
        return "%s%s%s" % (self.case.id, extra, " (if)" if self.form == "if" else "")


class Group:
    """A kernel of one pair of operand kinds in one dtype: some of its cases (part `part`)."""

    def __init__(self, kinds, dtype, cases, part=0):
        self.kinds, self.dtype, self.cases = kinds, dtype, cases
        self.name = "ops_%s_%s_%d" % ("_".join(kinds), dtype, part)
        self.scalar_only = all(k in ("scalar", "number") for k in kinds)
        # The device scalar's dtype: the group's own when only scalars meet, else the one that
        # combines with the tile's or vector's elements.
        self.sd = dtype if self.scalar_only else table.scalar_dtype(dtype)
        self.slots = []
        counts = {}
        for case in cases:
            for slot in _slots(case, self):
                slot.index = counts.get(slot.out, 0)
                counts[slot.out] = slot.index + 1
                self.slots.append(slot)
        self.outputs = sorted(counts.items(), key=lambda kv: table.ALL.index(kv[0]))

    # The kernel ------------------------------------------------------------------------------------

    @property
    def launches(self):
        """A tile or vector meets each of the sixteen scalar values in a launch of its own (as an
        argument p, stored at row j); everything else runs once."""
        return 16 if self.mixed_scalar else 1

    @property
    def mixed_scalar(self):
        return "scalar" in self.kinds and not self.scalar_only

    def source(self):
        k = self.kinds
        params = ["%s: hk.Tensor[hk.%s]" % (n, d) for n, d in self.inputs_spec()]
        params += ["o_%s: hk.Tensor[hk.%s]" % (d, d) for d, _ in self.outputs]
        if self.mixed_scalar:
            params += ["p: %s" % ("float" if self.sd == "fp32" else "int"), "j: int"]
        lines = ["import hk", "", "T = hk.RT(hk.%s, 16, 16)" % self.dtype, "V = hk.RV(hk.%s, 16)" % self.dtype,
                 "", "", "@hk.kernel(grid=(1,), name=%r)" % self.name,
                 "def %s(%s):" % (self.name, ", ".join(params))]
        body = []
        if self.scalar_only:  # a device loop over the scalars' values, loaded from tensors
            n = 256 if k == ("scalar", "scalar") else 16
            body.append("for j in hk.range(%d):" % n)
            body.append("    p = a.load_scalar(0, 0, 0, j)")
            if k == ("scalar", "scalar"):
                body.append("    q = b.load_scalar(0, 0, 0, j)")
            body += ["    " + s for s in self._stores("j", scalar=True)]
        elif k == ("vector", "vector"):  # one row of pairs per iteration
            body.append("for j in hk.range(16):")
            body.append("    v = a[0, 0, j, 0].load(V)")
            body.append("    w = b[0, 0, j, 0].load(V)")
            body += ["    " + s for s in self._stores("j")]
        else:
            if k == ("tile", "tile"):
                body.append("x = a[0, 0, 0, 0].load(T)")
            body.append(("w = b[0, 0, 0, 0].load(V)" if "vector" in k else "y = b[0, 0, 0, 0].load(T)"))
            body += self._stores("j" if self.mixed_scalar else "0")
        return "\n".join(lines + ["    " + s for s in body]) + "\n"

    def _stores(self, j, scalar=False):
        out = []
        for s in self.slots:
            if s.form == "if":
                one, zero = ("1.0", "0.0") if s.out in FLOATS else ("1", "0")
                out += ["if %s:" % s.expr,
                        "    o_%s.store_scalar(0, 0, %d, %s, %s)" % (s.out, s.index, j, one),
                        "else:",
                        "    o_%s.store_scalar(0, 0, %d, %s, %s)" % (s.out, s.index, j, zero)]
            elif scalar:
                out.append("o_%s.store_scalar(0, 0, %d, %s, %s)" % (s.out, s.index, j, s.expr))
            else:
                out.append("o_%s[%d, 0, %s, 0] = %s" % (s.out, s.index, j, s.expr))
        return out

    # Arguments -------------------------------------------------------------------------------------

    def inputs_spec(self):
        """(name, dtype) of the input tensors."""
        k = self.kinds
        if self.scalar_only:
            return [("a", self.sd)] + ([("b", self.sd)] if k == ("scalar", "scalar") else [])
        return ([("a", self.dtype)] if k in (("tile", "tile"), ("vector", "vector")) else []) + [("b", self.dtype)]

    def arguments(self):
        """Fresh inputs and outputs (outputs filled with a value no slot holds)."""
        values = VALUES[self.dtype]
        tensors = {}
        if self.kinds == ("scalar", "scalar"):
            tensors["a"] = _tensor([values[i // 16] for i in range(256)], self.sd)
            tensors["b"] = _tensor([values[i % 16] for i in range(256)], self.sd)
        elif self.scalar_only:
            tensors["a"] = _tensor(values, self.sd)
        else:
            tensors["a"] = _tensor([[values[i]] * 16 for i in range(16)], self.dtype)
            tensors["b"] = _tensor([values] * 16, self.dtype)
        args = [tensors[n] for n, _ in self.inputs_spec()]
        for d, count in self.outputs:
            args.append(torch.full((count,) + self.slot_shape(), 99, dtype=TORCH[d]))
        return args

    def scalar_arguments(self, launch):
        """The scalar arguments of launch `launch`: the scalar's value and its row."""
        return [VALUES[self.sd][launch], launch] if self.mixed_scalar else []

    def slot_shape(self):
        k = self.kinds
        if self.scalar_only:
            return (256,) if k == ("scalar", "scalar") else (16,)
        if "tile" in k and "scalar" in k:
            return (256, 16)
        if "vector" in k and not ("scalar" in k or k == ("vector", "vector")):
            return (1, 16)
        return (16, 16)

    def result(self, args, slot):
        """Slot `slot`'s values among the arguments after a run."""
        outputs = args[len(self.inputs_spec()):len(self.inputs_spec()) + len(self.outputs)]
        index = [d for d, _ in self.outputs].index(slot.out)
        return outputs[index][slot.index]

    def operand_pairs(self):
        """The (left, right) operand values each element of a slot computes from (None: the
        slot's number), as nested lists of the slot's shape."""
        v, s = VALUES[self.dtype], VALUES[self.sd]
        k = self.kinds
        if k == ("scalar", "scalar"):
            return [(v[i // 16], v[i % 16]) for i in range(256)]
        if self.scalar_only:
            return [(x, None) if k[0] == "scalar" else (None, x) for x in v]
        if "scalar" in k:  # row (j, i), column c: the scalar's value j and the element's c
            rows = 16 if "vector" in k else 256
            pair = (lambda e, sc: (e, sc)) if k[0] != "scalar" else (lambda e, sc: (sc, e))
            return [[pair(v[c], s[r // (rows // 16)]) for c in range(16)] for r in range(rows)]
        if k in (("tile", "tile"), ("vector", "vector")):
            return [[(v[i], v[j]) for j in range(16)] for i in range(16)]
        rows = 1 if "vector" in k else 16
        return [[(x, None) if k[0] != "number" else (None, x) for x in v] for _ in range(rows)]


def _tensor(values, dtype):
    return torch.tensor(values, dtype=torch.float64 if dtype in FLOATS else torch.int64).to(TORCH[dtype])


def _slots(case, group):
    """The slots of one case: one per number it meets; scalar comparisons also as an `if`."""
    row, kinds = case.row, case.kinds
    if "number" in kinds:
        pool = table.numbers(row, group.sd if group.scalar_only else case.dtype,
                             "scalar" if group.scalar_only else "tile")
        if row.fn == "where":  # selected as an element: only the numbers the dtype holds
            pool = [n for n in pool if _holds(case.dtype, n)]
        numbers = pool
    else:
        numbers = [None]
    forms = ["value", "if"] if row.fn in table.COMPARE_FNS and group.scalar_only else ["value"]
    out = []
    for n in numbers:
        for form in forms:
            if row.unary:
                a, b = OPERANDS[kinds][0], None
            else:
                a, b = (literal(n) if name is None else name for name in OPERANDS[kinds])
            expr = row.template.format(a=a, b=b)
            out_dtype = _out_dtype(case, group)
            if row.fn in table.COMPARE_FNS:
                if group.scalar_only:
                    expr = expr if form == "if" else "(%s).to(hk.%s)" % (expr, group.sd)
                else:
                    held = a if kinds[0] in ("tile", "vector") else b
                    expr = "hk.where(%s, %s, %d)" % (expr, held, SENTINEL)
            out.append(Slot(case, n, form, out_dtype, expr=expr))
    return out


def _out_dtype(case, group):
    if case.row.fn == "to":
        return case.row.name[len("to_"):]
    return group.sd if group.scalar_only else case.dtype


def _holds(dtype, n):
    got = table.to_dtype(n, dtype)
    return (got != got and n != n) or (got == n and math.copysign(1, got) == math.copysign(1, n))


# Answers -----------------------------------------------------------------------------------------

def expected(group, slot):
    """The slot's answer, from the table's rules alone, as a tensor of the slot's dtype."""
    flat = []
    pairs = group.operand_pairs()
    rows = pairs if isinstance(pairs[0], list) else [pairs]
    for r in rows:
        flat.append([answer(slot, a, b) for a, b in r])
    values = flat if isinstance(pairs[0], list) else flat[0]
    return _tensor(values, slot.out)


def answer(slot, a, b):
    """One element of the slot: its operator on `a` and `b` (None: the slot's number)."""
    case, row = slot.case, slot.case.row
    element = case.dtype
    is_float = element in FLOATS
    number = slot.number if not is_float or slot.number is None else table.f32(float(slot.number))
    a, b = (number if a is None else a), (number if b is None else b)
    if row.fn == "to":
        return table.to_dtype(a, slot.out)
    if row.fn in table.UNARY_FNS:
        return table.to_dtype(table.UNARY_FNS[row.fn](a, is_float), slot.out)
    if row.fn == "where":
        return a if a > b else table.to_dtype(b, slot.out)
    if row.fn in table.COMPARE_FNS:
        holds = table.COMPARE_FNS[row.fn](a, b)
        if "tile" in case.kinds or "vector" in case.kinds:
            held = a if case.kinds[0] in ("tile", "vector") else b
            return held if holds else table.to_dtype(SENTINEL, slot.out)
        return table.to_dtype(int(holds), slot.out)
    fns = table.FLOAT_FNS if is_float else table.INT_FNS
    return table.to_dtype(fns[row.fn](a, b), slot.out)


# Slots per kernel: more, and the constants a device loop keeps (the scalars' addresses) outgrow
# the SGPRs, or the tiles the VGPRs. i8 kernels hold one case each: their 32-bit arithmetic,
# saturated, compiles to 16-bit instructions the emulator may lack, and a kernel it cannot run
# skips only the cases in it.
MAX_SLOTS = {"scalar": 16, "other": 32, "i8": 1}


def groups():
    """Every kernel of the table, in a fixed order: the cases of one pair of kinds and dtype, in
    parts of at most MAX_SLOTS slots."""
    by_group = {}
    for case in table.cases():
        by_group.setdefault((case.kinds, case.dtype), []).append(case)
    out = []
    for (kinds, dtype), cases in by_group.items():
        whole = Group(kinds, dtype, cases)
        limit = MAX_SLOTS["scalar" if whole.scalar_only else "i8" if dtype == "i8" else "other"]
        parts, count = [[]], 0
        for case in cases:
            n = sum(1 for s in whole.slots if s.case is case)
            if parts[-1] and count + n > limit:
                parts.append([])
                count = 0
            parts[-1].append(case)
            count += n
        out += [Group(kinds, dtype, part, k) for k, part in enumerate(parts)]
    return out
