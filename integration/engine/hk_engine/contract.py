"""The contract of an engine's internals: what a plugin patches must be there, as it was written
against, before anything is patched.

    seams = [Seam("vllm.model_executor.layers.linear.UnquantizedLinearMethod.apply",
                  ("self", "layer", "x", "bias"))]
    problems = contract.check("vllm", vllm.__version__, ("0.33.",), seams)

Each problem is a line naming the seam and what differs; a plugin patches only when there are
none (a newer engine that moved one internal is left stock as a whole, not half patched).
"""

import dataclasses
import importlib
import inspect


@dataclasses.dataclass(frozen=True)
class Seam:
    """An internal a plugin relies on: a dotted path to a module attribute (a class, a function,
    a method, an enum member), and for a callable the names its parameters start with."""

    path: str
    params: tuple = None


def resolve(path):
    """(the object at a dotted path, its parent, its name): the longest importable module
    prefix, then attributes. Raises LookupError naming what is missing."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError as e:
            if i == 1:
                raise LookupError("cannot import %s (%s)" % (parts[0], e)) from None
            continue
        parent, name = None, parts[i - 1]
        for attr in parts[i:]:
            parent, name = obj, attr
            if not hasattr(obj, attr):
                raise LookupError("%s has no attribute %s" % (".".join(parts[:parts.index(attr)]), attr))
            obj = getattr(obj, attr)
        return obj, parent, name
    raise LookupError("cannot resolve %s" % path)


def _parameters(obj):
    try:
        return tuple(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return None


def check(engine, version, supported, seams):
    """Lines describing what is not as the plugin expects (empty: all is)."""
    problems = []
    if not any(version == s or version.startswith(s) for s in supported):
        problems.append("%s %s is not a version this plugin was written for (%s)"
                        % (engine, version, ", ".join(s + "*" if s.endswith(".") else s for s in supported)))
    for seam in seams:
        try:
            obj, _, _ = resolve(seam.path)
        except Exception as e:  # an engine module that fails to import is a missing seam
            problems.append("%s: %s" % (seam.path, e))
            continue
        if seam.params is not None:
            got = _parameters(obj)
            if got is None or got[:len(seam.params)] != tuple(seam.params):
                problems.append("%s takes (%s), not (%s, ...)" % (seam.path, ", ".join(got or ("?",)),
                                                                   ", ".join(seam.params)))
    return problems
