"""Assembles a one-kernel AMDGPU code object from a few instructions with the toolchain's
llvm-mc and ld.lld, with a metadata note, for tests of the gates."""

import os
import subprocess
import textwrap

WAVE = {"gfx1100": 32, "gfx1201": 32, "gfx942": 64, "gfx950": 64}


def assemble(body, arch, out_dir, name="k", vgpr_spills=0, llvm_bin=None):
    """The path of a linked code object whose kernel `name` runs `body` (assembly lines)."""
    llvm_bin = llvm_bin or os.environ["HK_LLVM_BIN"]
    wave = WAVE[arch]
    wave32 = "  .amdhsa_wavefront_size32 1\n" if wave == 32 else ""
    accum = "  .amdhsa_accum_offset 8\n" if arch in ("gfx942", "gfx950") else ""
    src = textwrap.dedent("""\
        .amdgcn_target "amdgcn-amd-amdhsa--{arch}"
        .text
        .globl {name}
        .p2align 8
        .type {name},@function
        {name}:
        {body}
          s_endpgm
        .rodata
        .p2align 6
        .amdhsa_kernel {name}
          .amdhsa_next_free_vgpr 16
          .amdhsa_next_free_sgpr 16
          .amdhsa_user_sgpr_kernarg_segment_ptr 1
        {wave32}{accum}.end_amdhsa_kernel
        .amdgpu_metadata
        ---
        amdhsa.kernels:
          - .name: {name}
            .symbol: {name}.kd
            .kernarg_segment_size: 8
            .kernarg_segment_align: 8
            .group_segment_fixed_size: 1024
            .private_segment_fixed_size: 0
            .wavefront_size: {wave}
            .sgpr_count: 16
            .vgpr_count: 16
            .vgpr_spill_count: {spills}
            .sgpr_spill_count: 0
            .max_flat_workgroup_size: 256
        amdhsa.target: amdgcn-amd-amdhsa--{arch}
        amdhsa.version: [1, 2]
        ...
        .end_amdgpu_metadata
        """).format(arch=arch, name=name, body=textwrap.indent(textwrap.dedent(body).strip(), "  "),
                    wave=wave, wave32=wave32, accum=accum, spills=vgpr_spills)
    base = os.path.join(out_dir, "%s_%s" % (name, arch))
    with open(base + ".s", "w") as f:
        f.write(src)
    subprocess.run([os.path.join(llvm_bin, "llvm-mc"), "-triple=amdgcn-amd-amdhsa", "-mcpu=" + arch,
                    "-filetype=obj", "-o", base + ".o", base + ".s"], check=True)
    subprocess.run([os.path.join(llvm_bin, "ld.lld"), "-shared", "-o", base + ".co", base + ".o"], check=True)
    return base + ".co"
