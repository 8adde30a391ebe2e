"""Argument kinds of hk.emu.launch beyond arrays and scalars."""


class ByValue:
    """A by-value argument whose bytes name device buffers (a struct holding pointers).

    `pack(alloc)` returns the argument's bytes; `alloc(array)` copies a numpy array or CPU torch
    tensor into device memory (and back after the run) and returns its address.
    """

    def __init__(self, pack):
        self.pack = pack
