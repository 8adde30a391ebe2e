"""Index vectors (token ids, positions, cache slots) as the ops read them, with no copy: an
int32 vector as [n, 1], an int64 one as [n, 2] int32 words, of which the low one is the index
(the indices the engines pass are below 2^31). Slots past the vector's end read as -1, which a
gather reads as zeros and a scatter drops, so a partial last tile of 16 touches nothing.

    ids = indices.view(op, "positions", positions)      # on the launch side
    rows = indices.load(ids, t, hk.bf16)                # in a kernel: ids 16t .. 16t+15, for
                                                        # gathering bf16 rows
"""

import torch

import hk
from hk.ops import registry

TILE = 16
NONE = -2 ** 31


def view(op, name, t):
    """`t` flattened as the kernels read it: [n, 1] (int32) or [n, 2] (int64) int32 words."""
    if t.dtype not in (torch.int32, torch.int64):
        raise registry.LaunchError("hk.ops.%s: %s are %s" % (op, name, t.dtype), hint="pass int64 or int32")
    flat = t.reshape(-1)
    return flat.view(-1, 1) if t.dtype == torch.int32 else flat.view(torch.int32).view(-1, 2)


@hk.func
def masked(ids, tile, like):
    """Indices TILE * tile .. TILE * tile + 15 as the i32 tile `load` reduces: index r in column 0
    of row r, NONE elsewhere and past the vector's end (for masking more before the reduction)."""
    # An i32 tile whose row vectors are distributed as the moved tile's are: a column-layout one
    # for 16- and 8-bit tiles, a row-layout one for 32-bit ones.
    spec = hk.RT(hk.i32, TILE, 16, "col" if like.is_operand else "row")
    words = ids[0, 0, tile, 0].load(spec)
    low = hk.where(hk.iota(spec, "col") == 0, words, NONE)
    return hk.where(hk.iota(spec, "row") < ids.rows - tile * TILE, low, NONE)


@hk.func
def load(ids, tile, like):
    """Indices TILE * tile .. TILE * tile + 15 as an i32 "col" vector (one per tile row), to
    gather or scatter tiles of dtype `like`."""
    return hk.row_max(masked(ids, tile, like))
