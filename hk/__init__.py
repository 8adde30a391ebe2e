"""hk-dsl: tile-level AMD GPU kernels written in Python.

    import hk

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
    def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
        t = hk.RT(hk.bf16, 16, 64)
        o[idx] = a[idx].load(t) + b[idx].load(t)

    add(a, b, out)   # traces, verifies, translates, compiles (once), launches

The names below load on first use, so `import hk.errors` or the compile path's tools do not
pull in the language and its MLIR bindings.
"""

import importlib

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "Kernel": "hk.dsl.kernel", "TracedKernel": "hk.dsl.kernel", "kernel": "hk.dsl.kernel",
    "range": "hk.dsl.control", "Func": "hk.dsl.func", "func": "hk.dsl.func",
    "DType": "hk.types", "RT": "hk.types", "RV": "hk.types", "ST": "hk.types", "SV": "hk.types",
    "Tensor": "hk.types", "bf16": "hk.types", "fp16": "hk.types", "fp32": "hk.types",
    "fp8e4m3": "hk.types", "fp8e5m2": "hk.types", "fp8e4m3fnuz": "hk.types",
    "fp8e5m2fnuz": "hk.types", "i8": "hk.types", "i32": "hk.types",
    "space": "hk.autotune.space",
}
for _name in ("add_col", "add_row", "broadcast", "causal", "cdiv", "col_max", "col_min", "col_sum",
              "div_col", "div_row", "full", "gather", "iota", "max_col", "max_row", "maximum", "min_col", "min_row",
              "minimum", "mma", "mma_AB", "mma_ABt", "mma_AtB", "mma_AtBt", "mul_col", "mul_row",
              "neg_infty", "rand", "row_max", "row_min", "row_sum", "scatter", "sub_col", "sub_row",
              "tile_coord", "transpose", "tril", "triu", "where", "zeros"):
    _EXPORTS[_name] = "hk.dsl.ops"
_SUBMODULES = {"arch": "hk.dsl.arch", "lds": "hk.dsl.lds", "math": "hk.dsl.math", "errors": "hk.errors",
               "autotune": "hk.autotune", "tuned": "hk.tuned"}

__all__ = sorted(list(_EXPORTS) + list(_SUBMODULES))


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name])
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError("module 'hk' has no attribute %r" % name)


def __dir__():
    return __all__
