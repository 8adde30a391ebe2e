"""The one error hierarchy of hk-dsl.

Every error a user can meet derives from HKError. Errors about the user's kernel carry the
location (file:line:col) of the offending source line and say what to do about it.
"""


class HKError(Exception):
    """Base class of every hk-dsl error."""

    def __init__(self, message, *, location=None, hint=None):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self._format())

    def _format(self):
        text = self.message
        if self.location:
            text = "%s: %s" % (self.location, text)
        if self.hint:
            text += "\n  hint: " + self.hint
        return text


class TargetError(HKError, ValueError):
    """An architecture hk-dsl does not know, or a feature the chosen one lacks."""


class ToolchainError(HKError):
    """The compiler or a tool it needs is missing or unusable."""


class CompileError(HKError):
    """The device compiler rejected generated or user C++."""


class ResourceError(HKError):
    """A built kernel breaks a resource limit: spills, scratch, VGPRs, occupancy, LDS."""
