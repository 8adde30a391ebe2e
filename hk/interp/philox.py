"""Philox 4x32-10 and the uniform floats Triton's tl.rand draws from it, on torch tensors.

The constants and the conversion to floats are those of Triton's triton.language.random, so
hk.rand(seed, offsets) gives the same floats as tl.rand(seed, offsets).
"""

import torch

_M32 = 0xFFFFFFFF
KEY_A = 0x9E3779B9
KEY_B = 0xBB67AE85
ROUND_A = 0xD2511F53
ROUND_B = 0xCD9E8D57
ROUNDS = 10
# 2**-31: the largest int32 maps just below 1.
SCALE = 4.6566127342e-10


def _mul_parts(a, x):
    """(hi, lo) 32-bit halves of the 64-bit product of the constant a and uint32 tensor x."""
    product = x * a  # exact in int64: both factors < 2**32
    return (product >> 32) & _M32, product & _M32


def philox(seed, c0, c1, c2, c3, rounds=ROUNDS):
    """Philox 4x32 on int64 tensors holding uint32 values; seed is a Python int (64-bit)."""
    k0 = seed & _M32
    k1 = (seed >> 32) & _M32
    for _ in range(rounds):
        hi_b, lo_b = _mul_parts(ROUND_B, c2)
        hi_a, lo_a = _mul_parts(ROUND_A, c0)
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0 = (k0 + KEY_A) & _M32
        k1 = (k1 + KEY_B) & _M32
    return c0, c1, c2, c3


def uniform(seed, offsets):
    """tl.rand(seed, offsets): fp32 in [0, 1) from the first Philox word of each offset."""
    c0 = offsets.to(torch.int64) & _M32
    zero = torch.zeros_like(c0)
    x, _, _, _ = philox(int(seed) & 0xFFFFFFFFFFFFFFFF, c0, zero, zero, zero)
    # Reinterpret as int32, fold negatives onto non-negatives, scale by 2**-31.
    signed = torch.where(x >= 2 ** 31, x - 2 ** 32, x)
    folded = torch.where(signed < 0, -signed - 1, signed)
    return folded.to(torch.float32) * torch.tensor(SCALE, dtype=torch.float32)
