"""Control flow at trace time: what the AST rewrite turns `for`, `if` and `while` into.

Python values decide in Python (a loop over range(4) unrolls, an `if` on a constant runs one
branch); device values become scf.for, scf.if and scf.while carrying the names the body
assigns, each located at the user's statement.
"""

import builtins

from hk.dsl import builder as _b
from hk.dsl.values import UNDEFINED, Scalar, Value, _as_index, _Register, _Typed, scalar, wrap
from hk.errors import Location, TraceError




class range:  # noqa: A001 - hk.range mirrors Python's range
    """`for i in hk.range(start, stop, step, unroll=False)`: a device loop (scf.for).

    With unroll=True and Python-int bounds the loop unrolls at trace time instead. With
    unroll=N (an int of at least 2) it stays a device loop whose body the compiled kernel holds N
    times per iteration (the iterations left over run after it): in each copy `i % N` is a known
    constant, so an LDS buffer index like `i % 2` costs nothing.
    """

    def __init__(self, start, stop=None, step=1, *, unroll=False):
        if stop is None:
            start, stop = 0, start
        if not (unroll is True or unroll is False or (type(unroll) is int and unroll >= 1)):
            raise TraceError("hk.range's unroll is True, False or a copy count of at least 1, not %r"
                             % (unroll,))
        self.start, self.stop, self.step, self.unroll = start, stop, step, unroll

    def __iter__(self):
        raise TraceError("hk.range can only drive a `for` loop directly in a kernel body")


def _loc(where):
    b = _b.current()
    return b.ir.Location.file(where[0], where[1], where[2], b.context)


def _device(value, name, where):
    """A carried value as a device value; Python numbers become constants."""
    if isinstance(value, (_Typed, Scalar)):
        return value
    if isinstance(value, bool):
        return scalar(value)
    if isinstance(value, int):
        return scalar(value)  # index
    if isinstance(value, float):
        return scalar(value, "f32")
    raise TraceError("%r is assigned inside device control flow but holds a %s, which cannot be "
                     "carried by a device loop or branch" % (name, type(value).__name__),
                     location=Location(*where),
                     hint="only tiles, vectors and scalars can change inside a device loop or if")


def _rewrap(v, like):
    if isinstance(like, _Typed):
        return wrap(v, like.spec)
    return Scalar(v)


def _check_same(name, before, after, where, what):
    if type(before) is not type(after) or (isinstance(before, _Typed) and before.spec != after.spec) \
            or (isinstance(before, Scalar) and before.type_text != after.type_text):
        raise TraceError("%r changes type in the %s: %s before, %s after"
                         % (name, what, _describe(before), _describe(after)), location=Location(*where),
                         hint="keep each carried value's type: convert with .to(...) inside the %s" % what)


def _describe(v):
    if isinstance(v, _Typed):
        from hk.dsl.values import describe

        return describe(v.spec)
    if isinstance(v, Scalar):
        return "a %s scalar" % v.type_text
    return type(v).__name__


def for_loop(iterable, body, init, names, where):
    if isinstance(iterable, range) and not (iterable.unroll is True and all(
            isinstance(x, int) for x in (iterable.start, iterable.stop, iterable.step))):
        return _scf_for(iterable, body, init, names, where)
    if isinstance(iterable, range):
        iterable = builtins.range(iterable.start, iterable.stop, iterable.step)
    if isinstance(iterable, Value):
        raise TraceError("a loop over a device value needs hk.range(...)", location=Location(*where))
    values = tuple(init)
    for item in iterable:
        values = tuple(body(item, *values))
    return values


def _scf_for(r, body, init, names, where):
    b = _b.current()
    scf = b.d.scf
    start, stop, step = (_as_index(scalar(x)) for x in (r.start, r.stop, r.step))
    carried = [_device(v, n, where) for v, n in zip(init, names)]
    with _loc(where):
        loop = scf.ForOp(start.v, stop.v, step.v, [c.v for c in carried])
    if type(r.unroll) is int and r.unroll > 1:
        loop.operation.attributes["hk.unroll"] = b.ir.IntegerAttr.get(
            b.ir.IntegerType.get_signless(64, b.context), r.unroll)
    block = loop.body
    with b.insert_into(block):
        args = [_rewrap(a, c) for a, c in zip(block.arguments[1:], carried)]
        results = body(Scalar(block.arguments[0]), *args)
        results = [_device(v, n, where) for v, n in zip(results, names)]
        for n, before, after in zip(names, carried, results):
            _check_same(n, before, after, where, "loop")
        with _loc(where):
            scf.YieldOp([r.v for r in results])
    return tuple(_rewrap(v, c) for v, c in zip(loop.results, carried))


def if_else(cond, then_fn, else_fn, init, names, where):
    if isinstance(cond, _Register):
        raise TraceError("`if` on a tile: a branch cannot depend on each element",
                         location=Location(*where), hint="use hk.where(mask, a, b)")
    if not isinstance(cond, Value):
        return tuple(then_fn(*init) if cond else else_fn(*init))
    b = _b.current()
    scf = b.d.scf
    if cond.type_text != "i1":
        raise TraceError("an `if` on a device value needs a comparison (i1), not a %s" % cond.type_text,
                         location=Location(*where))
    # Trace both branches into their own blocks first, to learn the result types.
    with _loc(where):
        probe = scf.IfOp(cond.v, [], has_else=True)
    outs = []
    for fn, block in ((then_fn, probe.then_block), (else_fn, probe.else_block)):
        with b.insert_into(block):
            values = list(fn(*init))
        outs.append(values)
    for n, t, e in zip(names, *outs):
        if t is UNDEFINED or e is UNDEFINED:
            continue
        _check_same(n, _device(t, n, where), _device(e, n, where), where, "if")
    keep = [i for i, (t, e) in enumerate(zip(*outs)) if t is not UNDEFINED and e is not UNDEFINED]
    # Rebuild with results: move the traced operations into a new if that yields them.
    results = []
    with _loc(where):
        final = scf.IfOp(cond.v, [_device(outs[0][i], names[i], where).v.type for i in keep], has_else=True)
    for src, dst, values in ((probe.then_block, final.then_block, outs[0]),
                             (probe.else_block, final.else_block, outs[1])):
        with b.insert_into(dst):
            yielded = [_device(values[i], names[i], where) for i in keep]
            with _loc(where):
                scf.YieldOp([y.v for y in yielded])
        for op in list(src.operations):
            op.move_before(dst.operations[len(dst.operations) - 1])
    probe.operation.erase()
    it = iter(final.results)
    for i, n in enumerate(names):
        if i in keep:
            results.append(_rewrap(next(it), _device(outs[0][i], n, where)))
        else:
            results.append(UNDEFINED)
    return tuple(results)


def _probe(fn, args, where):
    """Runs `fn(*args)` into a scratch block that is then thrown away; returns its result."""
    b = _b.current()
    with _loc(where):
        scratch = b.d.scf.ExecuteRegionOp([])
        block = scratch.region.blocks.append()
    try:
        with b.insert_into(block):
            return fn(*args)
    finally:
        scratch.operation.erase()


def while_loop(cond_fn, body_fn, init, names, where):
    if not isinstance(_probe(cond_fn, init, where), Value):
        values = tuple(init)
        while cond_fn(*values):
            values = tuple(body_fn(*values))
        return values
    b = _b.current()
    scf = b.d.scf
    carried = [_device(v, n, where) for v, n in zip(init, names)]
    types_ = [c.v.type for c in carried]
    with _loc(where):
        loop = scf.WhileOp(types_, [c.v for c in carried])
        before = loop.before.blocks.append(*types_)
        after = loop.after.blocks.append(*types_)
    with b.insert_into(before):
        args = [_rewrap(a, c) for a, c in zip(before.arguments, carried)]
        cond = cond_fn(*args)
        if not isinstance(cond, Scalar) or cond.type_text != "i1":
            raise TraceError("a `while` condition must be a comparison", location=Location(*where))
        with _loc(where):
            scf.ConditionOp(cond.v, [a.v for a in args])
    with b.insert_into(after):
        args = [_rewrap(a, c) for a, c in zip(after.arguments, carried)]
        results = [_device(v, n, where) for v, n in zip(body_fn(*args), names)]
        for n, before_v, after_v in zip(names, carried, results):
            _check_same(n, before_v, after_v, where, "loop")
        with _loc(where):
            scf.YieldOp([r.v for r in results])
    return tuple(_rewrap(v, c) for v, c in zip(loop.results, carried))
