"""A workgroup's LDS on the interpreter, and the races between its waves.

The waves of a workgroup are ordered only by barriers. Between two barriers, a read of an
element another wave wrote, or a write over an element another wave read or wrote, is a race:
compiled code may see either order, whatever order the interpreter runs the waves in. So each
element keeps who wrote it last and in which barrier interval, and which waves read it in the
current one, and an access that meets another wave's in the same interval raises, naming both
lines. A workgroup copy (hk.lds.copy_to, commit, copy_from) is every wave's: each wave moves a
share of it, so any other access to its elements in the same interval races with it.
"""

import torch

NOBODY = -1   # no write yet
GROUP = -2    # a workgroup copy wrote it


class Lds:
    """One workgroup's LDS: its allocations and the barrier interval its waves are in."""

    def __init__(self, warps):
        self.warps = warps
        self.interval = 0
        self.tiles = {}
        self.ops = []      # the operations the elements' records name, by index
        self._op_ids = {}

    def alloc(self, key, shape, dtype):
        tile = self.tiles.get(key)
        if tile is None:
            tile = self.tiles[key] = SharedTile(self, torch.zeros(shape, dtype=dtype),
                                                _Shadow.new(shape) if self.warps > 1 else None)
        return tile

    def barrier(self):
        """Every wave has met at a barrier: a new interval begins."""
        self.interval += 1

    def op_id(self, op):
        """The index of `op` (one object per operation, shared by every wave's steps)."""
        i = self._op_ids.get(id(op))
        if i is None:
            i = self._op_ids[id(op)] = len(self.ops)
            self.ops.append(op)
        return i


class _Shadow:
    """Per element: the last writer (a wave, GROUP or NOBODY), the interval and the operation
    of that write; the waves that read it (a bit each) in interval `read_in`, and the last
    reading operation."""

    FIELDS = ("writer", "written_in", "write_op", "readers", "read_in", "read_op")

    def __init__(self, tensors):
        self.t = tensors

    @classmethod
    def new(cls, shape):
        dtypes = (torch.int16, torch.int32, torch.int32, torch.int64, torch.int32, torch.int32)
        return cls([torch.full(shape, NOBODY if i in (0, 1, 4) else 0, dtype=d) for i, d in enumerate(dtypes)])

    def __getitem__(self, index):
        return _Shadow([t[index] for t in self.t])

    def __getattr__(self, name):
        return self.t[_Shadow.FIELDS.index(name)]


class SharedTile:
    """A shared tile or vector (buffers first), or a view of one, with its elements' records."""

    __slots__ = ("lds", "data", "shadow")

    def __init__(self, lds, data, shadow):
        self.lds, self.data, self.shadow = lds, data, shadow

    @property
    def shape(self):
        return self.data.shape

    def view(self, buffer, rows, cols):
        """Rows and columns (slices) of one buffer, as a shared tile of one buffer."""
        index = (slice(buffer, buffer + 1), rows, cols)
        return SharedTile(self.lds, self.data[index], self.shadow[index] if self.shadow else None)

    def read(self, buffer, wave, op, group=False):
        """Buffer `buffer`'s elements, read by `wave` (or by every wave: a workgroup copy)."""
        data = self.data[buffer]
        if self.shadow is None:
            return data
        s, now = self.shadow[buffer], self.lds.interval
        raced = s.written_in == now
        if not group:
            raced &= s.writer != wave.warp
        if bool(raced.any()):
            self._race(raced, s.write_op, s.writer, wave, op, "reads", "wrote", "write", "read")
        bits = self._all() if group else 1 << wave.warp
        s.readers.copy_(torch.where(s.read_in == now, s.readers | bits, torch.full_like(s.readers, bits)))
        s.read_in.fill_(now)
        s.read_op.fill_(self.lds.op_id(op))
        return data

    def write(self, buffer, value, wave, op, group=False):
        """Writes `value` into buffer `buffer`, by `wave` (or by every wave: a workgroup copy)."""
        if self.shadow is not None:
            s, now, me = self.shadow[buffer], self.lds.interval, self.lds.op_id(op)
            others = self._all() if group else self._all() & ~(1 << wave.warp)
            read = (s.read_in == now) & ((s.readers & others) != 0)
            if bool(read.any()):
                self._race(read, s.read_op, None, wave, op, "writes over", "read", "read", "write")
            written = s.written_in == now
            written &= ~((s.writer == GROUP) & (s.write_op == me)) if group else s.writer != wave.warp
            if bool(written.any()):
                self._race(written, s.write_op, s.writer, wave, op, "writes over", "wrote", "write", "write")
            s.writer.fill_(GROUP if group else wave.warp)
            s.written_in.fill_(now)
            s.write_op.fill_(me)
        self.data[buffer].copy_(value)

    def _all(self):
        return (1 << self.lds.warps) - 1

    def _race(self, where, ops, writers, wave, op, verb, their, first, then):
        from hk.interp.program import fail, location_of

        at = tuple(int(i) for i in where.nonzero()[0])
        other = self.lds.ops[int(ops[at])]
        if writers is not None and int(writers[at]) == GROUP:
            who = "the workgroup copy at %s" % location_of(other)
        elif writers is not None:
            who = "wave %d at %s" % (int(writers[at]), location_of(other))
        else:
            who = "another wave at %s" % location_of(other)
        element = "element %s" % (at,) if len(at) > 1 else "element %d" % at[0]
        fail(op, wave,
             "LDS race: wave %d %s %s of the shared tile that %s %s in the same barrier interval "
             "(%d element(s) in all)" % (wave.warp, verb, element, who, their, int(where.sum())),
             hint="waves are ordered only by barriers: add hk.arch.barrier() between the %s and "
                  "the %s" % (first, then),
             notes=[(location_of(other), "the %s by another wave" % first)])

