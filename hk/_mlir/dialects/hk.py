"""The hk dialect's operations, generated from its ODS (hk/_mlir/dialects/_hk_ops_gen.py)."""

from ._hk_ops_gen import *  # noqa: F401,F403
from ._hk_ops_gen import _Dialect  # noqa: F401
from ._hk_enum_gen import *  # noqa: F401,F403
