"""The "hk" attention backend from SGLang's registry, on an MHATokenToKVPool of 16-slot pages
(requests on pages out of order), driven as models drive it (RadixAttention under a forward
context) for an extend without and with a cached prefix and a decode, against SGLang's
TorchNativeAttnBackend on the same pool; and a pool of 1-slot pages left to that backend."""

import types

import torch

from hk_engine import counters

HEADS, KV_HEADS, D, PAGE = 4, 2, 32, 16
PAGES = {1: [1, 3, 6], 2: [2, 5]}  # each request's pages (page 0 holds SGLang's padding slot)


def slot(req, position):
    return PAGES[req][position // PAGE] * PAGE + position % PAGE


class Setup:
    def __init__(self, page_size):
        from sglang.srt.layers.attention.attention_registry import ATTENTION_BACKENDS
        from sglang.srt.layers.attention.torch_native_backend import TorchNativeAttnBackend
        from sglang.srt.layers.radix_attention import RadixAttention
        from sglang.srt.mem_cache.memory_pool import MHATokenToKVPool, ReqToTokenPool

        self.pool = MHATokenToKVPool(size=128, page_size=page_size, dtype=torch.bfloat16, head_num=KV_HEADS,
                                     head_dim=D, layer_num=1, device="cpu", enable_memory_saver=False)
        self.req_to_token = ReqToTokenPool(size=4, max_context_len=64, device="cpu", enable_memory_saver=False)
        runner = types.SimpleNamespace(device="cpu", req_to_token_pool=self.req_to_token,
                                       token_to_kv_pool=self.pool)
        self.backend = ATTENTION_BACKENDS["hk"](runner)
        assert type(self.backend.delegate) is TorchNativeAttnBackend
        self.reference = TorchNativeAttnBackend(runner)
        self.layer = RadixAttention(num_heads=HEADS, head_dim=D, scaling=D ** -0.5, num_kv_heads=KV_HEADS,
                                    layer_id=0)

    def step(self, mode, prefix_lens, new_lens):
        """One forward of both backends over the requests' next new_lens tokens: (hk's, SGLang's)."""
        from sglang.srt.model_executor.forward_batch_info import ForwardBatch, ForwardMode
        from sglang.srt.model_executor.forward_context import ForwardContext, forward_context

        seq_lens = [p + n for p, n in zip(prefix_lens, new_lens)]
        for req, length in zip(PAGES, seq_lens):
            self.req_to_token.req_to_token[req, :length] = torch.tensor([slot(req, i) for i in range(length)])
        loc = torch.tensor([slot(r, i) for r, p, s in zip(PAGES, prefix_lens, seq_lens) for i in range(p, s)])
        tokens = int(sum(new_lens))
        q = torch.randn(tokens, HEADS * D, dtype=torch.bfloat16)
        k, v = (torch.randn(tokens, KV_HEADS * D, dtype=torch.bfloat16) for _ in range(2))
        fields = dict(forward_mode=mode, batch_size=len(PAGES), input_ids=torch.zeros(tokens, dtype=torch.long),
                      req_pool_indices=torch.tensor(list(PAGES)), seq_lens=torch.tensor(seq_lens),
                      seq_lens_cpu=torch.tensor(seq_lens), out_cache_loc=loc, seq_lens_sum=sum(seq_lens),
                      positions=torch.cat([torch.arange(p, s) for p, s in zip(prefix_lens, seq_lens)]))
        if mode != ForwardMode.DECODE:
            fields.update(extend_prefix_lens=torch.tensor(prefix_lens), extend_seq_lens=torch.tensor(new_lens),
                          extend_prefix_lens_cpu=list(prefix_lens), extend_seq_lens_cpu=list(new_lens))
        outs = []
        for backend in (self.backend, self.reference):
            batch = ForwardBatch(**fields)
            backend.init_forward_metadata(batch)
            with forward_context(ForwardContext(attn_backend=backend)):
                outs.append(self.layer(q, k, v, batch))
            if backend is self.backend:  # the step's K and V are in the pool at their slots
                assert torch.equal(self.pool.get_key_buffer(0)[loc], k.view(-1, KV_HEADS, D))
                assert torch.equal(self.pool.get_value_buffer(0)[loc], v.view(-1, KV_HEADS, D))
        return outs


def close(out, ref):
    assert out.shape == ref.shape and out.dtype == ref.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), ref.float(), rtol=2e-2, atol=1e-2)


def test_extend_and_decode_run_on_hk(patched):
    from sglang.srt.model_executor.forward_batch_info import ForwardMode

    torch.manual_seed(0)
    setup = Setup(PAGE)
    close(*setup.step(ForwardMode.EXTEND, [0, 0], [20, 7]))      # prefill
    close(*setup.step(ForwardMode.EXTEND, [20, 7], [5, 12]))     # more tokens after a cached prefix
    assert counters.snapshot() == {"sglang.attention": {"hk": 2}}
    close(*setup.step(ForwardMode.DECODE, [25, 19], [1, 1]))     # a token each
    assert counters.snapshot() == {"sglang.attention": {"hk": 3}}


def test_a_pool_hk_cannot_read_goes_to_sglangs_backend(patched):
    from sglang.srt.model_executor.forward_batch_info import ForwardMode

    torch.manual_seed(1)
    setup = Setup(1)
    out, ref = setup.step(ForwardMode.EXTEND, [0, 0], [6, 3])
    assert torch.equal(out, ref)
    out, ref = setup.step(ForwardMode.DECODE, [6, 3], [1, 1])
    assert torch.equal(out, ref)
    assert counters.snapshot() == {"sglang.attention": {"engine:uncovered": 2}}


def test_what_sglang_reads_off_the_backend_is_the_delegates(patched):
    """Every attribute AttentionBackend declares (SGLang reads them off any backend) answers as
    the delegate does, not as the base class's defaults: on a GPU the delegate is Triton's, whose
    needs_cpu_seq_lens, extend_dummy_seqs_capped_by_req_pool, verify_mask and
    update_verify_buffers_to_fill_after_draft differ from them (speculative decoding and the
    flashinfer autotune runner read these)."""
    from sglang.srt.layers.attention.base_attn_backend import AttentionBackend
    from sglang.srt.layers.attention.triton_backend import TritonAttnBackend

    from hk_sglang.attention_backend import OWN, HkAttnBackend

    setup = Setup(PAGE)
    delegate = object.__new__(TritonAttnBackend)  # the class's declarations, without a GPU to build it on
    delegate._verify_mask = object()
    runner = types.SimpleNamespace(device="cpu", req_to_token_pool=setup.req_to_token, token_to_kv_pool=setup.pool)
    backend = HkAttnBackend(runner, delegate)
    assert backend.needs_cpu_seq_lens is False and backend.extend_dummy_seqs_capped_by_req_pool is True
    assert backend.verify_mask is delegate._verify_mask
    assert backend.update_verify_buffers_to_fill_after_draft == delegate.update_verify_buffers_to_fill_after_draft
    # hk's own methods (its forwards, its metadata, the graph hooks that call the delegate's) aside:
    hks = {name for name, value in vars(HkAttnBackend).items() if callable(value)}
    read = [name for name in vars(AttentionBackend) if not name.startswith("_") and name not in OWN + tuple(hks)]
    assert len(read) > 30
    for name in read:
        assert getattr(backend, name) == getattr(delegate, name), name
    # ModelRunner stamps the backend names it resolved: they reach the delegate.
    backend.prefill_attention_backend_str = "hk"
    assert delegate.prefill_attention_backend_str == "hk" == backend.prefill_attention_backend_str
