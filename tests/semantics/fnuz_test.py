"""The FNUZ fp8 formats (hk.fp8e4m3fnuz, hk.fp8e5m2fnuz: torch.float8_e4m3fnuz / e5m2fnuz, what
gfx942's matrix cores read) converted by the interpreter and, compiled, by the emulator on gfx942
and gfx1100, bit for bit against torch: every one of the 256 bytes decodes to fp32, bf16 and fp16
as torch reads it; fp32, bf16 and fp16 encode as torch's .to() does after saturation (finite
values beyond the largest, 240 or 57344, become it; infinities and NaN the one NaN, 0x80; -0 and
negatives rounding to zero become +0, there being no -0), every tie between two neighbouring
values included."""

import math

import pytest
import torch

import hk

ARCHS = ["gfx942", "gfx1100"]
FORMATS = {hk.fp8e4m3fnuz: (torch.float8_e4m3fnuz, 240.0), hk.fp8e5m2fnuz: (torch.float8_e5m2fnuz, 57344.0)}


def same_bits(a, b):
    """Bitwise equality, every NaN equal to every NaN."""
    nan = torch.isnan(a.float()) & torch.isnan(b.float())
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[a.element_size()]
    return bool((nan | (a.view(width) == b.view(width))).all())


def run(monkeypatch, arch, kernel, make_args):
    """The arguments after a run on the interpreter and after one on the emulator."""
    results = []
    for device in ("interp", "emu"):
        monkeypatch.setenv("HK_DEVICE", device)
        monkeypatch.setenv("HK_ARCH", arch)
        args = make_args()
        kernel(*args)
        results.append(args)
    return results


def check(results, index, expected, what):
    interp, emu = results[0][index], results[1][index]
    assert same_bits(interp, expected), "%s: the interpreter differs from torch:\n%s\n%s" % (what, interp, expected)
    assert same_bits(emu, expected), "%s: the emulator differs from torch:\n%s\n%s" % (what, emu, expected)


def decoder(dtype):
    @hk.kernel(grid=(1,))
    def decode(q: hk.Tensor[dtype], f: hk.Tensor[hk.fp32], b: hk.Tensor[hk.bf16], h: hk.Tensor[hk.fp16]):
        t = q[0, 0, 0, 0].load(hk.RT(dtype, 16, 16))
        f[0, 0, 0, 0] = t.to(hk.fp32)
        b[0, 0, 0, 0] = t.to(hk.bf16)
        h[0, 0, 0, 0] = t.to(hk.fp16)
    return decode


def encoder(dtype):
    @hk.kernel(grid=(1,))
    def encode(x: hk.Tensor[hk.fp32], qf: hk.Tensor[dtype], qb: hk.Tensor[dtype], qh: hk.Tensor[dtype]):
        t = x[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))
        qf[0, 0, 0, 0] = t.to(dtype)
        qb[0, 0, 0, 0] = t.to(hk.bf16).to(dtype)
        qh[0, 0, 0, 0] = t.to(hk.fp16).to(dtype)
    return encode


DECODE = {d: decoder(d) for d in FORMATS}
ENCODE = {d: encoder(d) for d in FORMATS}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", list(FORMATS), ids=lambda d: d.name)
def test_every_byte_decodes_as_torch_reads_it(monkeypatch, arch, dtype):
    torch_dtype, _ = FORMATS[dtype]
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).reshape(16, 16)
    make = lambda: [codes.clone().view(torch_dtype), torch.zeros(16, 16), torch.zeros(16, 16, dtype=torch.bfloat16),
                    torch.zeros(16, 16, dtype=torch.float16)]
    results = run(monkeypatch, arch, DECODE[dtype], make)
    value = codes.view(torch_dtype)
    assert torch.isnan(value.float()).sum() == 1 and torch.isnan(value.float())[8, 0]  # 0x80 only
    check(results, 1, value.float(), "fp32")
    check(results, 2, value.to(torch.bfloat16), "bf16")
    check(results, 3, value.to(torch.float16), "fp16")
    assert not any(torch.signbit(r[1][value.float() == 0]).any() for r in results)  # no -0


def edge_values(torch_dtype, top):
    """Specials, overflows, every positive and negative tie between neighbouring values (and
    the values either side of the tie above the largest), then log-uniform values."""
    finite = sorted(v for v in torch.arange(128, dtype=torch.int32).to(torch.uint8).view(torch_dtype).float().tolist())
    ties = [(x + y) / 2 for x, y in zip(finite, finite[1:])] + [top + (top - finite[-2]) / 2]
    above = [math.nextafter(ties[-1], -math.inf), math.nextafter(ties[-1], math.inf)]
    special = [0.0, -0.0, math.inf, -math.inf, math.nan, top, -top, top * 1.0001, 250.0, 256.0, 1000.0, 57344.0,
               61439.0, 61440.0, 65536.0, 1e20, -1e20, 3.4e38, -1e-9, -1e-30, 1e-45, finite[1], -finite[1],
               finite[1] / 2, -finite[1] / 2, finite[1] * 0.75, -finite[1] * 0.51]
    values = special + above + ties + [-t for t in ties]
    g = torch.Generator().manual_seed(5)
    rest = 16 * 64 - len(values)
    logs = torch.rand(rest, generator=g, dtype=torch.float64) * (math.log2(top) + 22) - 20
    signs = torch.where(torch.rand(rest, generator=g) < 0.5, -1.0, 1.0).double()
    values += (signs * torch.exp2(logs)).tolist()
    return torch.tensor(values, dtype=torch.float32).reshape(16, 64)


def saturated(x, torch_dtype, top):
    """torch's .to() of x after saturation: finite values clamped to +-top, infinities NaN."""
    x = x.float()
    x = torch.where(torch.isinf(x), torch.full_like(x, math.nan), torch.clamp(x, -top, top))
    return x.to(torch_dtype)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", list(FORMATS), ids=lambda d: d.name)
def test_fp32_bf16_fp16_encode_as_torch_with_saturation(monkeypatch, arch, dtype):
    torch_dtype, top = FORMATS[dtype]
    x = edge_values(torch_dtype, top)
    make = lambda: [x.clone()] + [torch.zeros(16, 64, dtype=torch_dtype) for _ in range(3)]
    results = run(monkeypatch, arch, ENCODE[dtype], make)
    check(results, 1, saturated(x, torch_dtype, top), "from fp32")
    check(results, 2, saturated(x.to(torch.bfloat16), torch_dtype, top), "from bf16")
    check(results, 3, saturated(x.to(torch.float16), torch_dtype, top), "from fp16")
    got = results[1][1][0].view(torch.uint8).tolist()
    # The edges by name: the largest, saturation, the one NaN, no -0.
    assert got[:7] == [0, 0, 0x80, 0x80, 0x80, 0x7F, 0xFF]
    assert got[7:11] == [0x7F] * 4 if dtype is hk.fp8e4m3fnuz else got[7] == 0x7F
    assert got[18:21] == [0, 0, 0]
    assert 0x80 not in got[21:]
