"""Index vectors (token ids, positions, cache slots) as the ops read them, with no copy: an
int32 vector as [n, 1], an int64 one as [n, 2] int32 words (low, high). An index outside
[0, 2^31) (for int64, one whose high word is not 0) and a slot past the vector's end read as
NONE, which a gather reads as zeros and a scatter drops, so a partial last tile of 16 touches
nothing and an int64 index is never taken for its low word.

    ids = indices.view(op, "positions", positions)      # on the launch side
    rows = indices.load(ids, t, hk.bf16)                # in a kernel: ids 16t .. 16t+15, for
                                                        # gathering bf16 rows
"""

import torch

import hk
from hk.ops import registry

TILE = 16
NONE = -2 ** 31
MAX = 2 ** 31 - 1


def view(op, name, t):
    """`t` flattened as the kernels read it: [n, 1] (int32) or [n, 2] (int64) int32 words."""
    if t.dtype not in (torch.int32, torch.int64):
        raise registry.LaunchError("hk.ops.%s: %s are %s" % (op, name, t.dtype), hint="pass int64 or int32")
    flat = t.reshape(-1)
    return flat.view(-1, 1) if t.dtype == torch.int32 else flat.view(torch.int32).view(-1, 2)


@hk.func
def load(ids, tile, like):
    """Indices TILE * tile .. TILE * tile + 15 as an i32 "col" vector (one per tile row), to
    gather or scatter tiles of dtype `like`."""
    # An i32 tile whose row vectors are distributed as the moved tile's are: a column-layout one
    # for 16- and 8-bit tiles, a row-layout one for 32-bit ones.
    spec = hk.RT(hk.i32, TILE, 16, "col" if like.is_operand else "row")
    words = ids[0, 0, tile, 0].load(spec)
    # A row's minimum over its low word (column 0) and the other columns' verdicts: MAX where
    # the word is 0 (an int64 index's high word inside int32, or a column past the vector's),
    # else NONE.
    row = hk.where(hk.iota(spec, "col") == 0, words, hk.where(words == 0, hk.full(spec, MAX), NONE))
    return hk.row_min(hk.where(hk.iota(spec, "row") < ids.rows - tile * TILE, row, NONE))


@hk.func
def masked(ids, tile, like):
    """The indices of `load` as the i32 tile it reduces: index r in column 0 of row r, NONE
    elsewhere (for masking more before a reduction)."""
    spec = hk.RT(hk.i32, TILE, 16, "col" if like.is_operand else "row")
    return hk.where(hk.iota(spec, "col") == 0, hk.broadcast(load(ids, tile, like), spec), NONE)
