"""hk's vLLM plugin: vLLM 0.33's linear layers, AWQ and W8A8 layers, MoE experts, RMSNorm and
attention on hk's kernels, where the routing table of the GPU's target sends them.

vLLM loads it in every process through its general-plugin entry point (`vllm.general_plugins`:
`hk = hk_vllm:register`), before any model is built. What it patches, and the switches:

    HK_VLLM_LINEAR     UnquantizedLinearMethod.apply (every unquantized linear layer)
    HK_VLLM_AWQ        AutoAWQLinearMethod.apply (4-bit AWQ; the path vLLM takes on ROCm)
    HK_VLLM_MOE        TritonExperts.apply (the MoE experts' two grouped GEMMs)
    HK_VLLM_NORM       an "hk" provider of vllm.ir's rms_norm and fused_add_rms_norm, first in
                       KernelConfig's IR op priority
    HK_VLLM_ROTARY     vllm._custom_ops.rotary_embedding (RotaryEmbedding's custom-op forwards)
    HK_VLLM_ACTIVATION SiluAndMul.forward_cuda (its CUDA and ROCm forward)
    HK_VLLM_W8A8       hk's int8, fp8 and block-scaled fp8 W8A8 kernel classes, first in vLLM's
                       scaled-mm kernel lists (CompressedTensors W8A8, Fp8LinearMethod, 128 x 128
                       block-scaled fp8 included); see hk_vllm.w8a8
    HK_VLLM_ATTENTION  hk's attention backend, registered as AttentionBackendEnum.CUSTOM (select
                       it with --attention-backend CUSTOM)

HK_VLLM=0 turns the plugin off. Routes are counted (hk_engine.counters; HK_ENGINE_COUNTERS=-
prints them at exit).

HK_VLLM_CPU=1 (off unless set) runs vLLM's CPU build on hk's interpreter or emulator, for testing
without an AMD GPU: see hk_vllm.cpu.
"""


def register():
    """The entry point: checks vLLM against the plugin's contract and patches it (once per
    process; a vLLM that differs is left stock, with one warning)."""
    from hk_vllm import cpu, plugin

    patched = plugin.plugin().register()
    if cpu.requested():
        cpu.install(plugin.plugin())
    return patched
