"""A launch's tensors against the tiles the kernel moves: an input read at the coordinate an
output is written at must cover the output there, or those tiles of the output are computed
from the zeros that reads outside a tensor return.

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16)))
    def k(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        idx = hk.tile_coord(0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
        o[idx] = a[idx].load(T)        # a smaller than o: a LaunchError at this line

Pairs are found once per traced kernel: a load (or a copy into LDS) and a store (or a copy
out of LDS) of the same tile shape at the same hk.tile_coord operands, one of them a block
index (the grid walks the output; a coordinate of constants names a tile on purpose, even one
outside). Where the tile can be is known for a constant (one tile) or a block index (the grid's
tiles along it); other coordinates are not judged.
"""

import dataclasses

from hk import types
from hk.errors import LaunchError, Location

_DIMS = ("batch", "depth", "rows", "cols")


@dataclasses.dataclass(frozen=True)
class Pair:
    read: int           # parameter index of the tensor read
    written: int        # parameter index of the tensor written
    spans: tuple        # elements per coordinate unit, per dimension (batch, depth, rows, cols)
    reach: tuple        # per dimension: ("const", k), ("block", axis) or None (unknown)
    location: object    # the read's Location


def _location(op):
    import re

    m = re.match(r'loc\("(.*)":(\d+):(\d+)\)', str(op.location))
    return Location(m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def _reach(value):
    """Where a coordinate operand can be: ("const", k), ("block", 0..2) or None."""
    op = value.owner
    while op is not None and getattr(op, "name", None) == "arith.index_cast":
        op = op.operands[0].owner
    name = getattr(op, "name", None)
    from hk.interp.program import _number

    if name == "arith.constant":
        return ("const", _number(op.attributes["value"]))
    if name == "hk.block_idx":
        return ("block", _number(op.attributes["dim"]))
    return None


def _walk(block):
    for op in block.operations:
        op = op.operation
        yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _walk(inner)


def _spans(type_text):
    spec = types.parse_mlir_type(type_text)
    if isinstance(spec, (types.RT, types.ST)):
        return (1, 1, spec.rows, spec.cols)
    if isinstance(spec, (types.RV, types.SV)):
        return (1, 1, 1, spec.length)
    return None


def pairs(traced):
    """The (read, written) tile pairs of a traced kernel, remembered on it."""
    found = getattr(traced, "_shape_pairs", None)
    if found is not None:
        return found
    func = next(op for op in traced.module.body.operations if op.operation.name == "func.func")
    entry = func.operation.regions[0].blocks[0]
    params = {a: i for i, a in enumerate(entry.arguments)}
    reads, writes = {}, {}

    def note(table, tensor, coord, type_text, op):
        owner = coord.owner
        if tensor not in params or owner is None or owner.name != "hk.tile_coord":
            return
        spans = _spans(type_text)
        if spans is None:
            return
        key = (tuple(owner.operands), spans)
        table.setdefault(key, []).append((params[tensor], _location(op), owner))

    for op in _walk(entry):
        name = op.name
        if name == "hk.load":
            note(reads, op.operands[0], op.operands[1], str(op.results[0].type), op)
        elif name == "hk.copy_to_lds":
            note(reads, op.operands[0], op.operands[1], str(op.operands[2].type), op)
        elif name == "hk.store":
            note(writes, op.operands[1], op.operands[2], str(op.operands[0].type), op)
        elif name == "hk.copy_from_lds":
            note(writes, op.operands[2], op.operands[3], str(op.operands[0].type), op)
    found = []
    for key, rs in reads.items():
        for w, _, owner in writes.get(key, ()):
            for r, where, _ in rs:
                if r != w:
                    reach = tuple(_reach(v) for v in owner.operands)
                    if any(x is not None and x[0] == "block" for x in reach):
                        found.append(Pair(r, w, key[1], reach, where))
    traced._shape_pairs = found
    return found


def check(traced, args, grid):
    """Raises LaunchError when a read tensor does not cover the tiles of the written one that
    the grid reaches."""
    for p in pairs(traced):
        read, written = types.view4d(args[p.read].shape), types.view4d(args[p.written].shape)
        for d, (have, need, span, reach) in enumerate(zip(read, written, p.spans, p.reach)):
            if reach is None:
                continue
            kind, k = reach
            start, end = (k * span, (k + 1) * span) if kind == "const" else (0, grid[k] * span)
            have, need = min(have, end), min(need, end)
            if max(have, start) < need:
                r, w = traced.params[p.read].name, traced.params[p.written].name
                raise LaunchError(
                    "kernel %s: %s is read at the tile %s is written at, but %s has %d %s where %s "
                    "has %d: the elements of %s past %s's end would be computed from zeros"
                    % (traced.name, r, w, r, read[d], _DIMS[d], w, written[d], w, r),
                    location=p.location,
                    hint="pass %s with %s's extents, or read it at a coordinate of its own" % (r, w))
