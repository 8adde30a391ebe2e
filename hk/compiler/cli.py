"""What the command-line tools share: loading a user's kernel file, and NAME=VALUE flags read
as Python literals."""

import ast
import importlib.util
import os
import sys


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
        if not sep:
            raise SystemExit("a constant is NAME=VALUE, not %r" % item)
        try:
            constants[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            constants[key] = value
    return constants
