"""hk-dsl: tile-level AMD GPU kernels written in Python.

    import hk

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
    def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
        t = hk.RT(hk.bf16, 16, 64)
        o[idx] = a[idx].load(t) + b[idx].load(t)

    add(a, b, out)   # traces, verifies, translates, compiles (once), launches
"""

__version__ = "0.1.0"

from hk import errors
from hk.dsl import arch, lds, math
from hk.dsl.control import range
from hk.dsl.kernel import Kernel, TracedKernel, kernel
from hk.dsl.ops import (add_col, add_row, broadcast, causal, cdiv, col_max, col_min, col_sum,
                        div_col, div_row, full, gather, iota, maximum, max_row, min_row, minimum,
                        mma, mma_AB, mma_ABt, mma_AtB, mma_AtBt, mul_col, mul_row, neg_infty, rand,
                        row_max, row_min, row_sum, scatter, sub_col, sub_row, tile_coord, transpose,
                        tril, triu, where, zeros)
from hk.types import (RT, RV, ST, SV, DType, Tensor, bf16, fp8e4m3, fp8e5m2, fp16, fp32, i8, i32)

__all__ = [
    "DType", "Kernel", "RT", "RV", "ST", "SV", "Tensor", "TracedKernel", "add_col", "add_row",
    "arch", "bf16", "broadcast", "causal", "cdiv", "col_max", "col_min", "col_sum", "div_col",
    "div_row", "errors", "fp16", "fp32", "fp8e4m3", "fp8e5m2", "full", "gather", "i32", "i8",
    "iota", "kernel", "lds", "math", "max_row", "maximum", "min_row", "minimum", "mma", "mma_AB",
    "mma_ABt", "mma_AtB", "mma_AtBt", "mul_col", "mul_row", "neg_infty", "rand", "range",
    "row_max", "row_min", "row_sum", "scatter", "sub_col", "sub_row", "tile_coord", "transpose",
    "tril", "triu", "where", "zeros",
]
