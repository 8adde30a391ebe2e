"""The errors the emulator raises; all derive from hk.errors.HKError."""

from hk.errors import HKError


class EmuError(HKError):
    """The emulator cannot run this kernel: an instruction it lacks, a bad launch."""


class CodeObjectError(EmuError, ValueError):
    """The input is not a code object the emulator can load."""


class MemoryFault(EmuError):
    """A lane accessed an address outside every buffer (or outside LDS or scratch)."""


class HazardError(EmuError):
    """The kernel used a result before the wait that guarantees it, or raced a barrier."""
