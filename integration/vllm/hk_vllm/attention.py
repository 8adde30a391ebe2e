"""hk's attention backend: vLLM 0.33's paged KV cache written by hk.ops.reshape_and_cache_flash
and read by hk.ops.paged_attention_prefill and paged_attention_decode, registered as
AttentionBackendEnum.CUSTOM (`--attention-backend CUSTOM`). Its name is "CUSTOM": vLLM's
Attention layer looks its backend up in AttentionBackendEnum by get_name(), on every platform.

It is Triton's backend (the one vLLM falls back to on ROCm) with hk's kernels where the routing
table sends a call: the same KV cache layout (a layer's cache [blocks, kv_heads, block_size,
2 * head_size], each head's K then its V, which the hk ops read in place), the same metadata, and
Triton's kernels for everything else: what hk does not cover (sliding windows, ALiBi, soft caps,
sinks, fp8 caches other than per-tensor e4m3 of the OCP format, encoders, non-causal batches,
quantized outputs) and what the table keeps on the engine (decode at few sequences on gfx1100).
Blocks must be contiguous per layer (the LBNHC cache layout, which the backend asks for).

kv_cache_dtype "fp8" (or "fp8_e4m3") layers with bf16 queries are served too: the cache holds
e4m3 bytes (uint8), written and read with the layer's _k_scale and _v_scale tensors as Triton's
kernels write and read them, so either side of a route reads what the other wrote. Where the
platform's fp8 is FNUZ (float8_e4m3fnuz) the cache is not hk's format, and Triton serves it.

Under CUDA graphs it supports uniform single-token decode batches: prefill takes its longest
query as a launch dimension, which a captured graph would freeze.
"""

import functools

import torch

from hk_engine import Patch
from hk_engine.contract import Seam
from hk_engine.ops import attention_facts
from hk_engine.plugin import dispatch
from hk_engine.routing import dtype_name
from hk_vllm.common import counter

FP8 = ("fp8", "fp8_e4m3")  # the kv_cache_dtype names of a per-tensor e4m3 cache, which hk serves
NAME = "CUSTOM"  # the AttentionBackendEnum member it is registered as
CLASS_PATH = "hk_vllm.attention.HKAttentionBackend"
_TRITON = "vllm.v1.attention.backends.triton_attn"

SEAMS = [
    Seam("vllm.v1.attention.backends.registry.register_backend", ("backend", "class_path")),
    Seam("vllm.v1.attention.backends.registry.AttentionBackendEnum.CUSTOM"),
    Seam("vllm.model_executor.layers.attention.attention.Attention.__init__",
         ("self", "num_heads", "head_size", "scale", "num_kv_heads")),
    Seam("vllm.v1.kv_cache_layout.KVCacheLayout.LBNHC"),
    Seam("vllm.v1.attention.backend.AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE"),
    Seam(_TRITON + ".TritonAttentionBackend.get_supported_kernel_block_sizes"),
    Seam(_TRITON + ".TritonAttentionMetadataBuilder.build", ("self", "common_prefix_len", "common_attn_metadata")),
    Seam(_TRITON + ".TritonAttentionImpl.forward",
         ("self", "layer", "query", "key", "value", "kv_cache", "attn_metadata", "output", "output_scale",
          "output_block_scale")),
    Seam(_TRITON + ".TritonAttentionImpl.do_kv_cache_update",
         ("self", "layer", "key", "value", "kv_cache", "slot_mapping")),
]


def uncovered(impl, query, kv_cache, attn_metadata=None, output_scale=None, output_block_scale=None):
    """Why hk's kernels cannot serve this layer's call, or None."""
    from vllm.v1.attention.backend import AttentionType

    if query.dtype != torch.bfloat16:
        return "dtype"
    if impl.kv_cache_dtype in FP8:
        if kv_cache.dtype not in (torch.uint8, torch.float8_e4m3fn) or impl.fp8_dtype != torch.float8_e4m3fn:
            return "dtype"
    elif kv_cache.dtype != torch.bfloat16 or impl.kv_cache_dtype not in ("auto", "bfloat16"):
        return "dtype"
    if impl.head_size % 16 or impl.head_size > 256 or kv_cache.shape[2] % 16:
        return "shape"
    if (impl.attn_type != AttentionType.DECODER or impl.alibi_slopes is not None or impl.sliding_window != (-1, -1)
            or impl.logits_soft_cap or impl.sinks is not None or impl.chunk_lookback != -1):
        return "variant"
    if output_scale is not None or output_block_scale is not None:
        return "quantized output"
    if attn_metadata is not None and (attn_metadata.causal is not True or attn_metadata.mm_prefix_range_tensor is not None
                                      or attn_metadata.rswa_prefix_lens is not None):
        return "variant"
    return None


def _scales(impl, layer):
    """(k_scale, v_scale) an fp8 layer's cache is written and read with; None for a bf16 one."""
    if impl.kv_cache_dtype in FP8:
        return layer._k_scale, layer._v_scale
    return None, None


def _halves(kv_cache, head_size):
    # [blocks, kv_heads, block_size, 2D] -> key and value [blocks, block_size, kv_heads, D] views
    return kv_cache.transpose(1, 2).split(head_size, dim=-1)


@functools.lru_cache(maxsize=None)
def classes():
    """(backend, builder, impl): built on first use, so importing this module imports no vLLM."""
    from vllm.v1.attention.backend import AttentionCGSupport
    from vllm.v1.attention.backends import triton_attn
    from vllm.v1.kv_cache_layout import KVCacheLayout

    class HKAttentionMetadataBuilder(triton_attn.TritonAttentionMetadataBuilder):
        _cudagraph_support = AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE

    class HKAttentionImpl(triton_attn.TritonAttentionImpl):

        def do_kv_cache_update(self, layer, key, value, kv_cache, slot_mapping):
            import hk.ops

            def hk_call():
                key_cache, value_cache = _halves(kv_cache, self.head_size)
                if self.kv_cache_dtype in FP8:
                    hk.ops.reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping,
                                                   self.kv_cache_dtype, *_scales(self, layer))
                else:
                    hk.ops.reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping)

            return dispatch(counter("kv_cache_write"), "kv_cache_write",
                            {"dtype": dtype_name(key.dtype), "head_size": self.head_size, "tokens": key.shape[0]},
                            hk_call, lambda: super(HKAttentionImpl, self).do_kv_cache_update(
                                layer, key, value, kv_cache, slot_mapping),
                            uncovered=uncovered(self, key, kv_cache))

        def forward(self, layer, query, key, value, kv_cache, attn_metadata, output, output_scale=None,
                    output_block_scale=None):
            def engine_call():
                return super(HKAttentionImpl, self).forward(layer, query, key, value, kv_cache, attn_metadata, output,
                                                            output_scale, output_block_scale)

            if attn_metadata is None:  # the profiling run
                return engine_call()
            decode = attn_metadata.max_query_len == 1
            seqs = attn_metadata.seq_lens.shape[0]
            return dispatch(counter("attention"), "attention_decode" if decode else "attention_prefill",
                            attention_facts(query.dtype, self.head_size, self.num_heads, self.num_kv_heads, seqs,
                                            attn_metadata.num_actual_tokens),
                            lambda: self._hk_forward(layer, query, kv_cache, attn_metadata, output, decode, seqs),
                            engine_call,
                            uncovered=uncovered(self, query, kv_cache, attn_metadata, output_scale, output_block_scale))

        def _hk_forward(self, layer, query, kv_cache, md, output, decode, seqs):
            import hk.ops

            key_cache, value_cache = _halves(kv_cache, self.head_size)
            k_scale, v_scale = _scales(self, layer)
            if decode:
                # One token per sequence (padded sequences have no keys and give zeros).
                hk.ops.paged_attention_decode_out(output[:seqs], query[:seqs], key_cache, value_cache, md.block_table,
                                                  md.seq_lens, self.scale, k_scale, v_scale)
            else:
                n = md.num_actual_tokens
                hk.ops.paged_attention_prefill_out(output[:n], query[:n], key_cache, value_cache, md.block_table,
                                                   md.seq_lens, md.query_start_loc, md.max_query_len, self.scale,
                                                   k_scale, v_scale)
            return output

    class HKAttentionBackend(triton_attn.TritonAttentionBackend):

        @staticmethod
        def get_name():
            return NAME

        @staticmethod
        def get_impl_cls():
            return HKAttentionImpl

        @staticmethod
        def get_builder_cls():
            return HKAttentionMetadataBuilder

        @classmethod
        def supported_kv_cache_layouts(cls):
            # The cache write scatters whole rows of a layer's blocks: they must be one run.
            return (KVCacheLayout.LBNHC,)

    return HKAttentionBackend, HKAttentionMetadataBuilder, HKAttentionImpl


def __getattr__(name):
    # The registry imports the backend by its path: build the classes then.
    names = ("HKAttentionBackend", "HKAttentionMetadataBuilder", "HKAttentionImpl")
    if name in names:
        return classes()[names.index(name)]
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def install():
    from vllm.v1.attention.backends.registry import AttentionBackendEnum, register_backend

    register_backend(AttentionBackendEnum.CUSTOM, CLASS_PATH)


def uninstall():
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    AttentionBackendEnum.CUSTOM.clear_override()


PATCH = Patch("attention", install=install, uninstall=uninstall)
