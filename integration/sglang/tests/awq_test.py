"""An AWQ layer built SGLang's way (AWQConfig.from_config, a checkpoint's packed tensors) on
hk.ops.awq_gemm, against SGLang's torch dequantization and a matmul."""

import torch

from hk_engine import counters

K, N, GROUP = 64, 128, 32
AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]  # nibble j of an int32 holds column AWQ_ORDER[j] of its 8


def pack(values):
    """[rows, cols] 4-bit values as AWQ stores them: [rows, cols / 8] int32."""
    grouped = values.view(values.shape[0], -1, 8)
    packed = torch.zeros(grouped.shape[:2], dtype=torch.int32)
    for j, column in enumerate(AWQ_ORDER):
        packed |= grouped[..., column] << (4 * j)
    return packed


def test_an_awq_layer_runs_on_hk(patched):
    from sglang.kernels.ops.quantization.awq_triton import awq_dequantize_decomposition
    from sglang.srt.layers.linear import ReplicatedLinear
    from sglang.srt.layers.quantization.awq import AWQConfig

    config = AWQConfig.from_config({"w_bit": 4, "q_group_size": GROUP, "zero_point": True})
    layer = ReplicatedLinear(K, N, bias=True, params_dtype=torch.float16, quant_config=config,
                             prefix="model.layers.0.mlp.down_proj")
    assert type(layer.scheme.kernel).__name__ == "AWQLinearKernel"
    torch.manual_seed(0)
    q = torch.randint(0, 16, (K, N), dtype=torch.int32)
    zeros = torch.randint(0, 16, (K // GROUP, N), dtype=torch.int32)
    scales = torch.rand(K // GROUP, N, dtype=torch.float16) * 0.02 + 0.005
    layer.qweight.data.copy_(pack(q))
    layer.qzeros.data.copy_(pack(zeros))
    layer.scales.data.copy_(scales)
    layer.bias.data.copy_(torch.randn(N, dtype=torch.float16) * 0.1)
    layer.quant_method.process_weights_after_loading(layer)

    weight = awq_dequantize_decomposition(layer.qweight, layer.scales, layer.qzeros)
    # The checkpoint's weight, as packed: SGLang's dequantization reads it back.
    assert torch.equal(weight, ((q - zeros.repeat_interleave(GROUP, 0)).half() * scales.repeat_interleave(GROUP, 0)))
    x = torch.randn(2, 3, K, dtype=torch.float16)
    out, _ = layer(x)
    ref = torch.matmul(x.float(), weight.float()) + layer.bias.float()
    assert out.shape == (2, 3, N) and out.dtype == torch.float16
    torch.testing.assert_close(out.float(), ref, rtol=2e-2, atol=2e-2)
    assert counters.snapshot() == {"sglang.awq": {"hk": 1}}
