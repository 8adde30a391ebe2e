"""The traced IR turned into Python closures once, then run for every wave of every block.

Each operation becomes a step `fn(env)` over a list of value slots; regions become nested step
lists. A barrier is a step that yields, so the waves of a workgroup run as generators that
meet at every barrier.
"""

import torch

from hk import types
from hk.errors import HKError, LaunchError, Location
from hk.interp import numbers as N
from hk.interp import semantics as S

_BARRIER = object()

# Enum attributes are stored as their case number, in ODS order.
ENUMS = {
    "dim": ("x", "y", "z"),
    "extent": ("batch", "depth", "rows", "cols"),
    "unary": ("exp", "exp2", "log", "log2", "abs", "neg", "relu", "gelu", "silu", "sqrt", "rsqrt",
              "round", "floor", "sin", "cos", "tanh", "sigmoid", "exp2_ftz"),
    "binary": ("add", "sub", "mul", "div", "max", "min", "pow", "band", "bor", "bxor", "shl", "shr"),
    "cmp": ("eq", "ne", "lt", "le", "gt", "ge"),
    "reduce": ("sum", "max", "min"),
    "mma": ("AB", "ABt", "AtB", "AtBt"),
    "mask": ("causal", "tril", "triu"),
    "index": ("row", "col"),
}


class Unsupported(Exception):
    """The interpreter meets an operation it does not implement."""


class Wave:
    """What one wave sees: its block and warp ids, and its workgroup's LDS."""

    __slots__ = ("block", "grid", "warp", "warps", "lds")

    def __init__(self, block, grid, warp, warps, lds):
        self.block, self.grid, self.warp, self.warps, self.lds = block, grid, warp, warps, lds


class Program:
    """A kernel's body as closures over value slots."""

    def __init__(self, func_op, warps):
        self.slots = {}
        self.warps = warps
        entry = func_op.operation.regions[0].blocks[0]
        self.args = [self.slot(a) for a in entry.arguments]
        self.steps = self.block(entry)

    def slot(self, value):
        key = value  # hk._mlir Values hash and compare by identity of the underlying value
        s = self.slots.get(key)
        if s is None:
            s = self.slots[key] = len(self.slots)
        return s

    def block(self, block):
        steps = []
        for op in block.operations:
            step = self.op(op)
            if step is not None:
                steps.append(step)
        return steps

    # Running -------------------------------------------------------------------------------------

    def run_steps(self, steps, env, wave):
        for step in steps:
            if step is _BARRIER:
                yield
                continue
            result = step(env, wave)
            if result is not None:
                yield from result

    # One operation ------------------------------------------------------------------------------

    def op(self, op):
        op = op.operation  # the generic view: generated OpViews shadow .name and attributes
        name = op.name
        ins = [self.slot(v) for v in op.operands]
        outs = [self.slot(v) for v in op.results]
        attrs = op.attributes
        handler = getattr(self, "_" + name.replace(".", "_"), None)
        if handler is None:
            raise Unsupported("the interpreter has no semantics for '%s'" % name)
        step = handler(op, ins, outs, attrs)
        if step is None or step is _BARRIER:
            return step
        return _located(step, op)

    @staticmethod
    def _enum(attrs, key, table):
        return ENUMS[table][_number(attrs[key])]

    @staticmethod
    def _spec(value):
        return types.parse_mlir_type(str(value.type))

    # builtin / arith / scf -----------------------------------------------------------------------

    def _func_return(self, op, ins, outs, attrs):
        return None

    def _arith_constant(self, op, ins, outs, attrs):
        value, o = _number(attrs["value"]), outs[0]

        def step(env, wave):
            env[o] = value
        return step

    def _simple(self, outs, ins, fn):
        o = outs[0]
        a = ins

        def step(env, wave):
            env[o] = fn(*[env[i] for i in a])
        return step

    # Scalar arithmetic as compiled code has it (hk.interp.numbers): i32 and index wrap at 32
    # bits, f32 rounds after every operation.
    def _int_or_float(self, op, ins, outs, int_fn, float_fn):
        text = str(op.results[0].type)
        if text in ("f32", "f16", "bf16"):
            return self._simple(outs, ins, lambda x, y: float_fn(x, y))
        if text == "i1":
            return self._simple(outs, ins, lambda x, y: bool(int_fn(x, y) & 1))
        return self._simple(outs, ins, lambda x, y: N.wrap32(int_fn(x, y)))

    def _arith_addi(self, op, ins, outs, attrs):
        return self._int_or_float(op, ins, outs, lambda x, y: x + y, lambda x, y: N.f32(x + y))
    _arith_addf = _arith_addi

    def _arith_subi(self, op, ins, outs, attrs):
        return self._int_or_float(op, ins, outs, lambda x, y: x - y, lambda x, y: N.f32(x - y))
    _arith_subf = _arith_subi

    def _arith_muli(self, op, ins, outs, attrs):
        return self._int_or_float(op, ins, outs, lambda x, y: x * y, lambda x, y: N.f32(x * y))
    _arith_mulf = _arith_muli

    def _arith_divf(self, op, ins, outs, attrs): return self._simple(outs, ins, N.fdiv)
    def _arith_divsi(self, op, ins, outs, attrs): return self._simple(outs, ins, N.div_s)
    def _arith_remsi(self, op, ins, outs, attrs): return self._simple(outs, ins, N.rem_s)
    def _arith_ceildivsi(self, op, ins, outs, attrs): return self._simple(outs, ins, N.ceil_div_s)
    def _arith_andi(self, op, ins, outs, attrs): return self._int_or_float(op, ins, outs, lambda x, y: x & y, None)
    def _arith_ori(self, op, ins, outs, attrs): return self._int_or_float(op, ins, outs, lambda x, y: x | y, None)
    def _arith_xori(self, op, ins, outs, attrs): return self._int_or_float(op, ins, outs, lambda x, y: x ^ y, None)
    def _arith_shli(self, op, ins, outs, attrs): return self._simple(outs, ins, N.shl)
    def _arith_shrsi(self, op, ins, outs, attrs): return self._simple(outs, ins, N.shr)
    def _arith_maxsi(self, op, ins, outs, attrs): return self._simple(outs, ins, max)
    def _arith_minsi(self, op, ins, outs, attrs): return self._simple(outs, ins, min)
    # maxnum / minnum: a NaN operand yields the other one (as fmaxf and the tiles' max).
    def _arith_maxnumf(self, op, ins, outs, attrs): return self._simple(outs, ins, _maxnum)
    def _arith_minnumf(self, op, ins, outs, attrs): return self._simple(outs, ins, _minnum)

    def _arith_index_cast(self, op, ins, outs, attrs): return self._simple(outs, ins, N.wrap32)
    def _arith_fptosi(self, op, ins, outs, attrs): return self._simple(outs, ins, N.float_to_int)
    def _arith_sitofp(self, op, ins, outs, attrs): return self._simple(outs, ins, N.f32)

    def _arith_extf(self, op, ins, outs, attrs): return self._simple(outs, ins, float)
    def _arith_extui(self, op, ins, outs, attrs): return self._simple(outs, ins, int)

    def _arith_truncf(self, op, ins, outs, attrs):
        dtype = S.TORCH[types.from_mlir(str(op.results[0].type))]
        return self._simple(outs, ins, lambda x: torch.tensor(x, dtype=torch.float32).to(dtype).item())

    def _arith_select(self, op, ins, outs, attrs):
        return self._simple(outs, ins, lambda c, a, b: a if c else b)

    def _arith_cmpi(self, op, ins, outs, attrs):
        pred = _number(attrs["predicate"])
        u = N.unsigned32
        fns = [lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a < b, lambda a, b: a <= b,
               lambda a, b: a > b, lambda a, b: a >= b, lambda a, b: u(a) < u(b),
               lambda a, b: u(a) <= u(b), lambda a, b: u(a) > u(b), lambda a, b: u(a) >= u(b)]
        return self._simple(outs, ins, fns[pred])

    def _arith_cmpf(self, op, ins, outs, attrs):
        pred = _number(attrs["predicate"])
        # false, oeq, ogt, oge, olt, ole, one, ord, ueq, ugt, uge, ult, ule, une, uno, true:
        # ordered ones are false with a NaN operand, unordered ones (8 to 13) true.
        ordered = {1: lambda a, b: a == b, 2: lambda a, b: a > b, 3: lambda a, b: a >= b,
                   4: lambda a, b: a < b, 5: lambda a, b: a <= b, 6: lambda a, b: a < b or a > b}
        if pred in ordered:
            return self._simple(outs, ins, ordered[pred])
        if not 8 <= pred <= 13:
            raise Unsupported("arith.cmpf predicate %d" % pred)
        fn = ordered[pred - 7]
        return self._simple(outs, ins, lambda a, b: a != a or b != b or fn(a, b))

    def _scf_yield(self, op, ins, outs, attrs):
        return None  # read by the parent

    def _scf_for(self, op, ins, outs, attrs):
        body = op.regions[0].blocks[0]
        iv = self.slot(body.arguments[0])
        carried = [self.slot(a) for a in list(body.arguments)[1:]]
        steps = self.block(body)
        yielded = [self.slot(v) for v in body.operations[len(body.operations) - 1].operands]
        lb, ub, st, inits = ins[0], ins[1], ins[2], ins[3:]
        run = self.run_steps

        def step(env, wave):
            for c, i in zip(carried, inits):
                env[c] = env[i]
            if env[st] <= 0:
                fail(op, wave, "hk.range's step is %d; it must be positive" % env[st],
                     hint="compiled code would loop forever or not at all")
            for i in range(env[lb], env[ub], env[st]):
                env[iv] = i
                yield from run(steps, env, wave)
                values = [env[y] for y in yielded]
                for c, v in zip(carried, values):
                    env[c] = v
            for o, c in zip(outs, carried):
                env[o] = env[c]
        return step

    def _scf_if(self, op, ins, outs, attrs):
        branches = []
        for region in op.regions:
            if not region.blocks:
                branches.append(([], []))
                continue
            block = region.blocks[0]
            term = block.operations[len(block.operations) - 1]
            branches.append((self.block(block), [self.slot(v) for v in term.operands]))
        cond = ins[0]
        run = self.run_steps

        def step(env, wave):
            steps, yielded = branches[0] if env[cond] else branches[1]
            yield from run(steps, env, wave)
            for o, y in zip(outs, yielded):
                env[o] = env[y]
        return step

    def _scf_while(self, op, ins, outs, attrs):
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        b_args = [self.slot(a) for a in before.arguments]
        a_args = [self.slot(a) for a in after.arguments]
        b_steps, a_steps = self.block(before), self.block(after)
        cond_op = before.operations[len(before.operations) - 1]
        cond, forwarded = self.slot(cond_op.operands[0]), [self.slot(v) for v in list(cond_op.operands)[1:]]
        yielded = [self.slot(v) for v in after.operations[len(after.operations) - 1].operands]
        run = self.run_steps

        def step(env, wave):
            values = [env[i] for i in ins]
            while True:
                for s, v in zip(b_args, values):
                    env[s] = v
                yield from run(b_steps, env, wave)
                values = [env[f] for f in forwarded]
                if not env[cond]:
                    break
                for s, v in zip(a_args, values):
                    env[s] = v
                yield from run(a_steps, env, wave)
                values = [env[y] for y in yielded]
            for o, v in zip(outs, values):
                env[o] = v
        return step

    _scf_condition = _scf_yield

    # hk: indexing --------------------------------------------------------------------------------

    def _hk_block_idx(self, op, ins, outs, attrs):
        d, o = "xyz".index(self._enum(attrs, "dim", "dim")), outs[0]

        def step(env, wave):
            env[o] = wave.block[d]
        return step

    def _hk_grid_dim(self, op, ins, outs, attrs):
        d, o = "xyz".index(self._enum(attrs, "dim", "dim")), outs[0]

        def step(env, wave):
            env[o] = wave.grid[d]
        return step

    def _hk_warp_id(self, op, ins, outs, attrs):
        o = outs[0]

        def step(env, wave):
            env[o] = wave.warp
        return step

    def _hk_num_warps(self, op, ins, outs, attrs):
        o, n = outs[0], self.warps

        def step(env, wave):
            env[o] = n
        return step

    def _hk_extent(self, op, ins, outs, attrs):
        which = self._enum(attrs, "dim", "extent")
        return self._simple(outs, ins, lambda g: g.extent(which))

    def _hk_tile_coord(self, op, ins, outs, attrs):
        return self._simple(outs, ins, lambda b, d, r, c: (b, d, r, c))

    # hk: memory ----------------------------------------------------------------------------------

    def _hk_load(self, op, ins, outs, attrs):
        spec = self._spec(op.results[0])
        if isinstance(spec, types.RT):
            return self._simple(outs, ins, lambda g, c: g.load_tile(c, spec.rows, spec.cols, spec.dtype))
        return self._simple(outs, ins, lambda g, c: g.load_vector(c, spec.length, spec.dtype))

    def _hk_store(self, op, ins, outs, attrs):
        v, g, c = ins
        is_tile = isinstance(self._spec(op.operands[0]), types.RT)

        def step(env, wave):
            (env[g].store_tile if is_tile else env[g].store_vector)(env[c], env[v])
        return step

    def _hk_gather(self, op, ins, outs, attrs):
        spec = self._spec(op.results[0])
        return self._simple(outs, ins, lambda g, c, ids: g.gather(c, ids, spec.rows, spec.cols, spec.dtype))

    def _hk_scatter(self, op, ins, outs, attrs):
        v, g, c, ids = ins

        def step(env, wave):
            env[g].scatter(env[c], env[ids], env[v])
        return step

    def _hk_load_scalar(self, op, ins, outs, attrs):
        return self._simple(outs, ins, lambda g, b, d, r, c: g.load_scalar(b, d, r, c))

    def _hk_store_scalar(self, op, ins, outs, attrs):
        v, g, b, d, r, c = ins

        def step(env, wave):
            env[g].store_scalar(env[b], env[d], env[r], env[c], env[v])
        return step

    def _hk_atomic_add(self, op, ins, outs, attrs):
        v, g, b, d, r, c = ins

        def step(env, wave):
            env[g].atomic_add(env[b], env[d], env[r], env[c], env[v])
        return step

    def _hk_lds_alloc(self, op, ins, outs, attrs):
        spec = self._spec(op.results[0])
        shape = ((spec.buffers, spec.rows, spec.cols) if isinstance(spec, types.ST)
                 else (spec.buffers, spec.length))
        o, key, dtype = outs[0], outs[0], S.TORCH[spec.dtype]

        def step(env, wave):
            # One allocation per workgroup, shared by its waves.
            env[o] = wave.lds.alloc(key, shape, dtype)
        return step

    def _hk_subtile(self, op, ins, outs, attrs):
        spec = self._spec(op.results[0])
        R, C = spec.rows, spec.cols
        o, (s, buf, i, j) = outs[0], ins

        def step(env, wave):
            shared = env[s]
            b = _buffer(op, wave, shared, env[buf])
            ri, ci = env[i], env[j]
            if not (0 <= ri < shared.shape[1] // R and 0 <= ci < shared.shape[2] // C):
                fail(op, wave, "subtile (%d, %d) of %dx%d is outside the %dx%d shared tile"
                     % (ri, ci, R, C, shared.shape[1], shared.shape[2]))
            env[o] = shared.view(b, slice(ri * R, (ri + 1) * R), slice(ci * C, (ci + 1) * C))
        return step

    def _hk_lds_load(self, op, ins, outs, attrs):
        o, (s, buf) = outs[0], ins

        def step(env, wave):
            shared = env[s]
            env[o] = shared.read(_buffer(op, wave, shared, env[buf]), wave, op).clone()
        return step

    def _hk_lds_store(self, op, ins, outs, attrs):
        v, s, buf = ins

        def step(env, wave):
            shared = env[s]
            shared.write(_buffer(op, wave, shared, env[buf]), env[v], wave, op)
        return step

    def _hk_copy_to_lds(self, op, ins, outs, attrs):
        g, c, s, buf = ins

        def step(env, wave):
            shared = env[s]
            rows, cols = shared.shape[1], shared.shape[2]
            b = _buffer(op, wave, shared, env[buf])
            tile = env[g].load_tile(env[c], rows, cols, types.from_torch(shared.data.dtype))
            shared.write(b, tile, wave, op, group=True)
        return step

    def _hk_copy_issue(self, op, ins, outs, attrs):
        spec = self._spec(op.results[0])
        return self._simple(outs, ins, lambda g, c: g.load_tile(c, spec.rows, spec.cols, spec.dtype))

    def _hk_copy_commit(self, op, ins, outs, attrs):
        v, s, buf = ins
        transpose = "transpose" in attrs

        def step(env, wave):
            shared = env[s]
            value = env[v].t() if transpose else env[v]
            shared.write(_buffer(op, wave, shared, env[buf]), value, wave, op, group=True)
        return step

    def _hk_copy_from_lds(self, op, ins, outs, attrs):
        s, buf, g, c = ins

        def step(env, wave):
            shared = env[s]
            env[g].store_tile(env[c], shared.read(_buffer(op, wave, shared, env[buf]), wave, op, group=True))
        return step

    def _hk_wait_lds(self, op, ins, outs, attrs):
        return None  # the interpreter completes every operation at once

    _hk_wait_vm = _hk_sched_barrier = _hk_set_prio = _hk_wait_lds

    def _hk_barrier(self, op, ins, outs, attrs):
        return _BARRIER

    # hk: compute ---------------------------------------------------------------------------------

    def _hk_mma(self, op, ins, outs, attrs):
        kind = self._enum(attrs, "kind", "mma")
        return self._simple(outs, ins, lambda a, b, c: S.mma(kind, a, b, c))

    def _hk_unary(self, op, ins, outs, attrs):
        fn, dtype = self._enum(attrs, "fn", "unary"), self._spec(op.results[0]).dtype
        return self._simple(outs, ins, lambda x: S.unary(fn, x, dtype))

    def _hk_binary(self, op, ins, outs, attrs):
        fn, dtype = self._enum(attrs, "fn", "binary"), self._spec(op.results[0]).dtype
        return self._simple(outs, ins, lambda a, b: S.binary(fn, a, b, dtype))

    def _hk_cmp(self, op, ins, outs, attrs):
        pred = self._enum(attrs, "predicate", "cmp")
        return self._simple(outs, ins, lambda a, b: S.compare(pred, a, b))

    def _hk_select(self, op, ins, outs, attrs):
        return self._simple(outs, ins, lambda m, a, b: torch.where(m, a, b))

    def _hk_broadcast_binary(self, op, ins, outs, attrs):
        fn, dtype = self._enum(attrs, "fn", "binary"), self._spec(op.results[0]).dtype
        per_row = self._spec(op.operands[1]).axis == "col"
        return self._simple(outs, ins, lambda t, v: S.binary(fn, t, v.unsqueeze(1) if per_row else v.unsqueeze(0), dtype))

    def _hk_broadcast(self, op, ins, outs, attrs):
        spec = self._spec(op.results[0])
        per_row = self._spec(op.operands[0]).axis == "col"
        return self._simple(outs, ins, lambda v: (v.unsqueeze(1) if per_row else v.unsqueeze(0))
                            .expand(spec.rows, spec.cols).to(S.TORCH[spec.dtype]).clone())

    def _hk_fill(self, op, ins, outs, attrs):
        spec = self._spec(op.results[0])
        value = _number(attrs["value"])
        shape = (spec.rows, spec.cols) if isinstance(spec, types.RT) else (spec.length,)
        dtype = S.TORCH[spec.dtype]
        o = outs[0]

        def step(env, wave):
            env[o] = torch.full(shape, value, dtype=dtype)
        return step

    def _hk_mask(self, op, ins, outs, attrs):
        kind = self._enum(attrs, "kind", "mask")
        diagonal = _number(attrs["diagonal"]) if "diagonal" in attrs else 0
        value = _number(attrs["value"])
        dtype = self._spec(op.results[0]).dtype
        return self._simple(outs, ins, lambda x, r0, c0: S.mask(kind, x, r0, c0, diagonal, value, dtype))

    def _hk_iota(self, op, ins, outs, attrs):
        spec = self._spec(op.results[0])
        by_row = self._enum(attrs, "index", "index") == "row"
        o = outs[0]

        def step(env, wave):
            r = torch.arange(spec.rows, dtype=torch.int32).unsqueeze(1).expand(spec.rows, spec.cols)
            c = torch.arange(spec.cols, dtype=torch.int32).unsqueeze(0).expand(spec.rows, spec.cols)
            env[o] = (r if by_row else c).clone()
        return step

    def _hk_reduce(self, op, ins, outs, attrs):
        fn = self._enum(attrs, "fn", "reduce")
        spec = self._spec(op.results[0])
        if len(ins) == 2:
            return self._simple(outs, ins, lambda x, i: S.reduce(fn, x, spec.axis, i, spec.dtype))
        return self._simple(outs, ins, lambda x: S.reduce(fn, x, spec.axis, None, spec.dtype))

    def _hk_cast(self, op, ins, outs, attrs):
        dtype = self._spec(op.results[0]).dtype
        return self._simple(outs, ins, lambda x: S.cast(x, dtype))

    def _hk_transpose(self, op, ins, outs, attrs):
        return self._simple(outs, ins, lambda x: x.t().contiguous())

    def _hk_rand(self, op, ins, outs, attrs):
        return self._simple(outs, ins, S.rand)

    def _hk_lane_id(self, op, ins, outs, attrs):
        raise Unsupported("hk.lane_id has no meaning in the tile-level interpreter; run on the "
                          "emulator (HK_DEVICE=emu) for lane-level code")


def _maxnum(a, b):
    return b if a != a else a if b != b else max(a, b)


def _minnum(a, b):
    return b if a != a else a if b != b else min(a, b)


def _buffer(op, wave, shared, index):
    """A shared tile's buffer `index`, checked: compiled code would touch another allocation."""
    n = shared.shape[0]
    if not 0 <= index < n:
        fail(op, wave, "buffer %d of a shared tile with %d buffer(s)" % (index, n),
             hint="compiled code does not check LDS buffer indices: it would read or write "
                  "another buffer or allocation")
    return index


def location_of(op):
    """The hk Location of an operation (the user's line it was traced at), or None."""
    import re

    m = re.match(r'loc\("(.*)":(\d+):(\d+)\)', str(op.location))
    return Location(m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def _located(step, op):
    """`step`, with what goes wrong in it reported at the operation's line as an hk error."""

    def run(env, wave):
        try:
            return step(env, wave)
        except HKError:
            raise
        except Exception as e:  # torch and Python errors from a bad index or value
            raise InterpError("the interpreter cannot run %s in workgroup %s, wave %d: %s: %s"
                              % (op.name, wave.block, wave.warp, type(e).__name__, e),
                              location=location_of(op)) from None
    return run


class InterpError(LaunchError):
    """The kernel did something at run time that has no meaning (on the interpreter, which
    checks what compiled code cannot), reported at the kernel's line."""


def fail(op, wave, message, hint=None, notes=()):
    raise InterpError("%s (workgroup %s, wave %d)" % (message, wave.block, wave.warp),
                      location=location_of(op), hint=hint, notes=notes)


def _number(attr):
    """The Python value of an integer, boolean or float attribute."""
    from hk._mlir import ir

    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    value = ir.IntegerAttr(attr)
    if str(value.type) == "i1":
        return bool(value.value)
    return value.value
