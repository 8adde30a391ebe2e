"""Known-answer kernels in assembly: wraps instruction snippets in a kernel, assembles them with
the hermetic llvm-mc and links them with ld.lld into a loadable code object.

Every kernel gets the same frame. On entry to the snippet:
  s[0:1] kernarg pointer, s[4:5] `out`, s[6:7] `inp` (the two buffer arguments),
  v0 the work-item id, v100 = 4 * v0 (a per-lane byte offset);
the snippet leaves its results in the VGPRs listed in `results`, which the frame stores lane by
lane: result i of lane l lands at out[i * wave + l] (32-bit words).
"""

import os
import subprocess
import tempfile

from absl import flags

FLAGS = flags.FLAGS
flags.DEFINE_string("llvm_mc", None, "the hermetic llvm-mc")
flags.DEFINE_string("lld", None, "the hermetic ld.lld")

WAVE = {"gfx1100": 32, "gfx1201": 32, "gfx942": 64, "gfx950": 64}

_PROLOGUE = {
    "gfx11": """
  s_load_b128 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v100, 2, v0
  s_waitcnt lgkmcnt(0)
""",
    "gfx12": """
  s_load_b128 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v100, 2, v0
  s_wait_kmcnt 0x0
""",
    "gfx9": """
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v100, 2, v0
  s_waitcnt lgkmcnt(0)
""",
}
_STORE = {"gfx11": "  global_store_b32 v100, v%d, s[4:5] offset:%d\n",
          "gfx12": "  global_store_b32 v100, v%d, s[4:5] offset:%d\n",
          "gfx9": "  global_store_dword v100, v%d, s[4:5] offset:%d\n"}


def family(arch):
    return "gfx9" if arch.startswith("gfx9") else arch[:5]


def kernel_source(arch, name, body, results, lds=0, scratch=0, block=256, frame=True, directives=(), pre=""):
    fam = family(arch)
    wave = WAVE[arch]
    text = [".text", ".globl %s" % name, ".p2align 8", ".type %s,@function" % name, "%s:" % name]
    text.append(pre)                      # runs before the frame touches any SGPR
    if frame:
        text.append(_PROLOGUE[fam])
    text.append(body)
    if frame:
        for i, r in enumerate(results):
            text.append(_STORE[fam] % (r, i * wave * 4))
    text.append("  s_endpgm\n")
    kd = [".rodata", ".p2align 6", ".amdhsa_kernel %s" % name,
          "  .amdhsa_user_sgpr_kernarg_segment_ptr 1",
          "  .amdhsa_next_free_vgpr 128", "  .amdhsa_next_free_sgpr 96",
          "  .amdhsa_group_segment_fixed_size %d" % lds,
          "  .amdhsa_private_segment_fixed_size %d" % scratch,
          "  .amdhsa_system_sgpr_workgroup_id_x 1",
          "  .amdhsa_float_denorm_mode_32 3"]            # keep f32 denormals, as HIP does
    if scratch:
        kd.append("  .amdhsa_enable_private_segment 1")
    for d in directives:                  # a directive given here replaces the frame's default
        key = d.split()[0]
        kd = [k for k in kd if k.split()[0] != key] + ["  " + d]
    if fam in ("gfx11", "gfx12"):
        kd.append("  .amdhsa_wavefront_size32 1")
    if fam == "gfx9":
        kd.append("  .amdhsa_accum_offset 128")
        kd[4] = "  .amdhsa_next_free_vgpr 256"
    kd.append(".end_amdhsa_kernel")
    meta = """    - .name: %s
      .symbol: %s.kd
      .kernarg_segment_size: 16
      .kernarg_segment_align: 8
      .group_segment_fixed_size: %d
      .private_segment_fixed_size: %d
      .wavefront_size: %d
      .sgpr_count: 96
      .vgpr_count: 128
      .max_flat_workgroup_size: %d
      .args:
        - {.offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global, .name: out}
        - {.offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global, .name: inp}
""" % (name, name, lds, scratch, wave, max(block, 256))
    return "\n".join(text) + "\n" + "\n".join(kd) + "\n", meta


def assemble(arch, kernels, mattr=None):
    """Code object bytes for {name: (body, results, options)}; options may set lds, scratch, frame.
    `mattr`: llvm-mc's target features, such as "+real-true16" for gfx12's vN.l / vN.h syntax."""
    sources, metas = [], []
    for name, spec in kernels.items():
        body, results = spec[0], spec[1]
        opts = spec[2] if len(spec) > 2 else {}
        src, meta = kernel_source(arch, name, body, results, **opts)
        sources.append(src)
        metas.append(meta)
    text = ".amdgcn_target \"amdgcn-amd-amdhsa--%s\"\n.amdhsa_code_object_version 5\n" % arch
    text += "\n".join(sources)
    text += ".amdgpu_metadata\n---\namdhsa.version: [1, 2]\namdhsa.target: amdgcn-amd-amdhsa--%s\n" % arch
    text += "amdhsa.kernels:\n" + "".join(metas) + "...\n.end_amdgpu_metadata\n"
    with tempfile.TemporaryDirectory() as d:
        src, obj, co = (os.path.join(d, n) for n in ("k.s", "k.o", "k.co"))
        with open(src, "w") as f:
            f.write(text)
        mc = [FLAGS.llvm_mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=" + arch] + (["-mattr=" + mattr] if mattr else [])
        for cmd in (mc + ["-filetype=obj", "-o", obj, src],
                    [FLAGS.lld, "-shared", "-o", co, obj]):
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
            if r.returncode != 0:
                raise AssertionError("%s failed:\n%s\n--- source ---\n%s" % (os.path.basename(cmd[0]), r.stdout, text))
        with open(co, "rb") as f:
            return f.read()
