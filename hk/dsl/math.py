"""hk.math: elementwise functions of register tiles and vectors."""

from hk.dsl.ops import _unary, maximum, minimum  # noqa: F401


def exp(x):
    return _unary("exp", x)


def exp2(x):
    return _unary("exp2", x)


def log(x):
    return _unary("log", x)


def log2(x):
    return _unary("log2", x)


def abs(x):  # noqa: A001 - the language's name
    return _unary("abs", x)


def neg(x):
    return _unary("neg", x)


def relu(x):
    return _unary("relu", x)


def gelu(x):
    """GELU, tanh approximation."""
    return _unary("gelu", x)


def silu(x):
    return _unary("silu", x)


def sqrt(x):
    return _unary("sqrt", x)


def rsqrt(x):
    return _unary("rsqrt", x)
