"""Attention on hk.ops.paged_attention_prefill and paged_attention_decode: the attention backend
"hk" (--attention-backend hk, with --page-size a multiple of 16), registered in SGLang's
backend registry and its command line's choices.

It reads SGLang's token-indexed KV pool (MHATokenToKVPool: a layer's K and V are [slots, kv_heads,
head_size] rows, a request's slots listed in req_to_token; bf16, or OCP e4m3 bytes with the layer's
per-tensor scales) as hk's paged cache of 16-slot blocks, which it is when pages are multiples of
16 slots; what hk's kernels do not cover goes to SGLang's own backend for the platform (triton on
a GPU, torch_native elsewhere), built from the same model runner through the same registry. See
hk_sglang.attention_backend.
"""

from hk_engine import Patch
from hk_engine.contract import Seam

NAME = "hk"
REGISTRY = "sglang.srt.layers.attention.attention_registry"
CHOICES = "sglang.srt.arg_groups.choices"
BACKEND = "sglang.srt.layers.attention.base_attn_backend.AttentionBackend"
BATCH = "sglang.srt.model_executor.forward_batch_info"
POOLS = "sglang.srt.mem_cache.memory_pool"
FORWARD = ("self", "q", "k", "v", "layer", "forward_batch", "save_kv_cache")


def delegate_name():
    """The backend SGLang would run here: its Triton kernels on a GPU, torch's SDPA otherwise."""
    import torch

    return "triton" if torch.cuda.is_available() else "torch_native"


def create_backend(model_runner):
    """The registry's factory: hk's backend over the platform's own, both on `model_runner`."""
    from sglang.srt.layers.attention.attention_registry import ATTENTION_BACKENDS

    from hk_sglang.attention_backend import HkAttnBackend

    return HkAttnBackend(model_runner, ATTENTION_BACKENDS[delegate_name()](model_runner))


def install():
    from sglang.srt.arg_groups.choices import ATTENTION_BACKEND_CHOICES, add_attention_backend_choices
    from sglang.srt.layers.attention.attention_registry import register_attention_backend

    register_attention_backend(NAME)(create_backend)
    if NAME not in ATTENTION_BACKEND_CHOICES:
        add_attention_backend_choices([NAME])


def uninstall():
    from sglang.srt.arg_groups.choices import ATTENTION_BACKEND_CHOICES
    from sglang.srt.layers.attention.attention_registry import ATTENTION_BACKENDS

    if ATTENTION_BACKENDS.get(NAME) is create_backend:
        del ATTENTION_BACKENDS[NAME]
    while NAME in ATTENTION_BACKEND_CHOICES:
        ATTENTION_BACKEND_CHOICES.remove(NAME)


PATCH = Patch("attention", install=install, uninstall=uninstall)

SEAMS = [
    Seam(REGISTRY + ".register_attention_backend", ("name",)),
    Seam(REGISTRY + ".ATTENTION_BACKENDS"),
    Seam(CHOICES + ".add_attention_backend_choices"),
    Seam(CHOICES + ".ATTENTION_BACKEND_CHOICES"),
    Seam(BACKEND + ".forward_extend", FORWARD),
    Seam(BACKEND + ".forward_decode", FORWARD),
    Seam(BACKEND + ".init_forward_metadata", ("self", "forward_batch")),
    Seam(BACKEND + ".init_forward_metadata_out_graph", ("self", "forward_batch", "in_capture")),
    Seam(BACKEND + ".init_forward_metadata_in_graph", ("self", "forward_batch")),
    Seam(BACKEND + ".init_cuda_graph_state", ("self", "max_bs", "max_num_tokens")),
    Seam(BACKEND + ".get_cuda_graph_seq_len_fill_value", ("self",)),
    Seam(BACKEND + ".support_triton", ("self",)),
    Seam("sglang.srt.layers.radix_attention.RadixAttention.__init__",
         ("self", "num_heads", "head_dim", "scaling", "num_kv_heads", "layer_id", "logit_cap", "v_head_dim",
          "sliding_window_size", "is_cross_attention")),
    Seam("sglang.srt.layers.radix_attention.AttentionType.DECODER"),
    Seam(POOLS + ".MHATokenToKVPool.__init__",
         ("self", "size", "page_size", "dtype", "head_num", "head_dim", "layer_num", "device")),
    Seam(POOLS + ".MHATokenToKVPool.is_quantized_kv_cache"),
    # An fp8 pool's bytes are the ones its write stores, with the layer's per-tensor scales.
    Seam(POOLS + ".MHATokenToKVPool.set_kv_buffer", ("self", "layer", "loc_info", "cache_k", "cache_v", "k_scale",
                                                     "v_scale")),
    Seam(POOLS + ".MHATokenToKVPool.get_key_buffer", ("self", "layer_id")),
    Seam(POOLS + ".MHATokenToKVPool.get_value_buffer", ("self", "layer_id")),
    Seam(POOLS + ".ReqToTokenPool.__init__", ("self", "size", "max_context_len", "device")),
    Seam(BATCH + ".ForwardBatch.__init__",
         ("self", "forward_mode", "batch_size", "input_ids", "req_pool_indices", "seq_lens", "out_cache_loc")),
] + [Seam(BATCH + ".ForwardBatch." + field) for field in ("seq_lens_cpu", "extend_seq_lens", "extend_seq_lens_cpu",
                                                          "encoder_lens", "spec_info")] \
  + [Seam(BATCH + ".ForwardMode." + mode) for mode in ("EXTEND", "MIXED", "DECODE")]
