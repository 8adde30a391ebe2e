"""What the command-line tools share: NAME=VALUE flags read as Python literals."""

import ast


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
