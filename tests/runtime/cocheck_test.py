"""cocheck finds every planted hazard and passes the same kernels with their waits.

Each hazard class is a few instructions assembled with the toolchain's llvm-mc into a linked
code object with a metadata note.
"""

import io
import os
import subprocess
import sys

import pytest
from elftools.elf.elffile import ELFFile

sys.path.insert(0, os.path.dirname(__file__))
import asm_kernel  # noqa: E402

from hk.runtime import cocheck, gate, metadata, waitcheck  # noqa: E402
from hk.errors import ResourceError  # noqa: E402

OBJDUMP = os.path.join(os.environ["HK_LLVM_BIN"], "llvm-objdump")

# (name, arch, hazardous body, the same body with its wait, the instruction the finding names)
CASES = [
    ("vmem_load_read_early", "gfx1100",
     """
     s_load_b64 s[2:3], s[0:1], 0x0
     s_waitcnt lgkmcnt(0)
     global_load_b32 v1, v0, s[2:3]
     {wait}
     v_add_f32_e32 v2, v1, v1
     """, "s_waitcnt vmcnt(0)", "v_add_f32_e32 v2, v1, v1"),
    ("lds_load_read_early", "gfx1100",
     """
     ds_load_b128 v[4:7], v0
     {wait}
     v_mul_f32_e32 v8, v5, v5
     """, "s_waitcnt lgkmcnt(0)", "v_mul_f32_e32 v8, v5, v5"),
    ("count_too_weak", "gfx1100",
     """
     s_load_b64 s[2:3], s[0:1], 0x0
     s_waitcnt lgkmcnt(0)
     global_load_b32 v1, v0, s[2:3]
     global_load_b32 v2, v0, s[2:3] offset:4
     {wait}
     v_add_f32_e32 v3, v2, v2
     """, "s_waitcnt vmcnt(0)", "v_add_f32_e32 v3, v2, v2"),
    # The load at the bottom of an iteration is read at the top of the next: only the walk
    # around the back edge sees it.
    ("loop_carried_load", "gfx1100",
     """
     s_load_b64 s[2:3], s[0:1], 0x0
     s_mov_b32 s4, 4
     s_waitcnt lgkmcnt(0)
     global_load_b32 v1, v0, s[2:3]
     s_waitcnt vmcnt(0)
     .Ltop:
     v_add_f32_e32 v2, v1, v2
     global_load_b32 v1, v0, s[2:3]
     {wait}
     s_sub_u32 s4, s4, 1
     s_cmp_lg_u32 s4, 0
     s_cbranch_scc1 .Ltop
     """, "s_waitcnt vmcnt(0)", "v_add_f32_e32 v2, v1, v2"),
    ("gfx12_load_read_early", "gfx1201",
     """
     s_load_b64 s[2:3], s[0:1], 0x0
     s_wait_kmcnt 0
     global_load_b32 v1, v0, s[2:3]
     {wait}
     v_add_f32_e32 v2, v1, v1
     """, "s_wait_loadcnt 0", "v_add_f32_e32 v2, v1, v1"),
    ("cdna3_load_read_early", "gfx942",
     """
     s_load_dwordx2 s[2:3], s[0:1], 0x0
     s_waitcnt lgkmcnt(0)
     global_load_dwordx4 v[4:7], v0, s[2:3]
     {wait}
     v_mfma_f32_16x16x16_bf16 v[8:11], v[4:5], v[6:7], 0
     """, "s_waitcnt vmcnt(0)", "v_mfma_f32_16x16x16_bf16"),
    # The CDNA4 trap: the waves read what the copy writes after a barrier it crosses in flight.
    ("cdna4_lds_dma_before_barrier", "gfx950",
     """
     s_load_dwordx2 s[2:3], s[0:1], 0x0
     s_waitcnt lgkmcnt(0)
     s_mov_b32 m0, 0
     global_load_lds_dwordx4 v0, s[2:3]
     {wait}
     s_barrier
     v_and_b32_e32 v1, 63, v0
     v_lshlrev_b32_e32 v1, 4, v1
     ds_read_b128 v[4:7], v1
     """, "s_waitcnt vmcnt(0)", "global_load_lds_dwordx4 v0, s[2:3]: the global->LDS copy is still in flight"),
    # gfx9 counts stores on the in-order vmcnt: a load older than a store is done at vmcnt(1).
    ("cdna3_store_on_vmcnt", "gfx942",
     """
     s_load_dwordx2 s[2:3], s[0:1], 0x0
     s_waitcnt lgkmcnt(0)
     global_load_dword v1, v0, s[2:3]
     global_store_dword v0, v2, s[2:3] offset:64
     {wait}
     v_add_f32_e32 v3, v1, v1
     """, "s_waitcnt vmcnt(1)", "v_add_f32_e32 v3, v1, v1"),
    # A pipelined loop waits for the older copy and keeps the newer one in flight across the
    # barrier; reading the older copy's bytes after it is fine once the wait retired it.
    ("cdna4_pipelined_copy", "gfx950",
     """
     s_load_dwordx2 s[2:3], s[0:1], 0x0
     s_waitcnt lgkmcnt(0)
     s_mov_b32 m0, 0
     global_load_lds_dwordx4 v0, s[2:3]
     s_mov_b32 m0, 0x400
     global_load_lds_dwordx4 v0, s[2:3] offset:1024
     {wait}
     s_barrier
     v_and_b32_e32 v1, 63, v0
     v_lshlrev_b32_e32 v1, 4, v1
     ds_read_b128 v[4:7], v1
     """, "s_waitcnt vmcnt(1)", "global_load_lds_dwordx4 v0, s[2:3]: the global->LDS copy is still in flight"),
    # LDS writes count on lgkmcnt too: waiting until only the two younger writes are in flight
    # covers the older read (the compiler's own waits rely on it).
    ("lds_writes_count_cdna", "gfx950",
     """
     ds_bpermute_b32 v1, v2, v3
     ds_write_b32 v4, v5
     ds_write_b32 v4, v5 offset:64
     {wait}
     v_add_f32_e32 v6, v1, v1
     """, "s_waitcnt lgkmcnt(2)", "v_add_f32_e32 v6, v1, v1"),
    ("lds_writes_count_rdna", "gfx1100",
     """
     ds_load_b32 v1, v2
     ds_store_b32 v4, v5
     ds_store_b32 v4, v5 offset:64
     {wait}
     v_add_f32_e32 v6, v1, v1
     """, "s_waitcnt lgkmcnt(2)", "v_add_f32_e32 v6, v1, v1"),
    # gfx10/11 SOPK waits count.
    ("sopk_vmcnt", "gfx1100",
     """
     s_load_b64 s[2:3], s[0:1], 0x0
     s_waitcnt lgkmcnt(0)
     global_load_b32 v1, v0, s[2:3]
     {wait}
     v_add_f32_e32 v2, v1, v1
     """, "s_waitcnt_vmcnt null, 0x0", "v_add_f32_e32 v2, v1, v1"),
    # Triton's gfx1201 code is true16: v_mov_b16 v2.l, v10.l (0x7e04390a) does not decode in
    # llvm-objdump's default form; the gate must still see it read v10.
    ("gfx12_true16_read_early", "gfx1201",
     """
     s_load_b64 s[2:3], s[0:1], 0x0
     s_wait_kmcnt 0
     global_load_b32 v10, v0, s[2:3]
     {wait}
     .long 0x7e04390a
     """, "s_wait_loadcnt 0", "v_mov_b16_e32 v2.l, v10.l"),
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("asm"))


@pytest.mark.parametrize("name,arch,body,wait,named", CASES, ids=[c[0] for c in CASES])
def test_planted_hazard_is_found(workdir, name, arch, body, wait, named):
    path = asm_kernel.assemble(body.format(wait=""), arch, workdir, name=name)
    findings = cocheck.check_file(path, OBJDUMP)
    assert len(findings) == 1, findings
    assert "wait gate: kernel %s at 0x" % name in findings[0]
    assert named in findings[0]


@pytest.mark.parametrize("name,arch,body,wait,named", CASES, ids=[c[0] for c in CASES])
def test_the_same_kernel_with_its_wait_is_clean(workdir, name, arch, body, wait, named):
    path = asm_kernel.assemble(body.format(wait=wait), arch, workdir, name=name + "_ok")
    assert cocheck.check_file(path, OBJDUMP) == []


# (name, arch, body, the instruction a finding names): the counters of each family.
FOUND = [
    # gfx9: a load younger than the store is not done at vmcnt(1)
    ("cdna3_younger_load", "gfx942",
     """
     s_load_dwordx2 s[2:3], s[0:1], 0x0
     s_waitcnt lgkmcnt(0)
     global_store_dword v0, v2, s[2:3] offset:64
     global_load_dword v1, v0, s[2:3]
     s_waitcnt vmcnt(1)
     v_add_f32_e32 v3, v1, v1
     """, "v_add_f32_e32 v3, v1, v1"),
    # gfx11: stores count on vscnt, so vmcnt(1) does not wait for the load
    ("rdna3_store_on_vscnt", "gfx1100",
     """
     s_load_b64 s[2:3], s[0:1], 0x0
     s_waitcnt lgkmcnt(0)
     global_load_b32 v1, v0, s[2:3]
     global_store_b32 v0, v2, s[2:3] offset:64
     s_waitcnt vmcnt(1)
     s_waitcnt_vscnt null, 0x0
     v_add_f32_e32 v3, v1, v1
     """, "v_add_f32_e32 v3, v1, v1"),
    # gfx12: storecnt does not retire loads
    ("rdna4_storecnt", "gfx1201",
     """
     s_load_b64 s[2:3], s[0:1], 0x0
     s_wait_kmcnt 0
     global_load_b32 v1, v0, s[2:3]
     global_store_b32 v0, v2, s[2:3] offset:64
     s_wait_storecnt 0
     v_add_f32_e32 v3, v1, v1
     """, "v_add_f32_e32 v3, v1, v1"),
    # gfx950: the copy issued after the last wait is the one whose bytes the read after the
    # barrier meets
    ("cdna4_copy_after_the_wait", "gfx950",
     """
     s_load_dwordx2 s[2:3], s[0:1], 0x0
     s_waitcnt lgkmcnt(0)
     s_mov_b32 m0, 0
     global_load_lds_dwordx4 v0, s[2:3]
     s_waitcnt vmcnt(0)
     s_mov_b32 m0, 0x400
     global_load_lds_dwordx4 v0, s[2:3] offset:1024
     s_barrier
     v_and_b32_e32 v1, 63, v0
     v_lshlrev_b32_e32 v1, 4, v1
     ds_read_b128 v[4:7], v1
     ds_read_b128 v[8:11], v1 offset:1024
     """, "global_load_lds_dwordx4 v0, s[2:3] offset:1024"),
]


@pytest.mark.parametrize("name,arch,body,named", FOUND, ids=[c[0] for c in FOUND])
def test_each_targets_counter_rules(workdir, name, arch, body, named):
    findings = cocheck.check_file(asm_kernel.assemble(body, arch, workdir, name=name), OBJDUMP)
    assert len(findings) == 1, findings
    assert named in findings[0]


# A load at the bottom of a loop is older than the one at the top of the next iteration though
# its address is higher: a join inside the loop keeps their issue order, so vmcnt(1) after the
# top load retires the bottom one.
JOIN_IN_LOOP = """
     s_load_b64 s[2:3], s[0:1], 0x0
     s_mov_b32 s4, 4
     s_waitcnt lgkmcnt(0)
     global_load_b32 v1, v0, s[2:3]
     .Ltop:
     global_load_b32 v2, v0, s[2:3] offset:4
     s_cmp_eq_u32 s4, 2
     s_cbranch_scc1 .Ljoin
     s_nop 0
     .Ljoin:
     s_waitcnt vmcnt({count})
     v_add_f32_e32 v3, v1, v1
     s_waitcnt vmcnt(0)
     v_add_f32_e32 v4, v2, v2
     global_load_b32 v1, v0, s[2:3] offset:8
     s_sub_u32 s4, s4, 1
     s_cmp_lg_u32 s4, 0
     s_cbranch_scc1 .Ltop
     s_waitcnt vmcnt(0)
     """


def test_loads_keep_their_issue_order_across_a_loops_back_edge(workdir):
    ok = asm_kernel.assemble(JOIN_IN_LOOP.format(count=1), "gfx1100", workdir, name="join_in_loop")
    assert cocheck.check_file(ok, OBJDUMP) == []
    bad = asm_kernel.assemble(JOIN_IN_LOOP.format(count=2), "gfx1100", workdir, name="join_in_loop_bad")
    # vmcnt(2) leaves the bottom load (and, in the first iteration, the one before the loop)
    # in flight.
    findings = cocheck.check_file(bad, OBJDUMP)
    assert any("v_add_f32_e32 v3, v1, v1: uses v1 while the load issued at 0x" in f and
               "(global_load_b32 v1, v0, s[2:3] offset:8)" in f for f in findings), findings


def test_a_spilling_kernel_is_refused_by_the_resource_gate(workdir):
    path = asm_kernel.assemble("s_nop 0", "gfx1100", workdir, name="spills", vgpr_spills=3)
    (meta,) = metadata.read(path)
    with pytest.raises(ResourceError, match="kernel spills on gfx1100 spills 3 VGPR"):
        gate.check(meta, warps=1)
    findings = cocheck.check_file(path, OBJDUMP)
    assert findings and "resource gate" in findings[0]


def test_command_line_exit_codes(workdir):
    bad = asm_kernel.assemble(CASES[0][2].format(wait=""), "gfx1100", workdir, name="cli_bad")
    good = asm_kernel.assemble(CASES[0][2].format(wait=CASES[0][3]), "gfx1100", workdir, name="cli_good")
    run = lambda *files: subprocess.run(
        [sys.executable, "-m", "hk.runtime.cocheck", "--objdump=" + OBJDUMP] + list(files),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert run(good).returncode == 0
    result = run(good, bad)
    assert result.returncode == 1
    assert "uses v1 while the load" in result.stdout
    # A wrong command is exit 2 with one line, never a traceback; --help is exit 0.
    not_elf = os.path.join(workdir, "not_a_code_object.co")
    with open(not_elf, "w") as f:
        f.write("text")
    # A code object whose metadata note does not decode (its first byte made a lone integer).
    with open(good, "rb") as f:
        data = bytearray(f.read())
    at = data.find(metadata._note(ELFFile(io.BytesIO(bytes(data)))))
    data[at] = 0x01
    damaged = os.path.join(workdir, "damaged_note.co")
    with open(damaged, "wb") as f:
        f.write(data)
    for files, message in ([[], "name the code objects"],
                           [[os.path.join(workdir, "absent.co")], "no such file"],
                           [[not_elf], "not an ELF code object"],
                           [[damaged], "metadata note is damaged"],
                           [["--warps=two", good], "warps"]):
        wrong = run(*files)
        assert wrong.returncode == 2, (files, wrong.stdout)
        assert message in wrong.stdout and "Traceback" not in wrong.stdout, wrong.stdout
    helped = run("--help")
    assert helped.returncode == 0 and "--max_vgprs" in helped.stdout


def test_offload_bundles_are_unpacked(workdir):
    path = asm_kernel.assemble(CASES[0][2].format(wait=""), "gfx1100", workdir, name="bundled")
    with open(path, "rb") as f:
        obj = f.read()
    # A clang offload bundle: magic, entry count, then (offset, size, id length, id) per entry.
    import struct

    triple = b"hipv4-amdgcn-amd-amdhsa--gfx1100"
    header = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 1)
    offset = len(header) + 24 + len(triple)
    bundle = header + struct.pack("<QQQ", offset, len(obj), len(triple)) + triple + obj
    bundled = os.path.join(workdir, "bundle.hipfb")
    with open(bundled, "wb") as f:
        f.write(bundle)
    assert metadata.read(bundled)[0].name == "bundled"
    assert len(cocheck.check_file(bundled, OBJDUMP)) == 1


def test_an_llvm_objdump_on_path_is_never_taken(tmp_path, monkeypatch):
    # An older LLVM first on PATH must not be the disassembler: the toolchain's is.
    fake = tmp_path / "llvm-objdump"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    hermetic = os.environ["HK_LLVM_BIN"]
    monkeypatch.setenv("PATH", "%s:%s" % (tmp_path, os.environ.get("PATH", "")))
    monkeypatch.delenv("HK_LLVM_BIN")
    monkeypatch.setenv("HK_CLANG", os.path.join(hermetic, "clang"))
    monkeypatch.setenv("HK_ROCM_ROOT", str(tmp_path))
    found = cocheck.find_objdump()
    assert found == os.path.join(os.path.abspath(hermetic), "llvm-objdump")
    assert os.path.realpath(found) != os.path.realpath(str(fake))
