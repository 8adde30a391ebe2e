"""hk's attention backend as vLLM drives it: registered as AttentionBackendEnum.CUSTOM, its metadata
built from CommonAttentionMetadata, the step's keys and values written into a layer's paged KV
cache (vLLM 0.33's layout: [blocks, kv_heads, block_size, 2 * head_size], each head's K then its
V) and attention read from it, for a prefill batch (one prompt from scratch, one after cached
tokens) and a decode batch, against attention computed in torch on the same cache; and a layer of
kv_cache_dtype "fp8" (e4m3 bytes with the layer's per-tensor K and V scales): its cache bytes as
vLLM's Triton write stores them, its attention against a float64 reference that dequantizes as
vLLM's Triton attention reads them, and against vLLM's TritonAttentionImpl itself on the same
steps (its Triton kernels, which this CPU build cannot run, replaced by hk_vllm's CPU stand-ins);
and the fp8 caches hk does not read left on vLLM's kernels."""

import json

import pytest
import torch

from conftest import TINY, close

HEADS, KV_HEADS, D, BS, BLOCKS = TINY["num_attention_heads"], TINY["num_key_value_heads"], TINY["head_dim"], 16, 12


@pytest.fixture
def all_hk(tmp_path, monkeypatch):
    """A routing table that sends every attention call to hk (gfx1100's keeps a few sequences'
    decode and long prefills on vLLM's Triton kernel, which this CPU build cannot run)."""
    from hk_engine import routing

    path = tmp_path / "routes.json"
    path.write_text(json.dumps({"target": "gfx1100", "ops": {
        op: [{"when": {}, "route": "hk"}] for op in ("attention_prefill", "attention_decode", "kv_cache_write")}}))
    monkeypatch.setenv("HK_ENGINE_ROUTES", str(path))
    routing.clear_cache()
    yield
    routing.clear_cache()


@pytest.fixture
def backend(loaded, vllm_config):
    """(impl, builder, kv_cache): hk's backend as vLLM's CUSTOM backend gives it, for one layer."""
    from vllm.v1.attention.backends.registry import AttentionBackendEnum
    from vllm.v1.kv_cache_interface import FullAttentionSpec

    cls = AttentionBackendEnum.CUSTOM.get_class()
    assert cls.get_name() == "CUSTOM"
    spec = FullAttentionSpec(block_size=BS, num_kv_heads=KV_HEADS, head_size=D, dtype=torch.bfloat16)
    builder = cls.get_builder_cls()(spec, ["layers.0.attn"], vllm_config, torch.device("cpu"))
    impl = cls.get_impl_cls()(HEADS, D, D ** -0.5, KV_HEADS, None, None, "auto")
    # The layer's view of its cache, stored blocks-outer with slots then heads (KVCacheLayout.LBNHC).
    (layout,) = cls.supported_kv_cache_layouts()
    assert layout.name == "LBNHC"
    stored = torch.zeros(BLOCKS, BS, KV_HEADS, 2 * D, dtype=torch.bfloat16)
    return impl, builder, stored.permute(0, 2, 1, 3)


def metadata(builder, query_lens, seq_lens, tables):
    from vllm.v1.attention.backend import CommonAttentionMetadata

    starts = torch.tensor([0] + list(torch.tensor(query_lens).cumsum(0)), dtype=torch.int32)
    slots = []
    for q, n, table in zip(query_lens, seq_lens, tables):
        slots += [table[p // BS] * BS + p % BS for p in range(n - q, n)]
    width = max(len(t) for t in tables)
    common = CommonAttentionMetadata(
        query_start_loc=starts, query_start_loc_cpu=starts, seq_lens=torch.tensor(seq_lens, dtype=torch.int32),
        num_reqs=len(query_lens), num_actual_tokens=sum(query_lens), max_query_len=max(query_lens),
        max_seq_len=max(seq_lens),
        block_table_tensor=torch.tensor([t + [0] * (width - len(t)) for t in tables], dtype=torch.int32),
        slot_mapping=torch.tensor(slots, dtype=torch.int64))
    return builder.build(0, common)


def step(impl, builder, kv_cache, query_lens, seq_lens, tables, seed, layer=None, written=None):
    """One forward step: the new tokens' q, k, v, written and attended; (out, q). `written`
    collects (k, v, slots)."""
    g = torch.Generator().manual_seed(seed)
    tokens = sum(query_lens)
    q = torch.randn(tokens, HEADS, D, generator=g).to(torch.bfloat16)
    k = (torch.randn(tokens, KV_HEADS, D, generator=g) * 3).to(torch.bfloat16)
    v = torch.randn(tokens, KV_HEADS, D, generator=g).to(torch.bfloat16)
    md = metadata(builder, query_lens, seq_lens, tables)
    layer = torch.nn.Module() if layer is None else layer
    impl.do_kv_cache_update(layer, k, v, kv_cache, md.slot_mapping)
    if written is not None:
        written.append((k, v, md.slot_mapping))
    out = torch.full((tokens, HEADS, D), 7.0, dtype=torch.bfloat16)
    impl.forward(layer, q, k, v, kv_cache, md, out)
    return out, q


def reference(kv_cache, q, query_lens, seq_lens, tables, k_scale=None, v_scale=None):
    """Attention in float64 on the cache's keys and values; an fp8 cache's (k_scale given)
    dequantized as vLLM's Triton attention reads them: bf16(e4m3 value * scale)."""
    stored = kv_cache.transpose(1, 2)  # [blocks, block_size, kv_heads, 2D]
    out, start = [], 0
    for ql, n, table in zip(query_lens, seq_lens, tables):
        rows = torch.cat([stored[b] for b in table])[:n]
        k, v = rows[..., :D], rows[..., D:]
        if k_scale is not None:
            k = (k.view(torch.float8_e4m3fn).float() * k_scale).to(torch.bfloat16)
            v = (v.view(torch.float8_e4m3fn).float() * v_scale).to(torch.bfloat16)
        k = k.double().repeat_interleave(HEADS // KV_HEADS, 1).transpose(0, 1)
        v = v.double().repeat_interleave(HEADS // KV_HEADS, 1).transpose(0, 1)
        mask = torch.ones(ql, n, dtype=torch.bool).tril(n - ql)
        o = torch.nn.functional.scaled_dot_product_attention(q[start:start + ql].double().transpose(0, 1), k, v,
                                                             attn_mask=mask, scale=D ** -0.5)
        out.append(o.transpose(0, 1))
        start += ql
    return torch.cat(out)


def test_prefill_then_decode_on_the_paged_cache(backend, all_hk, counts):
    impl, builder, kv_cache = backend
    tables = [[3, 7, 1], [10, 0]]
    # A prompt of 21 tokens; 9 tokens after 13 written by an earlier step.
    step(impl, builder, kv_cache, [13], [13], tables[1:], seed=1)
    out, q = step(impl, builder, kv_cache, [21, 9], [21, 22], tables, seed=2)
    close(out, reference(kv_cache, q, [21, 9], [21, 22], tables))
    out, q = step(impl, builder, kv_cache, [1, 1], [22, 23], tables, seed=3)
    close(out, reference(kv_cache, q, [1, 1], [22, 23], tables))
    assert counts.snapshot() == {"vllm.kv_cache_write": {"hk": 3},
                                 "vllm.attention": {"hk": 3}}


def test_the_shipped_table_keeps_decode_on_vllms_kernel(backend, counts, monkeypatch):
    impl, builder, kv_cache = backend
    from vllm.v1.attention.backends.triton_attn import TritonAttentionImpl

    served = []
    monkeypatch.setattr(TritonAttentionImpl, "forward", lambda self, *a, **k: served.append(a[5].max_query_len))
    step(impl, builder, kv_cache, [5], [5], [[2]], seed=4)
    step(impl, builder, kv_cache, [1], [6], [[2]], seed=5)
    assert served == [1]  # the decode step went to Triton's forward; prefill and the writes to hk
    assert counts.snapshot() == {"vllm.kv_cache_write": {"hk": 2},
                                 "vllm.attention": {"hk": 1, "engine": 1}}


def test_variants_hk_does_not_cover_go_to_vllms_kernel(backend, all_hk, counts, monkeypatch):
    impl, builder, kv_cache = backend
    from vllm.v1.attention.backends.triton_attn import TritonAttentionImpl

    monkeypatch.setattr(TritonAttentionImpl, "forward", lambda self, *a, **k: "triton")
    impl.sliding_window = (63, 0)
    g = torch.Generator().manual_seed(6)
    q = torch.randn(3, HEADS, D, generator=g).to(torch.bfloat16)
    md = metadata(builder, [3], [3], [[4]])
    assert impl.forward(torch.nn.Module(), q, q, q, kv_cache, md, torch.empty_like(q)) == "triton"
    assert counts.snapshot() == {"vllm.attention": {"engine:uncovered": 1}}


K_SCALE, V_SCALE = 0.02, 0.005  # some keys beyond 448 * K_SCALE: saturated


def vllm_fp8(x, scale):
    """What vLLM's Triton cache write stores for x: x / scale in fp32, saturated, as e4m3 bytes."""
    return (x.float() / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).view(torch.uint8)


@pytest.fixture
def fp8_backend(backend):
    """(impl, builder, kv_cache, layer) of a kv_cache_dtype "fp8" layer: its cache uint8, as vLLM
    allocates it, its scales the layer's."""
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    _, builder, _ = backend
    impl = AttentionBackendEnum.CUSTOM.get_class().get_impl_cls()(HEADS, D, D ** -0.5, KV_HEADS, None, None, "fp8")
    assert impl.fp8_dtype == torch.float8_e4m3fn
    stored = torch.zeros(BLOCKS, BS, KV_HEADS, 2 * D, dtype=torch.uint8)
    layer = torch.nn.Module()
    layer._k_scale, layer._v_scale = torch.tensor(K_SCALE), torch.tensor(V_SCALE)  # as vLLM's Attention holds them
    layer._k_scale_float, layer._v_scale_float = K_SCALE, V_SCALE
    return impl, builder, stored.permute(0, 2, 1, 3), layer


def test_an_fp8_cache_layer_goes_through_hk(fp8_backend, all_hk, counts):
    impl, builder, kv_cache, layer = fp8_backend
    tables, written = [[3, 7, 1], [10, 0]], []
    step(impl, builder, kv_cache, [13], [13], tables[1:], seed=1, layer=layer, written=written)
    out, q = step(impl, builder, kv_cache, [21, 9], [21, 22], tables, seed=2, layer=layer, written=written)
    close(out, reference(kv_cache, q, [21, 9], [21, 22], tables, K_SCALE, V_SCALE))
    out, q = step(impl, builder, kv_cache, [1, 1], [22, 23], tables, seed=3, layer=layer, written=written)
    close(out, reference(kv_cache, q, [1, 1], [22, 23], tables, K_SCALE, V_SCALE))
    # The bytes are the ones vLLM's own write stores (so either side of a route reads the other's).
    rows = kv_cache.transpose(1, 2).reshape(BLOCKS * BS, KV_HEADS, 2 * D)
    for k, v, slots in written:
        assert torch.equal(rows[slots, :, :D], vllm_fp8(k, K_SCALE))
        assert torch.equal(rows[slots, :, D:], vllm_fp8(v, V_SCALE))
    assert (rows.view(torch.float8_e4m3fn).float().abs() == 448).any()  # saturated keys
    assert counts.snapshot() == {"vllm.kv_cache_write": {"hk": 3}, "vllm.attention": {"hk": 3}}


def test_fp8_caches_hk_does_not_read_stay_on_vllms_kernels(fp8_backend):
    from hk_vllm import attention

    impl, _, kv_cache, _ = fp8_backend
    q = torch.zeros(1, HEADS, D, dtype=torch.bfloat16)
    assert attention.uncovered(impl, q, kv_cache) is None
    assert attention.uncovered(impl, q.half(), kv_cache) == "dtype"
    impl.fp8_dtype = torch.float8_e4m3fnuz  # a platform whose fp8 is FNUZ: not hk's bytes
    assert attention.uncovered(impl, q, kv_cache) == "dtype"
    impl.fp8_dtype, impl.kv_cache_dtype = torch.float8_e4m3fn, "fp8_e5m2"
    assert attention.uncovered(impl, q, kv_cache) == "dtype"


def test_an_fp8_layer_matches_vllms_own_path(fp8_backend, all_hk, monkeypatch):
    # vLLM's TritonAttentionImpl on the same steps, its Triton kernels replaced by hk_vllm's CPU
    # stand-ins (what they compute, in torch): the same cache bytes, and attention within bf16.
    from vllm.v1.attention.backends import triton_attn

    from hk_vllm import cpu_kernels

    impl, builder, kv_cache, layer = fp8_backend
    monkeypatch.setattr(triton_attn, "unified_attention", cpu_kernels.unified_attention)
    monkeypatch.setattr(triton_attn, "triton_reshape_and_cache_flash", cpu_kernels.reshape_and_cache_flash)
    vllm_impl = triton_attn.TritonAttentionImpl(HEADS, D, D ** -0.5, KV_HEADS, None, None, "fp8")
    vllm_cache = torch.zeros_like(kv_cache)
    tables = [[3, 7, 1], [10, 0]]
    for query_lens, seq_lens, seed in (([13], [13], 1), ([21, 9], [21, 22], 2), ([1, 1], [22, 23], 3)):
        used = tables[1:] if seed == 1 else tables
        out, _ = step(impl, builder, kv_cache, query_lens, seq_lens, used, seed, layer=layer)
        want, _ = step(vllm_impl, builder, vllm_cache, query_lens, seq_lens, used, seed, layer=layer)
        assert torch.equal(kv_cache, vllm_cache)
        close(out, want)
