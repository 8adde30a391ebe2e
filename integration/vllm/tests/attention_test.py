"""hk's attention backend as vLLM drives it: registered as AttentionBackendEnum.CUSTOM, its metadata
built from CommonAttentionMetadata, the step's keys and values written into a layer's paged KV
cache (vLLM 0.33's layout: [blocks, kv_heads, block_size, 2 * head_size], each head's K then its
V) and attention read from it, for a prefill batch (one prompt from scratch, one after cached
tokens) and a decode batch, against attention computed in torch on the same cache."""

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


def step(impl, builder, kv_cache, query_lens, seq_lens, tables, seed):
    """One forward step: the new tokens' q, k, v, written and attended; (out, q)."""
    g = torch.Generator().manual_seed(seed)
    tokens = sum(query_lens)
    q = torch.randn(tokens, HEADS, D, generator=g).to(torch.bfloat16)
    k = torch.randn(tokens, KV_HEADS, D, generator=g).to(torch.bfloat16)
    v = torch.randn(tokens, KV_HEADS, D, generator=g).to(torch.bfloat16)
    md = metadata(builder, query_lens, seq_lens, tables)
    layer = torch.nn.Module()
    impl.do_kv_cache_update(layer, k, v, kv_cache, md.slot_mapping)
    out = torch.full((tokens, HEADS, D), 7.0, dtype=torch.bfloat16)
    impl.forward(layer, q, k, v, kv_cache, md, out)
    return out, q


def reference(kv_cache, q, query_lens, seq_lens, tables):
    stored = kv_cache.transpose(1, 2)  # [blocks, block_size, kv_heads, 2D]
    out, start = [], 0
    for ql, n, table in zip(query_lens, seq_lens, tables):
        rows = torch.cat([stored[b] for b in table])[:n].float()
        k = rows[..., :D].repeat_interleave(HEADS // KV_HEADS, 1).transpose(0, 1)
        v = rows[..., D:].repeat_interleave(HEADS // KV_HEADS, 1).transpose(0, 1)
        mask = torch.ones(ql, n, dtype=torch.bool).tril(n - ql)
        o = torch.nn.functional.scaled_dot_product_attention(q[start:start + ql].float().transpose(0, 1), k, v,
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
