"""Prints, side by side and from one run, the static figures of hk's GEMM and attention and of the
equivalent Triton 3.9 kernels compiled ahead of time for the same targets, with their ratio;
then the dynamic figures of hk's GEMM and attention, counted on the emulator; then hk.perf's
predicted TFLOP/s of hk's GEMM beside each Triton tile's and the best of them, at 4096^3 on each
target's device (predictions, with the model's stated error: no GPU ran them).

    ./bazelw run //tests/bench:isa_bench

Static: instructions in the main loop per matrix instruction (hk.runtime.isa_stats), VGPRs,
SGPRs, spills, LDS. Dynamic: instructions the emulator executes per matrix instruction, as the
difference between two K sizes (what one more K step costs: prologue and epilogue cancel).
Triton's kernels are written here in the style of its tutorials, for the same tiles and warps
as hk's.
"""

import math
import os
import re
import tempfile

import numpy as np

from examples import load
from hk.errors import HKError
from hk.runtime import isa_stats

ARCHS = ["gfx1100", "gfx1201", "gfx942", "gfx950"]
WAVE = {"gfx1100": 32, "gfx1201": 32, "gfx942": 64, "gfx950": 64}
# Triton's GEMM tiles: (BLOCK_M, BLOCK_N, BLOCK_K, num_warps), hk's own first.
TRITON_GEMM_TILES = [(128, 128, 32, 4), (128, 64, 32, 4), (64, 64, 32, 4), (64, 64, 64, 4), (128, 128, 64, 8)]


def attentions():
    """(name, hk kernel, head size, keys per block, waves): the fast forms of
    examples/05_attention.py (16 queries per wave)."""
    from hk.ops.attention import KEY_BLOCK, WAVES

    ex = load("05_attention")
    return [("attn_d64", ex.attention, 64, KEY_BLOCK[64], WAVES),
            ("attn_d128", ex.attention_d128_gqa, 128, KEY_BLOCK[128], WAVES)]


def triton_attention_tiles(kb, waves):
    """Triton's attention tiles (BLOCK_M, BLOCK_N, num_warps): hk's own first, then the
    tutorials' usual ones."""
    tiles = [(16 * waves, kb, waves), (64, 32, 4), (128, 32, 4), (64, 64, 4), (128, 64, 8)]
    return [t for i, t in enumerate(tiles) if t not in tiles[:i]]


def triton_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def matmul_abt(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        # C = A Bᵀ, A M x K and B N x K row-major, one BLOCK_M x BLOCK_N tile per program.
        rm = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        a = a_ptr + rm[:, None] * stride_am + rk[None, :]
        b = b_ptr + rn[:, None] * stride_bn + rk[None, :]
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            x = tl.load(a, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
            y = tl.load(b, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
            acc += tl.dot(x, tl.trans(y))
            a += BLOCK_K
            b += BLOCK_K
        c = c_ptr + rm[:, None] * stride_cm + rn[None, :]
        tl.store(c, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, n, scale, D: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        # softmax(Q Kᵀ · scale) V for BLOCK_M query rows of one head, keys BLOCK_N at a time.
        head = tl.program_id(1)
        rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        rd = tl.arange(0, D)
        base = head * n * D
        q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :], mask=rm[:, None] < n, other=0.0)
        m = tl.full((BLOCK_M,), float("-inf"), tl.float32)
        l = tl.zeros((BLOCK_M,), tl.float32)
        acc = tl.zeros((BLOCK_M, D), tl.float32)
        for start in range(0, n, BLOCK_N):
            rn = start + tl.arange(0, BLOCK_N)
            k = tl.load(k_ptr + base + rn[:, None] * D + rd[None, :], mask=rn[:, None] < n, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            s = tl.where(rn[None, :] < n, s, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, 1))
            p = tl.exp(s - m_new[:, None])
            alpha = tl.exp(m - m_new)
            l = l * alpha + tl.sum(p, 1)
            v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :], mask=rn[:, None] < n, other=0.0)
            acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
            m = m_new
        tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], (acc / l[:, None]).to(tl.bfloat16),
                 mask=rm[:, None] < n)

    return matmul_abt, attention_fwd


def compile_triton(fn, signature, constexprs, arch, divisible, num_warps, shared=False):
    """The code object Triton compiles for `arch`; `divisible` names the 16-divisible arguments.
    With `shared`, (code object, the dynamic LDS bytes its launch needs)."""
    import triton
    from triton.backends.compiler import GPUTarget

    attrs = {(fn.arg_names.index(name),): [["tt.divisibility", 16]] for name in divisible}
    src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    compiled = triton.compile(src, target=GPUTarget("hip", arch, WAVE[arch]),
                              options={"num_warps": num_warps, "num_stages": 2})
    return (compiled.asm["hsaco"], compiled.metadata.shared) if shared else compiled.asm["hsaco"]


def figures_of(data, tmp, name):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    (stats,) = isa_stats.stats(path).values()
    return stats


def row(kernel, arch, who, s):
    pm = "%.2f" % s.per_matrix if s.per_matrix is not None else "-"
    return "%-10s %-8s %-7s %8s %6d %6d %7d %8d" % (kernel, arch, who, pm, s.vgprs + s.agprs, s.sgprs,
                                                   s.spills, s.lds_bytes)


def static(tmp):
    matmul, attention = triton_kernels()
    gemm = load("04_gemm").gemm
    attns = attentions()
    print("%-10s %-8s %-7s %8s %6s %6s %7s %8s %s" % ("kernel", "arch", "", "per-mma", "VGPRs", "SGPRs",
                                                     "spills", "LDS", "Triton/hk"))
    mm_sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
              "stride_am": "i32", "stride_bn": "i32", "stride_cm": "i32"}
    at_sig = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*bf16", "n": "i32",
              "scale": "fp32"}
    divisible = ["a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bn", "stride_cm"]
    for arch in ARCHS:
        built = gemm.build(arch, divisors=64)
        hk_s = figures_of(open(built.path, "rb").read(), tmp, "hk_gemm.%s.co" % arch)
        print(row("gemm", arch, "hk", hk_s))
        # Triton's at several tiles: hk's own (128 x 128 x 32, 4 warps) and the best of the rest.
        best = None
        for bm, bn, bk, warps in TRITON_GEMM_TILES:
            tr_s = figures_of(compile_triton(matmul, mm_sig, {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk},
                                             arch, divisible, warps), tmp, "tr_gemm.%s.co" % arch)
            tile = "%dx%dx%d/%d" % (bm, bn, bk, warps)
            print(row("gemm", arch, "Triton", tr_s) + "   %.2f  %s" % (tr_s.per_matrix / hk_s.per_matrix, tile))
            if tr_s.spills == 0 and (best is None or tr_s.per_matrix < best[0].per_matrix):
                best = (tr_s, tile)
        if best:
            print("%-10s %-8s best Triton without spills: %s, %.2f per matrix instruction, %.2fx hk's"
                  % ("gemm", arch, best[1], best[0].per_matrix, best[0].per_matrix / hk_s.per_matrix))
    for name, kernel, d, kb, waves in attns:
        for arch in ARCHS:
            try:
                built = kernel.build(arch, divisors=64)
                hk_s = figures_of(open(built.path, "rb").read(), tmp, "hk_attn.%s.co" % arch)
                print(row(name, arch, "hk", hk_s))
            except HKError as e:  # the gate refuses a spilling build: print why, go on
                print("%-10s %-8s %-7s refused: %s" % (name, arch, "hk", str(e).splitlines()[0][:90]))
                hk_s = None
            best = None
            for bm, bn, warps in triton_attention_tiles(kb, waves):
                tr_s = figures_of(compile_triton(attention, at_sig, {"D": d, "BLOCK_M": bm, "BLOCK_N": bn}, arch,
                                                 ["q_ptr", "k_ptr", "v_ptr", "o_ptr"], warps), tmp, "tr_attn.%s.co" % arch)
                ratio = "   %.2f" % (tr_s.per_matrix / hk_s.per_matrix) if hk_s else ""
                tile = "%dx%d/%d" % (bm, bn, warps)
                print(row(name, arch, "Triton", tr_s) + ratio + "  " + tile)
                if tr_s.spills == 0 and (best is None or tr_s.per_matrix < best[0].per_matrix):
                    best = (tr_s, tile)
            if best and hk_s:
                print("%-10s %-8s best Triton without spills: %s, %.2f per matrix instruction, %.2fx hk's"
                      % (name, arch, best[1], best[0].per_matrix, best[0].per_matrix / hk_s.per_matrix))


def k_per_instruction(path, arch):
    """K of the matrix instruction the main loop runs (v_wmma_f32_16x16x16_*: 16)."""
    from hk.runtime import cocheck, waitcheck

    for ins in waitcheck.disassemble(cocheck.find_objdump(), path, arch).popitem()[1]:
        m = re.match(r"v_(?:wmma|mfma)_\w+?_16x16x(\d+)", ins.mnemonic)
        if m:
            return int(m.group(1))
    raise ValueError("no 16x16 matrix instruction in %s" % path)


def dynamic():
    import hk.emu
    import torch
    from hk.runtime import emu_launch

    gemm = load("04_gemm").gemm
    print()
    print("dynamic: instructions executed per matrix instruction (one 128x128 tile, K 256 vs 512)")
    for arch in ("gfx1100", "gfx950"):
        built = gemm.build(arch, divisors=64)
        kinst = k_per_instruction(built.path, arch)
        counts = []
        for k in (256, 512):
            a = torch.randn(128, k, dtype=torch.bfloat16)
            b = torch.randn(128, k, dtype=torch.bfloat16)
            c = torch.empty(128, 128)
            counts.append(emu_launch.run(built, (1, 1, 1), [a, b, c]))
            np.testing.assert_allclose(c.numpy(), (a.float() @ b.float().t()).numpy(), rtol=1e-3, atol=1e-2)
        waves = 4
        mma = waves * (64 // 16) * (64 // 16) * 256 // kinst  # per wave: a 64x64 quarter, 256 more K
        print("%-10s %-8s %6.2f  (%d wave-instructions more for %d more matrix instructions)"
              % ("gemm", arch, (counts[1] - counts[0]) / mma, counts[1] - counts[0], mma))
    print("dynamic: the same for attention (one workgroup, 128 vs 256 keys)")
    for name, kernel, d, _, waves in attentions():
        for arch in ("gfx1100", "gfx950"):
            built = kernel.build(arch, divisors=64)
            kinst = k_per_instruction(built.path, arch)
            counts = []
            for n in (128, 256):
                q = torch.randn(1, 16 * waves, d, dtype=torch.bfloat16)
                k, v = (torch.randn(1, n, d, dtype=torch.bfloat16) for _ in range(2))
                o = torch.empty(1, 16 * waves, d, dtype=torch.bfloat16)
                counts.append(emu_launch.run(built, (1, 1, 1), [q, k, v, o, 1 / math.sqrt(d), 0]))
            # Per wave and per 16 keys: Sᵀ (d/16 instructions of K 16) and Oᵀ (d/16 of K 16).
            mma = waves * (128 // 16) * 2 * (d // 16) * 16 // kinst
            print("%-10s %-8s %6.2f  (%d wave-instructions more for %d more matrix instructions)"
                  % (name, arch, (counts[1] - counts[0]) / mma, counts[1] - counts[0], mma))


def predicted(n=4096):
    """hk.perf's predictions of hk's GEMM and of Triton's at each tile, C = A·Bᵀ at n^3 (bf16 in)."""
    import hk.emu
    import hk.perf
    import torch
    from hk.emu import runner

    matmul, _ = triton_kernels()
    gemm = load("04_gemm").gemm
    mm_sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
              "stride_am": "i32", "stride_bn": "i32", "stride_cm": "i32"}
    divisible = ["a_ptr", "b_ptr", "c_ptr", "K", "stride_am", "stride_bn", "stride_cm"]
    print()
    print("predicted (hk.perf, not measured): C = A·Bᵀ, bf16 in, fp32 out, M = N = K = %d" % n)
    for arch in ARCHS:
        meta = [torch.empty(n, n, dtype=torch.bfloat16, device="meta") for _ in range(2)]
        out = torch.empty(n, n, dtype=torch.float32, device="meta")
        mine = hk.perf.predict(gemm, *meta, out, arch=arch)
        print("%-8s hk       %7.1f TFLOP/s  %s" % (arch, mine.tflops, mine))
        best = None
        for bm, bn, bk, warps in TRITON_GEMM_TILES:
            co, lds = compile_triton(matmul, mm_sig, {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, arch, divisible,
                                     warps, shared=True)
            (name,) = hk.emu.kernels(co)
            explicit = len(runner.load(co)[0].kernel(name).explicit_args)
            args = [hk.emu.Zeros(n * n * 2), hk.emu.Zeros(n * n * 2), hk.emu.Zeros(n * n * 4), n, n, n, n, n, n]
            try:
                p = hk.perf.predict_code_object(co, name, (n // bn, n // bm), (warps * WAVE[arch],),
                                                args + [None] * (explicit - len(args)), arch=arch, shared_mem=lds)
            except HKError as e:
                print("%-8s Triton   %s: %s" % (arch, "%dx%dx%d/%d" % (bm, bn, bk, warps), str(e).splitlines()[0]))
                continue
            tile = "%dx%dx%d/%d" % (bm, bn, bk, warps)
            print("%-8s Triton   %7.1f TFLOP/s  %s  (%s)" % (arch, p.tflops, tile, p.bound))
            if best is None or p.tflops > best[0].tflops:
                best = (p, tile)
        if best:
            print("%-8s hk / best Triton (%s): %.2fx (predicted)" % (arch, best[1], mine.tflops / best[0].tflops))


def main():
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="hk-isa-bench-triton-"))
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, without its warning
    with tempfile.TemporaryDirectory(prefix="hk-isa-bench-") as tmp:
        static(tmp)
    dynamic()
    predicted()


if __name__ == "__main__":
    main()
