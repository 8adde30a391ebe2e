"""Control flow at trace time: what the AST rewrite turns `for`, `if` and `while` into.

Python values decide in Python (a loop over range(4) unrolls, an `if` on a constant runs one
branch); device values become scf.for, scf.if and scf.while carrying the names the body
assigns, each located at the user's statement.
"""

import builtins

from hk import types
from hk.dsl import builder as _b
from hk.dsl.values import (DEVICE_LOOP_LOCAL, DEVICE_LOOP_VARIABLE, NO_ITERATION, UNDEFINED, Scalar,
                           Value, _as_index, _Register, _Typed, _Undefined, scalar, wrap)
from hk.errors import Location, TraceError


class range:  # noqa: A001 - hk.range mirrors Python's range
    """`for i in hk.range(start, stop, step, unroll=False)`: a device loop (scf.for), counting
    up from start while i < stop; the step must be positive.

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
    if isinstance(value, _Undefined):  # named here, at the loop or branch that carries it
        raise TraceError("%r is carried by this device loop or branch, but at its start it is %s"
                         % (name, value.why), location=Location(*where), hint=value.remedy)
    if isinstance(value, bool):
        return scalar(value)
    if isinstance(value, int):
        return scalar(value)  # index
    if isinstance(value, float):
        return scalar(value, "f32")
    raise TraceError("%r is assigned inside device control flow but holds a %s, which cannot be "
                     "carried by a device loop or branch" % (name, type(value).__name__),
                     location=Location(*where),
                     hint="only tiles, vectors and scalars (and lists or tuples of them) can change "
                          "inside a device loop or if")


# Carried values are trees: a tile, vector or scalar is a leaf; a list or tuple holds more. A
# device loop or branch carries the leaves, and the tree's shape must not change.

def _flatten(value, name, where):
    """The device leaves of `value` and its shape (None for a leaf, else (type, shapes))."""
    if type(value) in (list, tuple):
        leaves, shapes = [], []
        for k, item in enumerate(value):
            sub, shape = _flatten(item, "%s[%d]" % (name, k), where)
            leaves += sub
            shapes.append(shape)
        return leaves, (type(value), tuple(shapes))
    return [(_device(value, name, where), name)], None


def _unflatten(shape, leaves):
    """The tree of `shape` over the iterator `leaves`."""
    if shape is None:
        return next(leaves)
    kind, subs = shape
    return kind(_unflatten(s, leaves) for s in subs)


def _flatten_all(values, names, where):
    leaves, shapes = [], []
    for v, n in zip(values, names):
        sub, shape = _flatten(v, n, where)
        leaves += sub
        shapes.append(shape)
    return leaves, shapes


def _shape_text(shape):
    if shape is None:
        return "a single value"
    kind, subs = shape
    return "a %s of %d" % (kind.__name__, len(subs))


def _check_shapes(names, before, after, where, what):
    for n, b, a in zip(names, before, after):
        if b != a:
            raise TraceError("%r changes shape in the %s: %s before, %s after"
                             % (n, what, _shape_text(b), _shape_text(a)), location=Location(*where),
                             hint="a list or tuple carried by a device %s keeps its length and the "
                                  "type of each element" % what)


def _rewrap(v, like):
    if isinstance(like, _Typed):
        return wrap(v, like.spec)
    return Scalar(v)


def _as_carried(value, like):
    """`value` as the carried `like`'s type where one is an index and the other an i32 (a Python
    number carried as a device value is an index, an int argument an i32): both hold the same
    integer, and a device loop carries one type."""
    if isinstance(value, Scalar) and isinstance(like, Scalar) \
            and {value.type_text, like.type_text} == {"index", "i32"}:
        return _as_index(value) if like.type_text == "index" else value.to(types.i32)
    return value


def _widened(value, other):
    """An index `value` as an i32 where the other branch yields an i32 for it."""
    if isinstance(value, Scalar) and isinstance(other, Scalar) \
            and (value.type_text, other.type_text) == ("index", "i32"):
        return value.to(types.i32)
    return value


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


def for_loop(iterable, body, init, names, where, prior=NO_ITERATION, nlocal=0):
    """Runs the loop; returns the carried names' values, then those of the names first bound in
    its body, then the loop variable's last value. After a loop that ran no iteration the
    variable keeps `prior`; after a device loop neither it nor the body's own names have one."""
    n = len(init)
    if isinstance(iterable, range) and not (iterable.unroll is True and all(
            isinstance(x, int) for x in (iterable.start, iterable.stop, iterable.step))):
        carried = _scf_for(iterable, lambda *a: tuple(body(*a))[:n], init, names, where)
        return carried + (DEVICE_LOOP_LOCAL,) * nlocal + (DEVICE_LOOP_VARIABLE,)
    if isinstance(iterable, range):
        iterable = builtins.range(iterable.start, iterable.stop, iterable.step)
    if isinstance(iterable, Value):
        raise TraceError("a loop over a device value needs hk.range(...)", location=Location(*where))
    values, local, last = tuple(init), (NO_ITERATION,) * nlocal, prior
    for item in iterable:
        out = tuple(body(item, *values))
        values, local, last = out[:n], out[n:], item
    return values + local + (last,)


def _scf_for(r, body, init, names, where):
    if isinstance(r.step, int) and r.step <= 0:
        raise TraceError("hk.range's step must be positive, not %d" % r.step, location=Location(*where),
                         hint="count up and index from the end (stop - 1 - i), or unroll with range(...)")
    b = _b.current()
    scf = b.d.scf
    start, stop, step = (_as_index(scalar(x)) for x in (r.start, r.stop, r.step))
    leaves, shapes = _flatten_all(init, names, where)
    carried = [v for v, _ in leaves]
    with _loc(where):
        loop = scf.ForOp(start.v, stop.v, step.v, [c.v for c in carried])
    if type(r.unroll) is int and r.unroll > 1:
        loop.operation.attributes["hk.unroll"] = b.ir.IntegerAttr.get(
            b.ir.IntegerType.get_signless(64, b.context), r.unroll)
    block = loop.body
    with b.insert_into(block):
        args = [_rewrap(a, c) for a, c in zip(block.arguments[1:], carried)]
        results = body(Scalar(block.arguments[0]), *_rebuild(shapes, args))
        out, out_shapes = _flatten_all(results, names, where)
        _check_shapes(names, shapes, out_shapes, where, "loop")
        out = [(_as_carried(after, before), n) for (before, _), (after, n) in zip(leaves, out)]
        for (before, n), (after, _) in zip(leaves, out):
            _check_same(n, before, after, where, "loop")
        with _loc(where):
            scf.YieldOp([r.v for r, _ in out])
    return tuple(_rebuild(shapes, [_rewrap(v, c) for v, c in zip(loop.results, carried)]))


def _rebuild(shapes, leaves):
    it = iter(leaves)
    return [_unflatten(s, it) for s in shapes]


def if_else(cond, then_fn, else_fn, init, names, where):
    if isinstance(cond, _Register):
        raise TraceError("`if` on a tile: a branch cannot depend on each element",
                         location=Location(*where), hint="use hk.where(mask, a, b)")
    if isinstance(cond, _Undefined):
        cond.fail()
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
    # A name that is undefined after either branch is undefined after the if; the others are
    # yielded by both branches, leaf by leaf.
    keep, trees = [], {}
    for i, (n, t, e) in enumerate(zip(names, *outs)):
        if isinstance(t, _Undefined) or isinstance(e, _Undefined):
            continue
        with b.insert_into(probe.then_block):
            tl, ts = _flatten(t, n, where)
        with b.insert_into(probe.else_block):
            el, es = _flatten(e, n, where)
        _check_shapes([n], [ts], [es], where, "if")
        # An index and an i32 meet as an i32 (the type of an int argument).
        pairs = list(zip(tl, el))
        with b.insert_into(probe.then_block):
            tl = [(_widened(tv, ev), leaf) for (tv, leaf), (ev, _) in pairs]
        with b.insert_into(probe.else_block):
            el = [(_widened(ev, tv), leaf) for (tv, _), (ev, leaf) in pairs]
        for (tv, leaf), (ev, _) in zip(tl, el):
            _check_same(leaf, tv, ev, where, "if")
        keep.append(i)
        trees[i] = (ts, tl, el)
    # Rebuild with results: move the traced operations into a new if that yields them.
    result_types = [v.v.type for i in keep for v, _ in trees[i][1]]
    with _loc(where):
        final = scf.IfOp(cond.v, result_types, has_else=True)
    for side, src, dst in ((1, probe.then_block, final.then_block), (2, probe.else_block, final.else_block)):
        with b.insert_into(dst):
            with _loc(where):
                scf.YieldOp([v.v for i in keep for v, _ in trees[i][side]])
        for op in list(src.operations):
            op.move_before(dst.operations[len(dst.operations) - 1])
    probe.operation.erase()
    it = iter(final.results)
    results = []
    for i, n in enumerate(names):
        if i in trees:
            shape, leaves = trees[i][0], trees[i][1]
            results.append(_unflatten(shape, iter([_rewrap(next(it), like) for like, _ in leaves])))
        else:
            t, e = outs[0][i], outs[1][i]
            # Undefined after the if: say why with the branch's own reason when it has one.
            results.append(t if isinstance(t, _Undefined) and t is not UNDEFINED else
                           e if isinstance(e, _Undefined) and e is not UNDEFINED else UNDEFINED)
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


def while_loop(cond_fn, body_fn, init, names, where, nlocal=0):
    """Runs the loop; returns the carried names' values, then those of the names first bound in
    its body (none after a device loop)."""
    n = len(init)
    if not isinstance(_probe(cond_fn, init, where), Value):
        values, local = tuple(init), (NO_ITERATION,) * nlocal
        while cond_fn(*values):
            out = tuple(body_fn(*values))
            values, local = out[:n], out[n:]
        return values + local
    return _scf_while(cond_fn, lambda *a: tuple(body_fn(*a))[:n], init, names, where) + \
        (DEVICE_LOOP_LOCAL,) * nlocal


def _scf_while(cond_fn, body_fn, init, names, where):
    b = _b.current()
    scf = b.d.scf
    leaves, shapes = _flatten_all(init, names, where)
    carried = [v for v, _ in leaves]
    types_ = [c.v.type for c in carried]
    with _loc(where):
        loop = scf.WhileOp(types_, [c.v for c in carried])
        before = loop.before.blocks.append(*types_)
        after = loop.after.blocks.append(*types_)
    with b.insert_into(before):
        args = [_rewrap(a, c) for a, c in zip(before.arguments, carried)]
        cond = cond_fn(*_rebuild(shapes, args))
        if not isinstance(cond, Scalar) or cond.type_text != "i1":
            raise TraceError("a `while` condition must be a comparison", location=Location(*where))
        with _loc(where):
            scf.ConditionOp(cond.v, [a.v for a in args])
    with b.insert_into(after):
        args = [_rewrap(a, c) for a, c in zip(after.arguments, carried)]
        out, out_shapes = _flatten_all(body_fn(*_rebuild(shapes, args)), names, where)
        _check_shapes(names, shapes, out_shapes, where, "loop")
        out = [(_as_carried(after, before), n) for (before, _), (after, n) in zip(leaves, out)]
        for (before_v, n), (after_v, _) in zip(leaves, out):
            _check_same(n, before_v, after_v, where, "loop")
        with _loc(where):
            scf.YieldOp([r.v for r, _ in out])
    return tuple(_rebuild(shapes, [_rewrap(v, c) for v, c in zip(loop.results, carried)]))
