"""hk.math: elementwise functions of register tiles and vectors (maximum and minimum also of
device scalars)."""

from hk.dsl.ops import _unary, maximum, minimum  # noqa: F401


def exp(x):
    return _unary("exp", x)


def exp2(x, ftz=False):
    """2**x. With ftz=True, results below 2**-126 are 0 instead of denormals: the hardware's own
    instruction, without the scaling the exact form needs around it (softmax's exponentials,
    which are at most 1 and whose tiny terms vanish in the sum anyway)."""
    return _unary("exp2_ftz" if ftz else "exp2", x)


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


def round(x):  # noqa: A001 - the language's name
    """To the nearest integer, ties to even (as torch.round); the dtype stays."""
    return _unary("round", x)


def floor(x):
    return _unary("floor", x)


def sin(x):
    return _unary("sin", x)


def cos(x):
    return _unary("cos", x)


def tanh(x):
    return _unary("tanh", x)


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return _unary("sigmoid", x)


def pow(x, y):  # noqa: A001 - the language's name
    """x ** y elementwise, for floating-point tiles; y a tile of x's type or a scalar."""
    from hk.dsl.ops import _pow

    return _pow(x, y)
