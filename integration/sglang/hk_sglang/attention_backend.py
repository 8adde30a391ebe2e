"""The "hk" attention backend: SGLang's KV pool read as hk's paged cache, and the engine's own
backend for what hk's kernels do not cover.

A layer's K (V) buffer of MHATokenToKVPool is [size + page_size, kv_heads, head_size], one row
per KV slot; viewed as [blocks, 16, kv_heads, head_size] (size + page_size a multiple of 16), slot
s is row s % 16 of block s // 16. With pages a multiple of 16 slots, a request's positions
16j .. 16j + 15 are 16 consecutive slots starting at req_to_token[req, 16j], so its block table is
req_to_token[req, 0::16] // 16. Per forward, init_forward_metadata builds the tables, seq_lens and
(extend) query_start_loc; per layer, the step's K and V are written at out_cache_loc by
hk.ops.reshape_and_cache_flash and the queries attend by paged_attention_prefill (extend: each
request's new tokens are the last of its seq_lens, causal) or paged_attention_decode.

An fp8 pool (--kv-cache-dtype fp8_e4m3 where SGLang's fp8 is OCP: dtype float8_e4m3fn, buffers
uint8) holds e4m3 bytes with the layer's per-tensor k_scale and v_scale (None: 1.0), the bytes
the pool's set_kv_buffer stores: K divided by k_scale in K's dtype (a bf16 quotient), cast to
e4m3 (nearest even, saturated to +-448). hk's write divides in fp32, which rounds a few percent
of elements differently, so the quotient is computed as the pool computes it and hk's write casts
it at unit scale. The paged attention reads the bytes with the scales, as SGLang's Triton backend
does. FNUZ pools (float8_e4m3fnuz: SGLang's fp8 where the platform's fp8 is FNUZ, gfx942), e5m2
pools and scales other than one per tensor go to the delegate.

Covered: bf16 queries, bf16 or OCP e4m3 pools, head sizes that are multiples of 16 up to 256 (K's
and V's the same), grouped-query heads, causal decoder self-attention without sliding window or
logit cap, EXTEND, MIXED and DECODE batches without speculative or encoder inputs, and batches whose
metadata this backend built (not one prepared only for CUDA-graph capture or replay). The rest
goes to the delegate, whose metadata is prepared for every batch alongside.
"""

import torch
from sglang.srt.layers.attention.base_attn_backend import AttentionBackend
from sglang.srt.layers.radix_attention import AttentionType
from sglang.srt.mem_cache.memory_pool import MHATokenToKVPool
from sglang.srt.model_executor.forward_batch_info import ForwardMode

from hk_engine.plugin import dispatch
from hk_engine.ops import attention_facts
from hk_sglang.common import counter

BLOCK = 16  # slots per block of hk's paged cache
FP8 = torch.float8_e4m3fn  # the fp8 pool hk reads: OCP e4m3 bytes, stored as uint8
STORED = {torch.bfloat16: torch.bfloat16, FP8: torch.uint8}  # pool dtype -> its buffers' dtype


def pool_problem(pool):
    """Why hk's kernels cannot read this KV pool, or None."""
    if type(pool) is not MHATokenToKVPool or pool.kv_cache_layout != "nhd" or pool.is_quantized_kv_cache:
        return "pool"
    if STORED.get(pool.dtype) != pool.store_dtype:  # FNUZ and e5m2 fp8 are not the bytes hk reads
        return "dtype"
    if pool.page_size % BLOCK or (pool.size + pool.page_size) % BLOCK:
        return "page-size"
    return None


def layer_problem(layer, q, pool):
    """Why hk's kernels cannot serve this layer's attention, or None."""
    d = layer.qk_head_dim
    if q.dtype != torch.bfloat16:
        return "dtype"
    if d != layer.v_head_dim or d % 16 or d > 256 or layer.tp_q_head_num % layer.tp_k_head_num:
        return "heads"
    if pool.head_num != layer.tp_k_head_num or pool.head_dim != d or pool.v_head_dim != d:
        return "pool"
    if layer.is_cross_attention or layer.attn_type != AttentionType.DECODER:
        return "attention-type"
    if (layer.sliding_window_size is not None and layer.sliding_window_size > -1) or (layer.logit_cap or 0) > 0:
        return "window-or-cap"
    if pool.dtype == FP8 and scale_problem(layer):
        return "kv-scale"
    return None


def scale_problem(layer):
    """True unless the layer's fp8 scales are one per tensor each, or both None (1.0)."""
    scales = (layer.k_scale, layer.v_scale)
    if all(s is None for s in scales):
        return False
    # One without the other: SGLang's pool would divide by it, its Triton backend read it as 1.0.
    return any(s is None or (isinstance(s, torch.Tensor) and s.numel() != 1) for s in scales)


def scale_tensor(scale, one):
    """A layer's k_scale or v_scale (a tensor of one element, a float, or None: 1.0) as hk's ops
    take it: float32 [1] on `one`'s device."""
    if scale is None:
        return one
    if isinstance(scale, torch.Tensor):
        return scale.detach().reshape(1).to(device=one.device, dtype=torch.float32)
    return torch.full((1,), float(scale), dtype=torch.float32, device=one.device)


def caches(pool, layer):
    """The layer's K and V buffers of the pool as hk's paged caches [blocks, 16, kv_heads, head_size]."""
    shape = (-1, BLOCK, layer.tp_k_head_num, layer.qk_head_dim)
    return pool.get_key_buffer(layer.layer_id).view(shape), pool.get_value_buffer(layer.layer_id).view(shape)


def write_kv(pool, layer, k, v, loc, one):
    """The step's K and V into the pool's slots `loc` by hk's cache write. Into an fp8 pool, the
    bytes its set_kv_buffer stores: the quotient by the layer's scale as set_kv_buffer computes it
    (in place, here on a copy), cast to e4m3 by hk's write at unit scale (`one`)."""
    import hk.ops

    fp8 = ()
    if pool.dtype == FP8:
        k, v = (x if s is None else x.clone().div_(s) for x, s in ((k, layer.k_scale), (v, layer.v_scale)))
        fp8 = ("fp8", one, one)
    shape = (-1, layer.tp_k_head_num, layer.qk_head_dim)
    hk.ops.reshape_and_cache_flash(k.reshape(shape), v.reshape(shape), *caches(pool, layer), loc, *fp8)


class Metadata:
    """What every layer's call of one forward batch shares."""

    def __init__(self, decode, block_tables, seq_lens, query_start_loc=None, max_query_len=0):
        self.decode = decode
        self.block_tables = block_tables
        self.seq_lens = seq_lens
        self.query_start_loc = query_start_loc
        self.max_query_len = max_query_len


class HkAttnBackend(AttentionBackend):
    """hk's paged attention over SGLang's pool, `delegate` (SGLang's) for the rest."""

    def __init__(self, model_runner, delegate):
        super().__init__()
        self.delegate = delegate
        self.device = model_runner.device
        self.req_to_token_pool = model_runner.req_to_token_pool
        self.token_to_kv_pool = model_runner.token_to_kv_pool
        self.pool_problem = pool_problem(self.token_to_kv_pool)
        self.fp8 = self.token_to_kv_pool.dtype == FP8
        self.one = torch.ones(1, dtype=torch.float32, device=self.device)  # an absent fp8 scale
        self.batch, self.metadata = None, None

    def init_forward_metadata(self, forward_batch):
        self.delegate.init_forward_metadata(forward_batch)
        self.batch, self.metadata = forward_batch, self._metadata(forward_batch)

    def _metadata(self, fb):
        """The batch's Metadata, or why hk cannot serve it."""
        if self.pool_problem:
            return self.pool_problem
        if fb.encoder_lens is not None or fb.spec_info is not None:
            return "batch-inputs"
        decode = fb.forward_mode == ForwardMode.DECODE
        extend = fb.forward_mode in (ForwardMode.EXTEND, ForwardMode.MIXED) and fb.extend_seq_lens is not None
        if not (decode or extend):
            return "forward-mode"
        lens = fb.seq_lens_cpu if fb.seq_lens_cpu is not None else fb.seq_lens
        longest = int(lens.max()) if lens.numel() else 0
        firsts = torch.arange(0, max(longest, 1), BLOCK, device=fb.seq_lens.device)
        slots = self.req_to_token_pool.req_to_token[fb.req_pool_indices.long()[:, None], firsts[None, :]]
        tables, seq_lens = (slots // BLOCK).to(torch.int32), fb.seq_lens.to(torch.int32)
        if decode:
            return Metadata(True, tables, seq_lens)
        new = fb.extend_seq_lens
        starts = torch.zeros(new.numel() + 1, dtype=torch.int32, device=new.device)
        starts[1:] = torch.cumsum(new, 0)
        counts = fb.extend_seq_lens_cpu if fb.extend_seq_lens_cpu is not None else new
        return Metadata(False, tables, seq_lens, starts, int(max(counts)) if len(counts) else 0)

    # CUDA graphs prepare their batches through these; such a batch goes to the delegate.
    def init_forward_metadata_out_graph(self, forward_batch, in_capture=False):
        self.batch, self.metadata = None, None
        self.delegate.init_forward_metadata_out_graph(forward_batch, in_capture)

    def init_forward_metadata_in_graph(self, forward_batch):
        self.delegate.init_forward_metadata_in_graph(forward_batch)

    def init_cuda_graph_state(self, max_bs, max_num_tokens):
        self.delegate.init_cuda_graph_state(max_bs, max_num_tokens)

    def get_cuda_graph_seq_len_fill_value(self):
        return self.delegate.get_cuda_graph_seq_len_fill_value()

    def support_triton(self):
        return self.delegate.support_triton()

    def forward_extend(self, q, k, v, layer, forward_batch, save_kv_cache=True, **kwargs):
        return self._forward(False, q, k, v, layer, forward_batch, save_kv_cache, kwargs)

    def forward_decode(self, q, k, v, layer, forward_batch, save_kv_cache=True, **kwargs):
        return self._forward(True, q, k, v, layer, forward_batch, save_kv_cache, kwargs)

    def _forward(self, decode, q, k, v, layer, fb, save_kv_cache, kwargs):
        meta = self.metadata if self.batch is fb else "metadata"
        reason = meta if isinstance(meta, str) else (layer_problem(layer, q, self.token_to_kv_pool)
                                                     or ("arguments" if kwargs else None)
                                                     or ("forward-mode" if meta.decode != decode else None))
        forward = self.delegate.forward_decode if decode else self.delegate.forward_extend
        facts = attention_facts(q.dtype, layer.qk_head_dim, layer.tp_q_head_num, layer.tp_k_head_num, fb.batch_size,
                                q.shape[0])
        return dispatch(counter("attention"), "attention_decode" if decode else "attention_prefill", facts,
                        lambda: self._hk(meta, q, k, v, layer, fb, save_kv_cache),
                        lambda: forward(q, k, v, layer, fb, save_kv_cache, **kwargs), uncovered=reason)

    def _hk(self, meta, q, k, v, layer, fb, save_kv_cache):
        import hk.ops

        heads, d = layer.tp_q_head_num, layer.qk_head_dim
        pool = self.token_to_kv_pool
        if save_kv_cache and k is not None and v is not None:
            write_kv(pool, layer, k, v, fb.out_cache_loc, self.one)
        k_cache, v_cache = caches(pool, layer)
        scales = (scale_tensor(layer.k_scale, self.one), scale_tensor(layer.v_scale, self.one)) if self.fp8 else ()
        query = q.reshape(-1, heads, d)
        if meta.decode:
            out = hk.ops.paged_attention_decode(query, k_cache, v_cache, meta.block_tables, meta.seq_lens,
                                                layer.scaling, *scales)
        else:
            out = hk.ops.paged_attention_prefill(query, k_cache, v_cache, meta.block_tables, meta.seq_lens,
                                                 meta.query_start_loc, meta.max_query_len, layer.scaling, *scales)
        return out.view(-1, heads * d)

    def __getattr__(self, name):
        # What a model asks of its backend beyond these (per-backend state) is the delegate's.
        delegate = self.__dict__.get("delegate")
        if delegate is None:
            raise AttributeError(name)
        return getattr(delegate, name)


def _delegated(name):
    def get(self):
        return getattr(self.delegate, name)

    def set_(self, value):
        setattr(self.delegate, name, value)

    return property(get, set_, doc="the delegate's %s" % name)


# What SGLang reads off any backend, declared on AttentionBackend with defaults (needs_cpu_seq_lens,
# extend_dummy_seqs_capped_by_req_pool, verify_mask, update_verify_buffers_to_fill_after_draft,
# ...), is the delegate's unless hk's backend decides it itself: inherited, the base class's
# defaults would hide the delegate's from __getattr__, which Python calls only for names it cannot
# find. Writes (ModelRunner stamps backend names) go to the delegate too. `forward` stays the
# base's: it calls forward_extend and forward_decode, which are hk's. (Private names are the
# class's own business: the ABC's bookkeeping, helpers of the methods delegated whole.)
OWN = ("forward",)
DELEGATED = tuple(sorted(name for name in vars(AttentionBackend)
                         if not name.startswith("_") and name not in vars(HkAttnBackend) and name not in OWN))
for _name in DELEGATED:
    setattr(HkAttnBackend, _name, _delegated(_name))
