"""SGLang's unquantized linear layers, built SGLang's way, on hk.ops.linear: the parallel layer
classes in bf16, a weight that is a row-strided view, and a routing table that sends one shape
to hk and another to SGLang's F.linear."""

import torch
import torch.nn.functional as F

from hk_engine import counters

K, N = 64, 96


def build(cls, *args, bias=True, **kwargs):
    """A layer of `cls` with random bf16 weights loaded through its weight loaders."""
    layer = cls(*args, bias=bias, params_dtype=torch.bfloat16, **kwargs)
    for name, param in layer.named_parameters():
        param.weight_loader(param, torch.randn(param.shape, dtype=torch.bfloat16) * 0.1)
    layer.quant_method.process_weights_after_loading(layer)
    return layer


def check(layer, x):
    out, out_bias = layer(x)
    ref = F.linear(x.float(), layer.weight.float(), None if layer.bias is None else layer.bias.float())
    assert out.dtype == torch.bfloat16 and out_bias is None
    torch.testing.assert_close(out.float(), ref, rtol=2e-2, atol=2e-2)


def test_parallel_layers_run_on_hk(patched):
    from sglang.srt.layers.linear import (ColumnParallelLinear, QKVParallelLinear, ReplicatedLinear,
                                          RowParallelLinear)

    torch.manual_seed(0)
    x = torch.randn(5, K, dtype=torch.bfloat16)
    check(build(ReplicatedLinear, K, N), x)
    check(build(ColumnParallelLinear, K, N, bias=False), x)
    check(build(RowParallelLinear, K, N), x)
    qkv = build(QKVParallelLinear, K, 16, 4, 2, bias=False)
    assert qkv.weight.shape == (128, K)
    check(qkv, x)
    assert counters.snapshot() == {"sglang.linear": {"hk": 4}}


def test_a_row_strided_weight_is_read_in_place(patched):
    from sglang.srt.layers.linear import ReplicatedLinear

    torch.manual_seed(1)
    layer = build(ReplicatedLinear, K, N, bias=False)
    padded = torch.zeros(N, K + 64, dtype=torch.bfloat16)
    padded[:, :K] = layer.weight.data
    layer.weight = torch.nn.Parameter(padded[:, :K], requires_grad=False)
    assert layer.weight.stride() == (K + 64, 1)
    check(layer, torch.randn(3, 2, K, dtype=torch.bfloat16))
    assert counters.snapshot() == {"sglang.linear": {"hk": 1}}


def test_the_routing_table_sends_shapes_to_hk_or_sglang(patched, routes):
    from sglang.srt.layers.linear import ReplicatedLinear

    routes({"target": "any", "ops": {"linear": [{"when": {"dtype": ["bfloat16"], "m": [1, 4]}, "route": "hk"},
                                                {"when": {}, "route": "engine"}]}})
    torch.manual_seed(2)
    layer = build(ReplicatedLinear, K, N)
    check(layer, torch.randn(3, K, dtype=torch.bfloat16))   # m 3: hk
    check(layer, torch.randn(9, K, dtype=torch.bfloat16))   # m 9: SGLang's
    fp32 = ReplicatedLinear(K, N, bias=False, params_dtype=torch.float32)
    fp32.weight.data.normal_()
    out, _ = fp32(torch.randn(2, K))                        # fp32: not hk's
    assert out.dtype == torch.float32
    assert counters.snapshot() == {"sglang.linear": {"hk": 1, "engine": 1, "engine:uncovered": 1}}
