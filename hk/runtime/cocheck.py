"""Checks AMDGPU code objects: the resource gate and the wait gate, on any code object.

    hk-cocheck [--objdump=PATH] [--warps=N] [--max_vgprs=N] [--min_occupancy=N] FILE.co [FILE ...]

(also `python -m hk.runtime.cocheck`)

The resource gate reads the metadata note (VGPRs, AGPRs, SGPRs, spills, scratch, LDS) and
refuses spills and scratch; the wait gate walks the disassembly for registers used while a
load into them is outstanding, and for LDS accesses after a barrier that a CDNA global->LDS
copy crosses in flight which touch the bytes it writes (one finding per copy).
Works on hk's code objects and anyone else's (HipKittens', Triton's), offload bundles
included. Prints one line per finding and exits 1 if there is any; a warning (an access the
gate cannot place against a copy in flight: the emulator decides) is printed as
`... wait gate: warning: ...` and does not fail. Exits 0 when no file has a finding (warnings or
not); 2 for a wrong command (no file, a file that is not there) or no llvm-objdump of the
toolchain.
"""

import os
import sys
import tempfile

from absl import flags

from hk import errors
from hk.errors import HKError
from hk.runtime import gate, ldsaddr, metadata, waitcheck

FLAGS = flags.FLAGS


def define_flags():
    """The command line's flags (defined by main only: importing this module defines none)."""
    flags.DEFINE_string("objdump", None, "llvm-objdump to disassemble with (default: HK_LLVM_BIN or PATH)")
    flags.DEFINE_integer("warps", 1, "waves per workgroup, for the occupancy figure")
    flags.DEFINE_integer("max_vgprs", None, "refuse kernels with more VGPRs")
    flags.DEFINE_integer("min_occupancy", None, "refuse kernels with fewer waves per SIMD")


def find_objdump(explicit=None):
    """The llvm-objdump to disassemble with: `explicit`, HK_LLVM_BIN's, or the toolchain's (the
    hermetic one, or an installed ROCm's). Never whatever is first on PATH: an older LLVM does not
    know the newer targets' instructions (and some versions crash on them)."""
    from hk.runtime import toolchain

    if explicit:
        return os.path.abspath(explicit)
    bindir = os.environ.get("HK_LLVM_BIN")
    if bindir and os.path.exists(os.path.join(bindir, "llvm-objdump")):
        return os.path.join(bindir, "llvm-objdump")
    try:
        return toolchain.find().tool("llvm-objdump")
    except HKError as e:
        raise HKError("no llvm-objdump of the toolchain: %s" % e.message,
                      hint="pass --objdump, set HK_LLVM_BIN, or point HK_ROCM_PATH at a ROCm") from None


def check_file(path, objdump, warps=1, max_vgprs=None, min_occupancy=None, warnings=None):
    """The findings of one file, as printable lines (empty: clean). Its warnings are appended to
    `warnings` when a list is given, else issued as HKWarnings."""
    lines, warned = [], []
    with open(path, "rb") as f:
        data = f.read()
    for meta in metadata.read(data):
        try:
            occ = gate.check(meta, warps, max_vgprs=max_vgprs, min_occupancy=min_occupancy)
            print("%s: %s: %d VGPRs, %d AGPRs, %d SGPRs, %d bytes LDS, %d wave(s) per SIMD"
                  % (path, meta.name, meta.vgprs, meta.agprs, meta.sgprs, meta.lds_bytes, occ.waves_per_simd))
        except HKError as e:
            lines.append("%s: resource gate: %s" % (path, e.message))
    with tempfile.TemporaryDirectory(prefix="hk-cocheck-") as tmp:
        for i, obj in enumerate(metadata.code_objects(data)):
            one = os.path.join(tmp, "object%d.co" % i)
            with open(one, "wb") as f:
                f.write(obj)
            metas = metadata.read(obj)
            arch = metas[0].arch if metas else None          # the counter rules are the target's
            by_name = {m.name: m for m in metas}
            for kernel, instructions in waitcheck.disassemble(objdump, one, arch).items():
                wg = workgroup(obj, by_name.get(kernel), arch)
                for finding in waitcheck.check_kernel(kernel, instructions, arch, wg):
                    line = "%s: wait gate: %s" % (path, finding)
                    (warned if finding.severity == "warning" else lines).append(line)
    if warnings is not None:
        warnings.extend(warned)
    else:
        for line in warned:
            errors.warn(line)
    return lines


def workgroup(obj, meta, arch):
    """The threads the wait gate follows addresses for: the kernel's largest workgroup
    (.max_flat_workgroup_size; 1024 when not recorded), its wave size, and whether v0 holds the
    x work-item id alone (the kernel descriptor enables no y or z id)."""
    wave = meta.wave_size if meta and meta.wave_size else (64 if arch and arch.startswith("gfx9") else 32)
    size = meta.max_workgroup_size if meta and meta.max_workgroup_size else 1024
    ids = metadata.workitem_id_vgprs(obj, meta.name) if meta else None
    return ldsaddr.Workgroup(size=size, wave=wave, flat_v0=ids == 1)


def main(argv):
    from hk.compiler.cli import UsageError

    # An hk_kernel's outputs come as a set (hk_gate_test passes them all): its IR and C++ are
    # not code objects and are skipped.
    paths = [p for p in argv[1:] if not p.endswith((".mlir", ".cpp"))]
    if not paths:
        raise UsageError("name the code objects to check (see --help)")
    for path in paths:
        if not os.path.isfile(path):
            raise UsageError("no such file: %s" % path)
    objdump = find_objdump(FLAGS.objdump)
    findings, warned = [], []
    for path in paths:
        findings.extend(check_file(path, objdump, FLAGS.warps, FLAGS.max_vgprs, FLAGS.min_occupancy, warned))
    for line in warned + findings:
        print(line)
    return 1 if findings else 0


def entry():
    from hk.compiler import cli

    cli.run_tool("hk-cocheck", __doc__, define_flags, main)


if __name__ == "__main__":
    entry()
