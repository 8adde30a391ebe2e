"""Argument kinds of hk.emu.launch beyond arrays and scalars."""


class ByValue:
    """A by-value argument whose bytes name device buffers (a struct holding pointers).

    `pack(alloc)` returns the argument's bytes; `alloc(array)` copies a numpy array or CPU torch
    tensor into device memory (and back after the run) and returns its address.
    """

    def __init__(self, pack):
        self.pack = pack


class Zeros:
    """A buffer of `nbytes` zero bytes: placed in device memory without a host copy, and not
    copied back (its pages cost memory only where the kernel writes). For runs whose results do
    not matter, such as hk.perf's profiles of launches at full size."""

    def __init__(self, nbytes):
        if int(nbytes) < 0:
            raise ValueError("a buffer has a size of zero or more bytes, not %r" % (nbytes,))
        self.nbytes = int(nbytes)
