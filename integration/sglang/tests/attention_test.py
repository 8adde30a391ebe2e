"""The "hk" attention backend from SGLang's registry, on an MHATokenToKVPool of 16-slot pages
(requests on pages out of order), driven as models drive it (RadixAttention under a forward
context) for an extend without and with a cached prefix and a decode, against SGLang's
TorchNativeAttnBackend on the same pool; and a pool of 1-slot pages left to that backend.

An fp8 pool (float8_e4m3fn, SGLang's --kv-cache-dtype fp8_e4m3 where its fp8 is OCP), without
scales and with per-tensor k_scale and v_scale (1.0, and saturating ones): the same steps, the
pool's bytes after each equal to what SGLang's own set_kv_buffer stores for the same K and V
(every bf16 value too), attention against a float64 reference on those bytes dequantized with
the scales; and the fp8 pools and scales hk does not read (FNUZ, e5m2, per-head scales) left to
SGLang's backend, counted and warned about."""

import types

import pytest
import torch

from hk_engine import counters
from hk_engine.plugin import reset_uncovered_warnings

HEADS, KV_HEADS, D, PAGE = 4, 2, 32, 16
PAGES = {1: [1, 3, 6], 2: [2, 5]}  # each request's pages (page 0 holds SGLang's padding slot)


def slot(req, position):
    return PAGES[req][position // PAGE] * PAGE + position % PAGE


class Setup:
    def __init__(self, page_size, dtype=torch.bfloat16, scales=None):
        from sglang.srt.layers.attention.attention_registry import ATTENTION_BACKENDS
        from sglang.srt.layers.attention.torch_native_backend import TorchNativeAttnBackend
        from sglang.srt.layers.radix_attention import RadixAttention
        from sglang.srt.mem_cache.memory_pool import MHATokenToKVPool, ReqToTokenPool

        self.pool = MHATokenToKVPool(size=128, page_size=page_size, dtype=dtype, head_num=KV_HEADS, head_dim=D,
                                     layer_num=1, device="cpu", enable_memory_saver=False)
        self.req_to_token = ReqToTokenPool(size=4, max_context_len=64, device="cpu", enable_memory_saver=False)
        runner = types.SimpleNamespace(device="cpu", req_to_token_pool=self.req_to_token,
                                       token_to_kv_pool=self.pool)
        self.backend = ATTENTION_BACKENDS["hk"](runner)
        assert type(self.backend.delegate) is TorchNativeAttnBackend
        self.reference = TorchNativeAttnBackend(runner)
        self.layer = RadixAttention(num_heads=HEADS, head_dim=D, scaling=D ** -0.5, num_kv_heads=KV_HEADS,
                                    layer_id=0)
        if scales is not None:  # as SGLang's BaseKVCacheMethod leaves them: fp32 parameters of one element
            self.layer.k_scale, self.layer.v_scale = (torch.nn.Parameter(torch.tensor(x), requires_grad=False)
                                                      for x in scales)
            self.layer.k_scale_float, self.layer.v_scale_float = scales

    def batch(self, mode, prefix_lens, new_lens):
        """(ForwardBatch fields, q, k, v, out_cache_loc) of the requests' next new_lens tokens."""
        from sglang.srt.model_executor.forward_batch_info import ForwardMode

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
        return fields, q, k, v, loc

    def run(self, backend, fields, q, k, v):
        """The layer's attention on `backend`, driven as a model drives it."""
        from sglang.srt.model_executor.forward_batch_info import ForwardBatch
        from sglang.srt.model_executor.forward_context import ForwardContext, forward_context

        batch = ForwardBatch(**fields)
        backend.init_forward_metadata(batch)
        with forward_context(ForwardContext(attn_backend=backend)):
            return self.layer(q, k, v, batch)

    def step(self, mode, prefix_lens, new_lens):
        """One forward of both backends over the requests' next new_lens tokens: (hk's, SGLang's)."""
        fields, q, k, v, loc = self.batch(mode, prefix_lens, new_lens)
        out = self.run(self.backend, fields, q, k, v)
        # the step's K and V are in the pool at their slots
        assert torch.equal(self.pool.get_key_buffer(0)[loc], k.view(-1, KV_HEADS, D))
        assert torch.equal(self.pool.get_value_buffer(0)[loc], v.view(-1, KV_HEADS, D))
        return out, self.run(self.reference, fields, q, k, v)


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


FP8 = torch.float8_e4m3fn
K_SCALE, V_SCALE = 0.02, 0.005  # some keys and values beyond 448 * scale: saturated


def sglang_pool(setup):
    """A pool as setup's, which SGLang's own set_kv_buffer writes."""
    from sglang.srt.mem_cache.memory_pool import MHATokenToKVPool

    p = setup.pool
    return MHATokenToKVPool(size=p.size, page_size=p.page_size, dtype=p.dtype, head_num=KV_HEADS, head_dim=D,
                            layer_num=1, device="cpu", enable_memory_saver=False)


def sglang_write(pool, layer, loc, k, v):
    """What SGLang's Triton backend does to save a step's K and V (copies: set_kv_buffer divides
    in place)."""
    k, v = k.view(-1, KV_HEADS, D).clone(), v.view(-1, KV_HEADS, D).clone()
    if layer.k_scale is None:
        pool.set_kv_buffer(layer, loc, k, v)
    else:
        pool.set_kv_buffer(layer, loc, k, v, layer.k_scale, layer.v_scale)


def reference(pool, layer, q, prefix_lens, new_lens):
    """Attention in float64 on the keys and values as `pool` holds them (rounded to e4m3 after
    the division by the layer's scales), times the scales."""
    def values(buffer, scale):
        return buffer.view(FP8).double() * (1.0 if scale is None else float(scale))

    keys, vals = values(pool.k_buffer[0], layer.k_scale), values(pool.v_buffer[0], layer.v_scale)
    out, start, queries = [], 0, q.view(-1, HEADS, D).double()
    for req, p, n in zip(PAGES, prefix_lens, new_lens):
        slots = [slot(req, i) for i in range(p + n)]
        k, v = (t[slots].repeat_interleave(HEADS // KV_HEADS, 1).transpose(0, 1) for t in (keys, vals))
        mask = torch.ones(n, p + n, dtype=torch.bool).tril(p)
        o = torch.nn.functional.scaled_dot_product_attention(queries[start:start + n].transpose(0, 1), k, v,
                                                             attn_mask=mask, scale=D ** -0.5)
        out.append(o.transpose(0, 1).reshape(n, HEADS * D))
        start += n
    return torch.cat(out).to(torch.bfloat16)


@pytest.mark.parametrize("scales", [None, (1.0, 1.0), (K_SCALE, V_SCALE)], ids=["no-scales", "unit", "scaled"])
def test_an_fp8_pool_is_written_as_sglang_writes_it_and_read_with_the_scales(patched, scales):
    from sglang.srt.model_executor.forward_batch_info import ForwardMode

    torch.manual_seed(2)
    setup = Setup(PAGE, FP8, scales)
    assert setup.pool.store_dtype == torch.uint8 and setup.backend.pool_problem is None
    sglangs, keys = sglang_pool(setup), []
    for n, (mode, prefix_lens, new_lens) in enumerate([(ForwardMode.EXTEND, [0, 0], [20, 7]),
                                                       (ForwardMode.EXTEND, [20, 7], [5, 12]),
                                                       (ForwardMode.DECODE, [25, 19], [1, 1])]):
        fields, q, k, v, loc = setup.batch(mode, prefix_lens, new_lens)
        out = setup.run(setup.backend, fields, q, k, v)
        sglang_write(sglangs, setup.layer, loc, k, v)
        keys.append((k, loc))
        assert torch.equal(setup.pool.k_buffer[0], sglangs.k_buffer[0])
        assert torch.equal(setup.pool.v_buffer[0], sglangs.v_buffer[0])
        close(out, reference(sglangs, setup.layer, q, prefix_lens, new_lens))
        assert counters.snapshot() == {"sglang.attention": {"hk": n + 1}}
    if scales and scales[0] != 1.0:
        stored = setup.pool.v_buffer[0].view(FP8).float()
        assert (stored.abs() == 448).any()  # saturated values
        # Dividing in fp32 (hk's write given the scale) would store other bytes for some keys.
        k, loc = torch.cat([k for k, _ in keys]), torch.cat([loc for _, loc in keys])
        fp32 = (k.float() / K_SCALE).to(FP8).view(torch.uint8).view(-1, KV_HEADS, D)
        assert not torch.equal(fp32, setup.pool.k_buffer[0][loc])


def test_every_bf16_value_is_stored_as_sglangs_pool_stores_it(patched):
    from sglang.srt.layers.radix_attention import RadixAttention
    from sglang.srt.mem_cache.memory_pool import MHATokenToKVPool

    from hk_sglang.attention_backend import write_kv

    values = torch.arange(-2 ** 15, 2 ** 15, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)  # NaNs too
    k = values.view(-1, KV_HEADS, D)
    v = k.flip(0)
    tokens = k.shape[0]
    layer = RadixAttention(num_heads=HEADS, head_dim=D, scaling=1.0, num_kv_heads=KV_HEADS, layer_id=0)
    hks, sglangs = (MHATokenToKVPool(size=tokens, page_size=PAGE, dtype=FP8, head_num=KV_HEADS, head_dim=D,
                                     layer_num=1, device="cpu", enable_memory_saver=False) for _ in range(2))
    loc = torch.randperm(tokens) + PAGE  # (the first page is SGLang's padding)
    write_kv(hks, layer, k, v, loc, torch.ones(1))
    sglang_write(sglangs, layer, loc, k, v)
    assert torch.equal(hks.k_buffer[0], sglangs.k_buffer[0]) and torch.equal(hks.v_buffer[0], sglangs.v_buffer[0])


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fnuz, torch.float8_e5m2])
def test_fp8_pools_hk_does_not_read_go_to_sglangs_backend(patched, dtype):
    """FNUZ (SGLang's fp8 on gfx942) and e5m2 bytes are not the OCP e4m3 hk's kernels read."""
    from sglang.srt.model_executor.forward_batch_info import ForwardMode

    torch.manual_seed(3)
    setup = Setup(PAGE, dtype)
    assert setup.backend.pool_problem == "dtype"
    fields, q, k, v, _ = setup.batch(ForwardMode.EXTEND, [0, 0], [6, 3])
    reset_uncovered_warnings()  # (warned once per process)
    with pytest.warns(UserWarning, match=r"sglang.attention: .* \(dtype\)"):
        out = setup.run(setup.backend, fields, q, k, v)
    assert torch.equal(out, setup.run(setup.reference, fields, q, k, v))
    assert counters.snapshot() == {"sglang.attention": {"engine:uncovered": 1}}


def test_fp8_scales_other_than_one_per_tensor_go_to_sglangs_backend(patched):
    from sglang.srt.model_executor.forward_batch_info import ForwardMode

    from hk_sglang.attention_backend import layer_problem

    torch.manual_seed(4)
    setup = Setup(PAGE, FP8, (K_SCALE, V_SCALE))
    q = torch.zeros(1, HEADS * D, dtype=torch.bfloat16)
    assert layer_problem(setup.layer, q, setup.pool) is None
    setup.layer.v_scale = None  # one without the other
    assert layer_problem(setup.layer, q, setup.pool) == "kv-scale"
    setup.layer.v_scale = torch.nn.Parameter(torch.full((KV_HEADS,), V_SCALE), requires_grad=False)  # per head
    assert layer_problem(setup.layer, q, setup.pool) == "kv-scale"
    fields, q, k, v, _ = setup.batch(ForwardMode.EXTEND, [0, 0], [6, 3])
    reset_uncovered_warnings()
    with pytest.warns(UserWarning, match=r"sglang.attention: .* \(kv-scale\)"):
        out = setup.run(setup.backend, fields, q, k, v)
    assert torch.equal(out, setup.run(setup.reference, fields, q, k, v))
    assert counters.snapshot() == {"sglang.attention": {"engine:uncovered": 1}}
