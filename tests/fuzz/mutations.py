"""Invalid programs: a valid one with one bad statement (or bad call) put in at a known line.

Each mutation says what it breaks and where the error must point: the inserted line, or the
call site in the generated module's run() for what only a launch can see. The bad line is
the kernel's second statement, so it needs only what the first one (a load) made: `t` (its
tile, of `dt` and `R` x `C`), `x` (the tensor it came from) and the kernel's own names.
"""

import dataclasses
import random


@dataclasses.dataclass
class Invalid:
    program: object     # the valid program it comes from
    name: str           # the mutation
    source: str
    line: int           # where the error must point


# The bad statement, by mutation; {t} {x} {dt} {R} {C} {odt} (another dtype) are filled in.
STATEMENTS = {
    "shape mismatch": "bad = {t} + {x}[0, 0, 0, 0].load(hk.RT(hk.{dt}, {R2}, {C}))",
    "load dtype": "bad = {x}[0, 0, 0, 0].load(hk.RT(hk.{odt}, {R}, {C}))",
    "store dtype": "{x}[0, 0, 0, 0] = {t}.to(hk.{odt})",
    "store a number": "{x}[0, 0, 0, 0] = 3.0",
    "store a tensor": "{x}[0, 0, 0, 0] = {x}",
    "if on a tile": "bad = {t} if {t} else {t}",
    "tile truth": "assert {t}",
    "bad tile rows": "bad = {x}[0, 0, 0, 0].load(hk.RT(hk.{dt}, 17, {C}))",
    "bad layout": "bad = {x}[0, 0, 0, 0].load(hk.RT(hk.{dt}, {R}, {C}, 'diagonal'))",
    "three coordinates": "bad = {x}[0, 0, 0].load(hk.RT(hk.{dt}, {R}, {C}))",
    "string coordinate": "bad = {x}['a', 0, 0, 0].load(hk.RT(hk.{dt}, {R}, {C}))",
    "float coordinate": "bad = {x}[0, 0, 1.5, 0].load(hk.RT(hk.{dt}, {R}, {C}))",
    "wide constant": "bad = hk.full(hk.RT(hk.i32, 16, 16), 2 ** 40)",
    "wide index": "bad = {x}[0, 0, 2 ** 33, 0].load(hk.RT(hk.{dt}, {R}, {C}))",
    "math on an int": "bad = hk.math.exp(3)",
    "math on an int tile": "bad = hk.math.exp(hk.iota(hk.RT(hk.fp32, 16, 16)))",
    "pow on an int tile": "bad = hk.math.pow(hk.iota(hk.RT(hk.fp32, 16, 16)), 2)",
    "reduce a scalar": "bad = hk.row_sum(hk.arch.block_idx.x)",
    "where without a mask": "bad = hk.where({t}, {t}, {t})",
    "where of a number": "bad = hk.where({t} > {t}, 1.0, {t})",
    "mma layouts": "bad = hk.mma_AB({t}, {t}, {t})",
    "mma of a scalar": "bad = hk.mma_ABt(1, 2, 3)",
    "lds buffer": "sh = hk.lds.alloc(hk.ST(hk.fp32, 16, 16, 2)); sh[2].store(hk.zeros(hk.RT(hk.fp32, 16, 16)))",
    "lds of a register type": "sh = hk.lds.alloc(hk.RT(hk.fp32, 16, 16))",
    "lds subtile index": "sh = hk.lds.alloc(hk.ST(hk.fp32, 32, 32)); sh[0].subtile(16, 16, 2, 0).store(hk.zeros(hk.RT(hk.fp32, 16, 16)))",
    "lds uneven subtile": "sh = hk.lds.alloc(hk.ST(hk.fp32, 32, 32)); q = sh[0].subtile(24, 32, 0, 0)",
    "copy into a subtile": "sh = hk.lds.alloc(hk.ST(hk.{dt}, 32, 32)); hk.lds.copy_to(sh[0].subtile(16, 16, 0, 0).s, 0, {x}, hk.tile_coord(0, 0, 0, 0))",
    "copy to a tile": "hk.lds.copy_to({t}, 0, {x}, hk.tile_coord(0, 0, 0, 0))",
    "cast to a string": "bad = {t}.to('fp32')",
    "cast to torch": "bad = {t}.to(hk.Tensor)",
    "broadcast length": "bad = hk.broadcast(hk.zeros(hk.RV(hk.fp32, 32, 'col')), hk.RT(hk.fp32, 16, 16))",
    "row op of two tiles": "bad = hk.add_row({t}, {t})",
    "gather of a tile": "bad = hk.gather({x}, hk.tile_coord(0, 0, 0, 0), {t}, hk.RT(hk.{dt}, {R}, {C}))",
    "store_scalar of a tile": "{x}.store_scalar(0, 0, 0, 0, {t})",
    "scalar of a list": "bad = {x}.load_scalar([0], 0, 0, 0)",
    "missing argument": "bad = {x}.load_scalar(0, 0, 0)",
    "rand of floats": "bad = hk.rand(1, {t}.to(hk.fp32))",
    "unknown attribute": "bad = {x}.shape",
    "unknown hk name": "bad = hk.softmax({t})",
    "undefined name": "bad = {t} + undefined_name",
    "step zero": "for i in hk.range(0, 4, 0): pass",
    "device loop variable": "for i in hk.range(hk.arch.block_idx.x): pass\n{ind}bad = {x}[0, 0, i, 0].load(hk.RT(hk.{dt}, {R}, {C}))",
    "device loop local": "for i in hk.range(hk.arch.block_idx.x): u = {t}\n{ind}bad = u + {t}",
    "one branch": "if hk.arch.block_idx.x > 0: u = {t}\n{ind}bad = u + {t}",
    "changes type in a loop": "u = {t}\n{ind}for i in hk.range(2): u = u.to(hk.{odt})",
    "break": "for i in range(2): break",
    "return a value": "return {t}",
    "return in an if": "if hk.arch.block_idx.x > 0: return",
    "yield": "yield {t}",
    "while else": "while False: pass\n{ind}else: pass",
    "tile in a device if": "if {t} > 0: pass",
    "iterate a tile": "for v in {t}: pass",
    "scalar and float": "bad = hk.arch.block_idx.x + 0.5",
    "scalars of two types": "bad = hk.arch.block_idx.x.to(hk.fp32) + hk.arch.block_idx.x",
    "compare vectors": "bad = hk.zeros(hk.RV(hk.fp32, 16)) != 0.0",
    "integer scalar division": "bad = hk.arch.block_idx.x / 2",
    "float scalar remainder": "bad = hk.arch.block_idx.x.to(hk.fp32) % 2.0",
    "float scalar bitwise": "bad = hk.arch.block_idx.x.to(hk.fp32) & 1",
    "scalar power": "bad = hk.arch.block_idx.x.to(hk.fp32) ** 2",
    "barrier in a warp branch": "if hk.arch.warp_id() > 0: hk.arch.barrier()",
    "causal of a vector": "bad = hk.causal(hk.row_sum({t}), 0, 0)",
    "iota of a number": "bad = hk.iota(16)",
    "full of a string": "bad = hk.full(hk.RT(hk.fp32, 16, 16), 'one')",
}

# Bad calls: run()'s body becomes this; the error must point at it.
CALLS = {
    "missing call argument": "    return {name}(*args[:-1])",
    "unknown constant": "    return {name}(*args, BOGUS=1)",
    "unknown arch": "    return {name}(*args, arch='gfx90a')",
    "float64 tensor": "    return {name}(*[a.double() if hasattr(a, 'double') else a for a in args])",
    "string argument": "    return {name}(*args[:-1], 'a')",
    "non-contiguous": "    return {name}(*[a.new_zeros(tuple(a.shape) + (2,))[..., 0] if hasattr(a, 'dim') else a for a in args])",
}

# Bad declarations: the decorator line changes; the error must point at the call.
DECLS = {
    "float grid": "grid=(1.5,)",
    "negative grid": "grid=(-1,)",
    "grid of strings": "grid=('a',)",
}


def mutate(program, rng):
    """One invalid program from `program`, or None when the mutation does not apply."""
    kind = rng.choice(["statement"] * 8 + ["call", "decl"])
    first, src = program.first, program.first_from
    if kind == "statement":
        name = rng.choice(sorted(STATEMENTS))
        fields = dict(t=first.name, x=src.name, dt=first.dtype, R=first.shape[1], C=first.shape[2],
                      R2=first.shape[1] * 2, odt="fp16" if first.dtype != "fp16" else "fp32", ind="    ")
        bad = STATEMENTS[name].format(**fields)
        body = list(program.body)
        at = next(i for i, l in enumerate(body) if l.strip().startswith(first.name + " = ")) + 1
        body[at:at] = ["    " + l if k == 0 else l for k, l in enumerate(bad.split("\n"))]
        line = len(program.head) + at + 1
        # Errors a later line reports: the name used after a loop or branch, the loop's type.
        if name in ("device loop variable", "device loop local", "one branch", "changes type in a loop"):
            line += 1
        return Invalid(program, name, program.with_body(body), line)
    if kind == "call":
        name = rng.choice(sorted(CALLS))
        text = program.with_body(program.body)
        call = CALLS[name].format(name=program.name)
        lines = text.rstrip("\n").split("\n")
        lines[-1] = call
        return Invalid(program, name, "\n".join(lines) + "\n", len(lines))
    name = rng.choice(sorted(DECLS))
    head = list(program.head)
    deco = next(i for i, l in enumerate(head) if l.startswith("@hk.kernel("))
    head[deco] = head[deco].replace("grid=%r" % (program.grid,), DECLS[name])
    lines = (head + program.body + program.tail())
    return Invalid(program, name, "\n".join(lines) + "\n", len(lines))
