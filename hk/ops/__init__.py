"""hk.ops: the kernel library as torch operators (torch.ops.hk.*).

Each op is a torch.library custom op in the `hk` namespace with a fake implementation, so that
torch.compile(fullgraph=True) traces through it, and runs its hk kernels on the runner HK_DEVICE
chooses (a GPU; `interp` or `emu` without one).

Norms (over the last dimension, any leading shape; bf16, fp16 or fp32):

    rms_norm(x, weight=None, eps=1e-6)                 x / sqrt(mean(x^2) + eps) [* weight]
    layer_norm(x, weight=None, bias=None, eps=1e-5)    (x - mean) / sqrt(var + eps) [* weight] [+ bias]
    softmax(x, weight=None)                            exp(x - max) / sum [* weight]

and for each NAME of those: NAME_out(out, x, ...) writes into out; fused_add_NAME(x, residual,
...) returns (NAME(x + residual), x + residual); fused_add_NAME_(x, residual, ...) does the same
in place (x becomes the result, residual the sum), as vLLM's fused_add_rms_norm.

Elementwise (any shape; bf16, fp16 or fp32; computed in fp32), each also as NAME_out(out, ...):

    silu(x), gelu_tanh(x), relu(x)
    silu_and_mul(x), gelu_tanh_and_mul(x)    f(x[..., :d]) * x[..., d:] (vLLM's, out= as its)
    add(x, y), mul(x, y)                      same shapes

GEMM (bf16 or fp16, fp32 accumulation), also as linear_out(out, ...):

    linear(x, weight, bias=None)              x @ weightᵀ (+ bias); weight [N, K], rows may be padded

Attention (bf16), also as flash_attention_out(out, ...):

    flash_attention(q, k, v, scale, causal=False)   q [B, H, N, D], k, v [B, Hkv, N, D], D 64 or 128

and hk.ops.sdpa, a drop-in for torch.nn.functional.scaled_dot_product_attention that runs
flash_attention on the calls it covers and torch's SDPA on the others (hk.ops.sdpa_route says
which and why).
"""

from hk.ops import attention, elementwise, gemm, norms
from hk.ops.sdpa import route as sdpa_route, sdpa

OPS = dict(norms.OPS)
OPS.update(elementwise.OPS)
OPS.update(gemm.OPS)
OPS.update(attention.OPS)

for _name, _op in OPS.items():
    globals()[_name] = _op

__all__ = sorted(list(OPS) + ["sdpa", "sdpa_route"])
