"""The 8-bit GEMMs hk.ops launches (hk/ops/mm8.py), bound at module level so that the kernel
library builds and gates them as it does the examples: the very kernels int8_scaled_mm and
scaled_mm launch, bf16 out, without bias.

    int8            W8A8: int8 x int8, int32 accumulator, per-token and per-channel scales
    fp8_rowwise_*   e4m3 x e4m3 with per-token and per-column scales
    fp8_block_*     e4m3 x e4m3 with DeepSeek's 128 x 128 block scales
    w8a16_*         bf16 activations x e4m3 weights, per-column scales
    fp8_*_fnuz      the rowwise and block kernels on FNUZ e4m3 (float8_e4m3fnuz, vLLM's and
                    SGLang's fp8 on MI300): gfx942 only, the one target that takes FNUZ, on its
                    fp8 matrix instruction
    int8_fast       W8A8 on the 16-bit GEMM's LDS-staged schedule (mm8.mm8_fast_kernel): what
                    int8_scaled_mm runs when rows are 16-byte multiples and there is no zero point
                    (the kernel above takes the rest)
    fp8_fast_*      e4m3 x e4m3 likewise, per-tensor or rowwise, where the target's fp8
                    instruction reads the format: OCP on gfx1201 and gfx950, FNUZ on gfx942
    w8a16_fast_*    W8A16 on the same schedule, the e4m3 weight staged as fp8 and its tiles
                    converted to bf16 after each LDS read: what scaled_mm runs for 16-byte rows
    fp8_converted_fast_*
                    OCP e4m3 x e4m3 likewise, both converted to bf16, where no instruction reads
                    OCP fp8 (gfx1100; gfx942, whose fp8 instructions read FNUZ)
    fp8_block_fast_* e4m3 x e4m3 in the target's format with 128 x 128 block scales on both
                    operands, K 128 a step
    fp8_block_converted_fast_*
                    OCP e4m3 x e4m3 with block scales, both converted to bf16 (the targets of
                    fp8_converted_fast_*), a group of K several steps

Where a *_fast kernel exists, its direct-from-memory counterpart is what hk.ops launches for rows
that are not 16-byte multiples. The fp8 kernels differ by target (mm8.fp8_plan): the fp8 matrix instruction on gfx1201 and gfx950,
tiles converted to bf16 on gfx1100, and on gfx942 (whose fp8 matrix instructions read FNUZ) the OCP
bytes read as int8 and decoded; hence one name per target, <kernel>_<arch>.
"""

import torch

import hk
from hk.ops import mm8
from hk.target import facts

E4M3 = torch.float8_e4m3fn
E4M3_FNUZ = torch.float8_e4m3fnuz

int8 = mm8.mm8_kernel(hk.i8, hk.i8, hk.i8, hk.bf16)
int8_fast = mm8.mm8_fast_kernel(hk.i8, hk.bf16)

for _arch in facts.archs():
    globals()["fp8_rowwise_" + _arch] = mm8.mm8_kernel(*mm8.fp8_plan(E4M3, E4M3, _arch), hk.bf16)
    globals()["fp8_block_" + _arch] = mm8.mm8_kernel(*mm8.fp8_plan(E4M3, E4M3, _arch), hk.bf16, block=True)
    globals()["w8a16_" + _arch] = mm8.mm8_kernel(*mm8.fp8_plan(torch.bfloat16, E4M3, _arch), hk.bf16)
    if facts.target(_arch).fp8_format:
        fnuz = facts.target(_arch).fp8_format == "fnuz"
        native = hk.fp8e4m3fnuz if fnuz else hk.fp8e4m3
        globals()["fp8_fast_" + _arch] = mm8.mm8_fast_kernel(native, hk.bf16)
        globals()["fp8_block_fast_" + _arch] = mm8.mm8_fast_kernel(native, hk.bf16, block="ab")
    # The converted paths on the LDS-staged schedule: W8A16 everywhere, and OCP e4m3 x e4m3
    # where the target has no fp8 instruction that reads it (gfx1100; gfx942 decodes the bytes).
    # (OCP bytes are staged typed, as hk.ops passes them.)
    globals()["w8a16_fast_" + _arch] = mm8.mm8_fast_kernel(hk.bf16, hk.bf16, False, hk.bf16, hk.fp8e4m3)
    if mm8.fp8_plan(E4M3, E4M3, _arch)[2] == hk.bf16:
        globals()["fp8_converted_fast_" + _arch] = mm8.mm8_fast_kernel(hk.bf16, hk.bf16, False, hk.fp8e4m3,
                                                                       hk.fp8e4m3)
        globals()["fp8_block_converted_fast_" + _arch] = mm8.mm8_fast_kernel(hk.bf16, hk.bf16, False, hk.fp8e4m3,
                                                                             hk.fp8e4m3, block="ab")

# FNUZ where the target's fp8 is FNUZ (hk.ops refuses it elsewhere); the plan is the fp8 MFMA.
for _arch in facts.archs():
    if facts.target(_arch).fp8_format == "fnuz":
        globals()["fp8_rowwise_fnuz_" + _arch] = mm8.mm8_kernel(*mm8.fp8_plan(E4M3_FNUZ, E4M3_FNUZ, _arch), hk.bf16)
        globals()["fp8_block_fnuz_" + _arch] = mm8.mm8_kernel(*mm8.fp8_plan(E4M3_FNUZ, E4M3_FNUZ, _arch), hk.bf16,
                                                             block=True)
