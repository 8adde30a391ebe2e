"""SGLang's RMSNorm on hk.ops.rms_norm and fused_add_rms_norm(_), against RMSNorm's own
forward_native: the layer called as models call it (SGLang's dispatch picks forward_native on a
CPU), with and without a residual, and forward_cuda's in-place form; a layer variant hk does not
cover stays SGLang's."""

import torch

from hk_engine import counters

HIDDEN, EPS = 64, 1e-6


def make(**kwargs):
    from sglang.srt.layers.layernorm import RMSNorm

    norm = RMSNorm(HIDDEN, eps=EPS, weight_dtype=torch.bfloat16, **kwargs)
    norm.weight.data.copy_(1 + torch.randn(HIDDEN, dtype=torch.bfloat16) * 0.1)
    return norm


def close(a, b):
    assert a.dtype == b.dtype == torch.bfloat16 and a.shape == b.shape
    torch.testing.assert_close(a.float(), b.float(), rtol=2e-2, atol=2e-2)


def test_rms_norm_runs_on_hk(patched):
    from sglang.srt.layers.layernorm import RMSNorm

    stock = RMSNorm.forward_native.__wrapped__  # SGLang's own, under the hook
    assert stock is not RMSNorm.forward_native and stock.__module__ == "sglang.srt.layers.layernorm"
    torch.manual_seed(0)
    norm = make()
    x = torch.randn(2, 3, HIDDEN, dtype=torch.bfloat16)
    residual = torch.randn(2, 3, HIDDEN, dtype=torch.bfloat16)
    close(norm(x), stock(norm, x))
    assert counters.snapshot() == {"sglang.norm": {"hk": 1}}

    x_in, residual_in = x.clone(), residual.clone()
    out, res = norm(x_in, residual_in)
    ref_out, ref_res = stock(norm, x, residual)
    close(out, ref_out)
    close(res, ref_res)
    # forward_native leaves its inputs as they were, as SGLang's does.
    assert torch.equal(x_in, x) and torch.equal(residual_in, residual)
    assert counters.snapshot() == {"sglang.norm": {"hk": 2}}


def test_forward_cuda_adds_and_normalizes_in_place(patched):
    from sglang.srt.layers.layernorm import RMSNorm

    stock = RMSNorm.forward_native.__wrapped__
    torch.manual_seed(1)
    norm = make()
    x, residual = torch.randn(5, HIDDEN, dtype=torch.bfloat16), torch.randn(5, HIDDEN, dtype=torch.bfloat16)
    x_in, residual_in = x.clone(), residual.clone()
    out, res = norm.forward_cuda(x_in, residual_in)
    assert out is x_in and res is residual_in
    ref_out, ref_res = stock(norm, x, residual)
    close(out, ref_out)
    close(res, ref_res)
    assert counters.snapshot() == {"sglang.norm": {"hk": 1}}


def test_a_variant_hk_does_not_cover_stays_sglangs(patched):
    from sglang.srt.layers.layernorm import RMSNorm

    torch.manual_seed(2)
    norm = make(fp32_residual=True)
    x, residual = torch.randn(3, HIDDEN, dtype=torch.bfloat16), torch.randn(3, HIDDEN, dtype=torch.bfloat16)
    out, res = norm(x, residual)
    ref_out, ref_res = RMSNorm.forward_native.__wrapped__(norm, x, residual)
    assert res.dtype == torch.float32 and torch.equal(out, ref_out) and torch.equal(res, ref_res)
    assert counters.snapshot() == {"sglang.norm": {"engine:uncovered": 1}}


def test_a_norm_handed_its_next_linear_runs_on_hk_unless_that_linear_takes_fp8(patched, monkeypatch):
    # Models hand each decoder norm the linear after it (fuse_input_quant); SGLang quantizes the
    # norm's output in its kernel only for a linear with a static per-tensor FP8 input scale.
    from sglang.srt.layers import layernorm

    torch.manual_seed(3)
    norm = make()
    following = torch.nn.Linear(HIDDEN, 8, bias=False)
    norm.fuse_input_quant(following)
    x = torch.randn(4, HIDDEN, dtype=torch.bfloat16)
    close(norm(x), layernorm.RMSNorm.forward_native.__wrapped__(norm, x))
    assert counters.snapshot() == {"sglang.norm": {"hk": 1}}

    monkeypatch.setattr(layernorm, "_fp8_static_input_scale",
                        lambda linear: torch.ones(1) if linear is following else None)
    norm(x)
    assert counters.snapshot() == {"sglang.norm": {"hk": 1, "engine:uncovered": 1}}
