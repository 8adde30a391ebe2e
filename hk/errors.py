"""The one error hierarchy of hk-dsl.

Every error a user can meet derives from HKError. Errors about a kernel carry the location of
the offending line of the user's source (file, line, column), print that line with a caret
under the column, and say what to do about it.

    HKError
      TraceError      a kernel cannot be traced as written (also a TypeError and ValueError)
      VerifyError     the passes refused the kernel (one of the traps, a budget, a wait)
      TargetError     an architecture hk-dsl does not know, or a feature it lacks
      ToolchainError  the compiler or a tool is missing
      CompileError    the device compiler rejected the C++
      ResourceError   the built kernel spills, uses scratch, or misses a resource limit
      LaunchError     a launch's arguments or device are wrong
      TuneError       a search space, a search or a tuned-choices file is wrong
"""

import dataclasses
import linecache
import os
import sys

_HK_ROOT = os.path.dirname(os.path.abspath(__file__)) + os.sep
_STDLIB = os.path.dirname(os.__file__) + os.sep


@dataclasses.dataclass(frozen=True)
class Location:
    """A place in the user's source."""

    file: str
    line: int
    col: int = 0

    def __str__(self):
        return "%s:%d:%d" % (self.file, self.line, self.col) if self.col else "%s:%d" % (self.file, self.line)

    def source_line(self):
        return linecache.getline(self.file, self.line).rstrip("\n")

    @classmethod
    def of_function(cls, fn):
        """Where the Python function `fn` is defined."""
        return cls(fn.__code__.co_filename, fn.__code__.co_firstlineno)


def _not_users(filename):
    """hk's own frames, generated code (dataclass methods are compiled from "<string>") and
    torch's (its op dispatch stands between a call of torch.ops.hk.* and hk)."""
    if filename.startswith(_HK_ROOT) or filename.startswith("<"):
        return True
    torch = sys.modules.get("torch")
    root = getattr(torch, "__file__", None)
    return bool(root) and filename.startswith(os.path.dirname(root) + os.sep)


def user_frame(depth=1):
    """The innermost stack frame outside hk and torch (the user's kernel code, or the line that
    calls an op)."""
    frame = sys._getframe(depth)
    while frame is not None and _not_users(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


_POSITIONS = {}


def frame_column(frame):
    """The 1-based column of the instruction `frame` executes (Python 3.11+), else 0."""
    code = frame.f_code
    positions = _POSITIONS.get(code)
    if positions is None:
        positions = list(code.co_positions()) if hasattr(code, "co_positions") else []
        _POSITIONS[code] = positions
    index = frame.f_lasti // 2
    if index < len(positions) and positions[index][2] is not None:
        return positions[index][2] + 1
    return 0


def user_location():
    """The Location of the user's line currently executing, or None."""
    frame = user_frame(2)
    if frame is None:
        return None
    return Location(frame.f_code.co_filename, frame.f_lineno, frame_column(frame))


class HKError(Exception):
    """Base class of every hk-dsl error.

    Without a location of its own, an error takes the user's line that is running when it is
    made: the kernel's line while tracing, the call (or build) at launch.
    """

    def __init__(self, message, *, location=None, hint=None, notes=()):
        self.message = message
        self.location = location or user_location()
        self.hint = hint
        self.notes = tuple(notes)
        super().__init__(self._format())

    def _format(self):
        text = self.message
        if self.location:
            text = "%s: %s" % (self.location, text)
            line = self.location.source_line() if isinstance(self.location, Location) else ""
            if line:
                text += "\n    " + line
                if getattr(self.location, "col", 0):
                    indent = len(line) - len(line.lstrip())
                    caret = max(self.location.col - 1, indent)
                    text += "\n    " + " " * caret + "^"
        for where, note in self.notes:
            text += "\n  note: %s%s" % ("%s: " % where if where else "", note)
        if self.hint:
            text += "\n  hint: " + self.hint
        return text


def as_hk_error(exc, cls, what):
    """An hk error of class `cls` for `exc`, a non-hk exception raised while hk ran the user's
    code (tracing a kernel, launching it), located at the innermost user frame: raised inside hk,
    a value hk did not expect, passed from that line; raised by the user's code itself (a typo,
    a call with the wrong arguments), that line's own error, named."""
    tb, user, inside = exc.__traceback__, None, False
    while tb is not None:  # inside: an hk frame below the innermost user frame
        name = tb.tb_frame.f_code.co_filename
        if name.startswith(_HK_ROOT):
            inside = True
        elif not name.startswith("<") and "site-packages" not in name and not name.startswith(_STDLIB):
            user, inside = Location(name, tb.tb_lineno), False
        tb = tb.tb_next
    if not inside:
        return cls("%s: this line raised %s: %s" % (what, type(exc).__name__, exc), location=user)
    return cls("%s: hk cannot use what this line passes it (%s: %s)" % (what, type(exc).__name__, exc),
               location=user, hint="check the types and values of the arguments on this line")


class TraceError(HKError, TypeError, ValueError):
    """The kernel cannot be traced as written: a bad shape, dtype, operand or construct.

    Raised while tracing; it names the user's line.
    """


class VerifyError(HKError):
    """The passes refused the kernel: the diagnostics point at the user's lines."""

    def __init__(self, message, *, location=None, hint=None, notes=(), diagnostics=()):
        self.diagnostics = list(diagnostics)
        super().__init__(message, location=location, hint=hint, notes=notes)


class TargetError(HKError, ValueError):
    """An architecture hk-dsl does not know, or a feature the chosen one lacks."""


class ToolchainError(HKError):
    """The compiler or a tool it needs is missing or unusable."""


class CompileError(HKError):
    """The device compiler rejected generated or user C++."""


class ResourceError(HKError):
    """A built kernel breaks a resource limit: spills, scratch, VGPRs, occupancy, LDS."""


class LaunchError(HKError):
    """A launch cannot happen: wrong arguments, no device, no runner for HK_DEVICE."""


class TuneError(HKError, ValueError):
    """A search space, a search or a tuned-choices file is wrong: an empty space, a knob the
    kernel does not take, constraints no candidate meets, a search whose every candidate was
    refused."""


class HKWarning(UserWarning):
    """Something hk-dsl did or found that the user should know about, but that does not stop
    the kernel: a damaged cache entry rebuilt, a layout that costs bank conflicts."""


def warn(message, *, location=None):
    """Issues an HKWarning attributed to `location`, else to the user's line currently executing
    (so Python's filters and the printed file:line point at the user's code, not hk's)."""
    import warnings

    if location is None:
        frame = user_frame(2)
        if frame is not None:
            location = Location(frame.f_code.co_filename, frame.f_lineno)
    if location is None:
        warnings.warn(HKWarning(message), stacklevel=2)
    else:
        warnings.warn_explicit(HKWarning(message), HKWarning, location.file, location.line)
