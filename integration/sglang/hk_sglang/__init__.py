"""hk's SGLang plugin: SGLang 0.5.23's linear layers, AWQ and W8A8 layers, MoE experts, RMSNorm
and attention on hk's kernels, where the routing table of the GPU's target sends them.

SGLang loads it in every process through its general-plugin entry point (`sglang.srt.plugins`:
`hk = hk_sglang:register`), before any model is built; the patches are REPLACE hooks of SGLang's
HookRegistry. What it patches, and the switches:

    HK_SGLANG_LINEAR     UnquantizedLinearMethod.apply (every unquantized linear layer)
    HK_SGLANG_AWQ        AWQLinearKernel.apply (4-bit AWQ's dequantize and GEMM on CUDA and ROCm)
    HK_SGLANG_MOE        fused_experts of the Triton MoE runner (the experts' two grouped GEMMs)
    HK_SGLANG_NORM       RMSNorm.forward_cuda, forward_hip and forward_native
    HK_SGLANG_ATTENTION  the attention backend "hk" (select it with --attention-backend hk and a
                         --page-size that is a multiple of 16)
    HK_SGLANG_W8A8       W8A8Int8LinearMethod.apply (w8a8_int8 linear layers), apply_fp8_linear
                         (the linear layers of w8a8_fp8 and fp8) and triton_w8a8_block_fp8_linear
                         (fp8 and CompressedTensors layers with 128 x 128 weight blocks, where
                         SGLang's block dispatcher takes its Triton GEMM: ROCm without AITER)

HK_SGLANG=0 turns the plugin off. Routes are counted (hk_engine.counters; HK_ENGINE_COUNTERS=-
prints them at exit).

HK_SGLANG_CPU=1 (off unless set) runs SGLang on hk's interpreter or emulator on the CPU, for
testing without an AMD GPU: see hk_sglang.cpu.
"""


def register():
    """The entry point: checks SGLang against the plugin's contract and patches it (once per
    process; an SGLang that differs is left stock, with one warning)."""
    from hk_sglang import cpu, plugin

    patched = plugin.plugin().register()
    if cpu.requested():
        cpu.install(plugin.plugin())
    return patched
