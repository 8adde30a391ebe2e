"""What the command-line tools share: their runner (absl flags, --help, exit codes), loading a
user's kernel file and finding its kernels, and NAME=VALUE flags read as Python literals."""

import ast
import importlib.util
import os
import sys


class UsageError(Exception):
    """The command line, or a file it names, is wrong: the tool exits 2 with this message."""


def load_module(path):
    """The module of the Python file `path`, run as a script would be: its directory importable
    (the file may import its neighbours, as the examples import common.py)."""
    name = "_hk_file_" + os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def parse_constants(items):
    """{NAME: value} of NAME=VALUE items; a value that is not a Python literal stays a string."""
    constants = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError("a constant is NAME=VALUE, not %r" % item)
        try:
            constants[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            constants[key] = value
    return constants


def load_user_module(path):
    """load_module for a path a user gave: UsageError when there is no such file or it fails to
    import (with what it raised)."""
    if not path or not os.path.isfile(path):
        raise UsageError("no such file: %r (give the kernel file with --src)" % path)
    try:
        return load_module(path)
    except Exception as e:  # the user's file: say what it raised, where
        raise UsageError("importing %s failed: %s: %s" % (path, type(e).__name__, e)) from e


def kernels_of(module, names=()):
    """[(name, Kernel)] of a module: those named, else every public @hk.kernel it defines."""
    import hk

    found = {n: v for n, v in vars(module).items() if isinstance(v, hk.Kernel) and not n.startswith("_")}
    names = list(dict.fromkeys(names))
    if names:
        missing = [n for n in names if n not in found]
        if missing:
            raise UsageError("%s has no @hk.kernel named %s (it has: %s)"
                             % (module.__file__, ", ".join(missing), ", ".join(sorted(found)) or "none"))
        return [(n, found[n]) for n in names]
    if not found:
        raise UsageError("%s defines no @hk.kernel" % module.__file__)
    return sorted(found.items())


def divisors_of(items):
    """--divisor values: one integer for every tensor, or {name: integer}; None when not given."""
    try:
        if len(items) == 1 and "=" not in items[0]:
            return int(items[0])
        return {k: int(v) for k, v in parse_constants(items).items()} or None
    except (TypeError, ValueError):
        raise UsageError("a divisor is an integer, or NAME=integer: %s" % ", ".join(items)) from None


def check_archs(archs):
    """UsageError unless every name is a target hk knows."""
    from hk.errors import HKError
    from hk.target import facts

    for arch in archs:
        try:
            facts.target(arch)
        except HKError as e:
            raise UsageError(str(e)) from e


def _flags_help(FLAGS):
    # The tool's own flags, not absl's (--logtostderr and the like are no concern of a user's).
    return "\n".join(FLAGS.module_help(module) for module in FLAGS.flags_by_module_dict()
                     if not module.startswith("absl."))


def _described(error, script):
    """An error as a tool prints it: an hk error that took the tool's own line for its location
    (it names no line of the user's) says its message and hint without it."""
    from hk.errors import HKError

    location = getattr(error, "location", None)
    if isinstance(error, HKError) and location and os.path.realpath(str(location.file)) == os.path.realpath(script):
        return error.message + ("\n  hint: " + error.hint if error.hint else "")
    return str(error)


def run_tool(name, doc, define_flags, main, argv=None):
    """Runs a command-line tool's `main(argv) -> exit code` under the conventions every hk tool
    keeps: absl flags, --help printing `doc` and the flags (exit 0), and exit 2 with one line
    naming the tool for a wrong command (a malformed flag, a UsageError, an hk error, a file that
    cannot be read), never a traceback. What main returns is the exit code: 0 clean, 1 findings."""
    from absl import flags

    from hk.errors import HKError

    argv = list(sys.argv if argv is None else argv)
    FLAGS = flags.FLAGS
    define_flags()
    if any(a in ("-h", "--help", "--helpshort", "--helpfull") for a in argv[1:]):
        print(doc.strip())
        text = _flags_help(FLAGS)
        if text:
            print("\nflags:\n" + text)
        sys.exit(0)
    try:
        rest = FLAGS(argv)
    except flags.Error as e:
        print("%s: error: %s (see --help)" % (name, e), file=sys.stderr)
        sys.exit(2)
    try:
        code = main(rest)
    except (UsageError, HKError) as e:
        print("%s: error: %s" % (name, _described(e, argv[0])), file=sys.stderr)
        code = 2
    except OSError as e:
        what = e.filename if e.filename else ""
        print("%s: error: %s%s" % (name, "%s: " % what if what else "", e.strerror or e), file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)
