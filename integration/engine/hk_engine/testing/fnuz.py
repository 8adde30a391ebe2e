"""torch._scaled_mm on FNUZ fp8 operands as a GPU's GEMM computes it (fp32 products, then the
scales), for tests that stand an engine up as on MI300 on a CPU: torch's CPU build takes
float8_e4m3fnuz in _scaled_mm or refuses it depending on the host (its oneDNN path, which it takes
on CPUs with AMX, refuses FNUZ), and the engines' own fallback GEMMs call it.

    scaled_mm_on_fnuz(monkeypatch)    # in a fixture; other operands keep torch's own
"""

import torch

FNUZ = (torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)


def scaled_mm_on_fnuz(monkeypatch):
    own = torch._scaled_mm

    def scaled_mm(a, b, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None, **kwargs):
        if a.dtype not in FNUZ:
            return own(a, b, scale_a, scale_b, bias=bias, scale_result=scale_result, out_dtype=out_dtype, **kwargs)
        if b.dtype not in FNUZ or scale_result is not None or kwargs:
            raise NotImplementedError("FNUZ _scaled_mm of %s x %s with %s" % (a.dtype, b.dtype, sorted(kwargs)))
        out = (a.float() @ b.float()) * scale_a.float() * scale_b.float()
        return (out if bias is None else out + bias.float()).to(out_dtype or a.dtype)

    monkeypatch.setattr(torch, "_scaled_mm", scaled_mm)
