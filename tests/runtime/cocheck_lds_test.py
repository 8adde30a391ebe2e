"""The wait gate's barrier rule on CDNA4 global->LDS copies: a copy may stay in flight across a
barrier (double buffering), and is a finding only when an LDS access after that barrier may
touch the bytes it writes before its wait retires it (and, for another wave, before a barrier
after that wait). Where the copy lands comes from M0, where an access lands from its address
VGPR: both followed through the kernel's arithmetic, per wave and lane.

Every kernel is a few gfx950 instructions assembled by asm_kernel (a workgroup of 256
work-items: four waves of 64), each with its twin that breaks the rule.
"""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import asm_kernel  # noqa: E402

from hk.errors import HKWarning  # noqa: E402
from hk.runtime import cocheck, ldsaddr, metadata, waitcheck  # noqa: E402

OBJDUMP = os.path.join(os.environ["HK_LLVM_BIN"], "llvm-objdump")

# Each wave copies its 1 KiB slice of a 4 KiB tile: v1 is the work-item's 16 bytes, s4 the
# wave's slice in buffer A (LDS 0 - 4 KiB), s5 in buffer B (4 - 8 KiB).
PROLOGUE = """
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  s_load_dwordx4 s[8:11], s[0:1], 0x0
  s_mov_b32 s6, 8
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32_e32 v1, 4, v0
  v_lshrrev_b32_e32 v2, 6, v0
  v_lshlrev_b32_e32 v2, 10, v2
  v_readfirstlane_b32 s4, v2
  s_add_u32 s5, s4, 0x1000
"""

# The pipelined loop: tile k+1 is copied into B while the waves read tile k from A, and the
# other way round. Each copy stays in flight across the barrier after it; a wave waits for it
# (vmcnt) and meets the others at a barrier before anyone reads its buffer.
DOUBLE_BUFFER = PROLOGUE + """
  s_mov_b32 m0, s4
  {copy}
  s_waitcnt vmcnt(0)
  s_barrier
.Lloop:
  s_mov_b32 m0, s5
  {copy}
  s_barrier
  {read_a}
  s_waitcnt vmcnt(0) lgkmcnt(0)
  s_barrier
  s_mov_b32 m0, s4
  {copy}
  s_barrier
  {read_b}
  s_waitcnt vmcnt(0) lgkmcnt(0)
  s_barrier
  s_sub_u32 s6, s6, 1
  s_cmp_lg_u32 s6, 0
  s_cbranch_scc1 .Lloop
"""

COPIES = {
    "global_load_lds": "global_load_lds_dwordx4 v1, s[2:3]",
    "buffer_load_lds": "buffer_load_dwordx4 v1, s[8:11], 0 offen lds",
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("lds"))


def check(workdir, name, body):
    """(errors, warnings) of cocheck on the kernel."""
    warned = []
    errors = cocheck.check_file(asm_kernel.assemble(body, "gfx950", workdir, name=name), OBJDUMP, warnings=warned)
    return errors, warned


def double_buffer(copy, read_a="ds_read_b128 v[4:7], v1", read_b="ds_read_b128 v[8:11], v1 offset:4096"):
    return DOUBLE_BUFFER.format(copy=COPIES[copy], read_a=read_a, read_b=read_b)


@pytest.mark.parametrize("copy", sorted(COPIES))
def test_a_copy_in_flight_across_a_barrier_into_the_other_buffer_passes(workdir, copy):
    errors, warned = check(workdir, "double_buffer_" + copy, double_buffer(copy))
    assert errors == [] and warned == []


@pytest.mark.parametrize("copy", sorted(COPIES))
def test_reading_the_buffer_still_being_copied_is_an_error(workdir, copy):
    # The twin reads B (the copy in flight) where the original reads A.
    errors, warned = check(workdir, "reads_in_flight_" + copy,
                           double_buffer(copy, read_a="ds_read_b128 v[4:7], v1 offset:4096"))
    assert warned == []
    assert len(errors) == 1, errors
    assert "wait gate: kernel reads_in_flight_%s at 0x" % copy in errors[0]
    assert "%s: the global->LDS copy is still in flight on vmcnt across 1 barrier" % COPIES[copy] in errors[0]
    assert "the LDS access at 0x" in errors[0] and "(ds_read_b128 v[4:7], v1 offset:4096)" in errors[0]
    assert "touches the LDS bytes it writes" in errors[0]


def test_one_byte_of_overlap_is_found(workdir):
    # Lane 63 of wave 3 reads the first byte of B: 4095 is the last byte of A.
    errors, _ = check(workdir, "one_byte", double_buffer("global_load_lds", read_a="ds_read_u8 v4, v1 offset:15"))
    assert errors == []
    errors, _ = check(workdir, "one_byte_over", double_buffer("global_load_lds", read_a="ds_read_u8 v4, v1 offset:16"))
    assert len(errors) == 1 and "ds_read_u8 v4, v1 offset:16" in errors[0]


WAIT_NO_BARRIER = PROLOGUE + """
  s_mov_b32 m0, s5
  global_load_lds_dwordx4 v1, s[2:3]
  s_barrier
  s_waitcnt vmcnt(0)
  {read}
  s_waitcnt lgkmcnt(0)
"""


def test_after_its_own_wait_a_wave_reads_its_own_slice_but_not_anothers(workdir):
    # A wave's wait retires its own copy only: reading another wave's slice of B needs a barrier
    # after every wave's wait.
    own = WAIT_NO_BARRIER.format(read="ds_read_b128 v[4:7], v1 offset:4096")
    errors, warned = check(workdir, "own_slice", own)
    assert errors == [] and warned == []
    other = WAIT_NO_BARRIER.format(read="v_xor_b32_e32 v3, 0x400, v1\n  ds_read_b128 v[4:7], v3 offset:4096")
    errors, warned = check(workdir, "other_slice", other)
    assert len(errors) == 1, errors
    assert "(ds_read_b128 v[4:7], v3 offset:4096)" in errors[0]


# The copy's destination and the read's address are both a kernel argument (a symbol the gate
# cannot compute) plus known offsets: the symbol cancels.
SYMBOLIC = """
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  s_load_dword s7, s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32_e32 v1, 4, v0
  v_lshrrev_b32_e32 v2, 6, v0
  v_lshl_add_u32 v2, v2, 10, s7
  v_readfirstlane_b32 s4, v2
  s_addk_i32 s4, 0x1000
  s_mov_b32 m0, s4
  global_load_lds_dwordx4 v1, s[2:3]
  s_barrier
  v_add_u32_e32 v3, {base}, v1
  ds_read_b128 v[4:7], v3 offset:{offset}
  s_waitcnt vmcnt(0) lgkmcnt(0)
"""


def test_addresses_affine_in_the_same_unknown_scalar_are_told_apart(workdir):
    errors, warned = check(workdir, "symbolic_apart", SYMBOLIC.format(base="s7", offset=0))
    assert errors == [] and warned == []
    errors, warned = check(workdir, "symbolic_overlap", SYMBOLIC.format(base="s7", offset=4096))
    assert len(errors) == 1 and warned == [], errors


@pytest.mark.parametrize("copy_at,read_at,meet", [
    (-16, 0, True),      # wave 0 copies to [base - 16, base + 1008)
    (-16, 4080, False),  # the last wave's slice ends at base + 4080
    (0, -8, True),       # a read from below into the first slice
    (0, -16, False),     # the 16 bytes just below it
])
def test_symbolic_addresses_wrap_around_below_the_symbol(workdir, copy_at, read_at, meet):
    # The number beside the symbol is then 2^32 - a little.
    body = SYMBOLIC.replace("s_addk_i32 s4, 0x1000", "s_addk_i32 s4, %#x" % (copy_at & 0xFFFF))
    body = body.replace("v_add_u32_e32 v3, {base}, v1",
                        "v_mov_b32_e32 v3, s7\n  v_subrev_u32_e32 v3, %d, v3" % -min(read_at, 0))
    name = "wraps_%d_%d" % (copy_at & 0xFFFF, read_at & 0xFFFF)
    errors, warned = check(workdir, name, body.format(offset=max(read_at, 0)))
    assert warned == [] and len(errors) == int(meet), errors


def test_an_address_the_gate_cannot_place_is_a_warning(workdir):
    # The read's base is another kernel argument than the copy's: they may or may not meet.
    errors, warned = check(workdir, "symbolic_unknown", SYMBOLIC.format(base="s3", offset=0))
    assert errors == []
    assert len(warned) == 1, warned
    line = warned[0]
    assert "wait gate: warning: kernel symbolic_unknown at 0x" in line
    assert "cocheck cannot tell whether the LDS access at 0x" in line
    assert "the two addresses differ by values not known here" in line
    assert "the emulator decides exactly on a run" in line


LOADED_ADDRESS = PROLOGUE + """
  global_load_dword v3, v1, s[2:3]
  s_waitcnt vmcnt(0)
  s_mov_b32 m0, s5
  global_load_lds_dwordx4 v1, s[2:3]
  s_barrier
  ds_read_b128 v[4:7], v3
  s_waitcnt vmcnt(0) lgkmcnt(0)
"""


def test_an_address_read_from_memory_is_a_warning_and_does_not_fail_the_command(workdir):
    path = asm_kernel.assemble(LOADED_ADDRESS, "gfx950", workdir, name="loaded_address")
    warned = []
    assert cocheck.check_file(path, OBJDUMP, warnings=warned) == []
    assert len(warned) == 1 and "the LDS address of the access is not known" in warned[0]
    # Without a list, the warning is an HKWarning.
    with pytest.warns(HKWarning, match="cannot tell whether the LDS access"):
        assert cocheck.check_file(path, OBJDUMP) == []
    run = subprocess.run([sys.executable, "-m", "hk.runtime.cocheck", "--objdump=" + OBJDUMP, path],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert run.returncode == 0, run.stdout
    assert "wait gate: warning: kernel loaded_address" in run.stdout
    bad = asm_kernel.assemble(double_buffer("global_load_lds", read_a="ds_read_b128 v[4:7], v1 offset:4096"),
                              "gfx950", workdir, name="cli_error")
    run = subprocess.run([sys.executable, "-m", "hk.runtime.cocheck", "--objdump=" + OBJDUMP, path, bad],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert run.returncode == 1, run.stdout
    assert "wait gate: warning: kernel loaded_address" in run.stdout
    assert "wait gate: kernel cli_error" in run.stdout


def test_lanes_turned_off_make_an_overlap_a_warning(workdir):
    # Under a mask of EXEC only some lanes read: the full-lane overlap may not happen.
    body = PROLOGUE + """
  s_mov_b32 m0, s5
  global_load_lds_dwordx4 v1, s[2:3]
  s_barrier
  v_cmp_gt_u32_e32 vcc, 32, v0
  s_and_saveexec_b64 s[12:13], vcc
  ds_read_b128 v[4:7], v1 offset:4096
  s_or_b64 exec, exec, s[12:13]
  {after}
  s_waitcnt vmcnt(0) lgkmcnt(0)
"""
    errors, warned = check(workdir, "masked", body.format(after=""))
    assert errors == [] and len(warned) == 1
    assert "part of the lanes may be off" in warned[0]
    # EXEC restored from its saved copy: every lane is on again, and the overlap is certain.
    errors, _ = check(workdir, "unmasked", body.format(after="ds_read_b128 v[8:11], v1 offset:4096"))
    assert len(errors) == 1 and "(ds_read_b128 v[8:11], v1 offset:4096)" in errors[0]


def test_one_finding_per_copy_however_many_barriers_it_crosses(workdir):
    barriers = "\n".join("  s_barrier" for _ in range(10))
    body = PROLOGUE + """
  s_mov_b32 m0, s5
  global_load_lds_dwordx4 v1, s[2:3]
{barriers}
  ds_read_b128 v[4:7], v1 offset:4096
  ds_read_b128 v[8:11], v1 offset:4112
  s_barrier
  ds_read_b128 v[4:7], v1 offset:4128
  s_waitcnt vmcnt(0) lgkmcnt(0)
""".format(barriers=barriers)
    errors, warned = check(workdir, "many_barriers", body)
    assert warned == []
    assert len(errors) == 1, errors
    assert "across 11 barriers (s_barrier at 0x" in errors[0]
    assert " and 7 more)" in errors[0]
    assert "(ds_read_b128 v[4:7], v1 offset:4096) and 2 more after them" in errors[0]
    (kernel,) = waitcheck.disassemble(OBJDUMP, asm_kernel.assemble(body, "gfx950", workdir, name="many_barriers"),
                                      "gfx950").values()
    (finding,) = waitcheck.check_kernel("many_barriers", kernel, "gfx950", ldsaddr.Workgroup(256, 64))
    assert finding.kind == "barrier" and finding.severity == "error"
    assert len(finding.barriers) == 11 and len(finding.accesses) == 3
    assert finding.text == "global_load_lds_dwordx4 v1, s[2:3]"


def test_the_workgroup_comes_from_the_metadata_and_the_kernel_descriptor(workdir):
    path = asm_kernel.assemble("s_nop 0", "gfx950", workdir, name="wg")
    with open(path, "rb") as f:
        obj = f.read()
    (meta,) = metadata.read(obj)
    assert metadata.workitem_id_vgprs(obj, "wg") == 1
    assert cocheck.workgroup(obj, meta, "gfx950") == ldsaddr.Workgroup(size=256, wave=64, flat_v0=True)
    assert metadata.workitem_id_vgprs(obj, "absent") is None


def _run(lines, wg=ldsaddr.Workgroup(256, 64)):
    """The registers after a few instructions (text as llvm-objdump prints it; an instruction
    at 4 * its index, or at the address given as (address, text))."""
    regs = ldsaddr.Regs.at_entry(wg)
    for i, line in enumerate(lines):
        addr, text = line if isinstance(line, tuple) else (4 * i, line)
        mnemonic, _, operands = text.partition(" ")
        inst = waitcheck.Instruction(addr, text, mnemonic, operands.strip())
        defined, commit = ldsaddr.evaluate(inst, regs, wg, waitcheck.classify(inst, "gfx950"))
        for s in defined:
            regs.forget(s)
        commit()
    return regs


def test_the_walk_computes_what_the_hardware_computes():
    tid = list(range(256))
    regs = _run(["v_bitop3_b32 v1, v0, 12, 48 bitop3:0x78",       # a ^ (b & c)
                 "v_bfe_u32 v2, v0, 2, 3",
                 "v_mbcnt_lo_u32_b32 v3, -1, 0",
                 "v_mbcnt_hi_u32_b32 v3, -1, v3",
                 "v_readfirstlane_b32 s5, v0",
                 "s_movk_i32 s6, 0xfff0",
                 "s_addk_i32 s6, 0x20",
                 "v_add_lshl_u32 v4, v0, s6, 2",
                 "s_cmp_gt_u32 s5, 64",
                 "s_cselect_b32 s7, 1, 2",
                 "v_lshl_or_b32 v5, v0, 4, 3"])
    num = lambda name: [int(x) for x in regs.get(name).per_thread(ldsaddr.Workgroup(256, 64))]
    assert num("v1") == [t ^ (12 & 48) for t in tid]
    assert num("v2") == [(t >> 2) & 7 for t in tid]
    assert num("v3") == [t % 64 for t in tid]
    assert num("s5") == [t - t % 64 for t in tid]
    assert regs.get("s6") == ldsaddr.const(0x10)
    assert num("v4") == [(t + 16) << 2 for t in tid]
    assert num("s7") == [1 if t >= 128 else 2 for t in tid]
    assert num("v5") == [(t << 4) | 3 for t in tid]


def test_unknown_scalars_are_symbols_until_their_instruction_runs_again():
    regs = _run(["s_load_dword s4, s[0:1], 0x0",
                 "s_waitcnt lgkmcnt(0)",
                 "s_lshl_b32 s5, s4, 4",
                 "s_and_b32 s6, s4, 0xff",         # not a sum: a new symbol
                 "s_add_u32 s7, s6, s5"])
    s4, s5, s6, s7 = (regs.get(n) for n in ("s4", "s5", "s6", "s7"))
    assert s4.atoms == (("0", 1),) and s5.atoms == (("0", 16),)
    assert s6.atoms == (("c", 1),) and s7.atoms == (("0", 16), ("c", 1))
    # The same load run again (the next iteration of a loop) is another value: what was built
    # on the old one is no longer known. A load from LDS is never known.
    regs = _run([(0, "s_load_dword s4, s[0:1], 0x0"),
                 (8, "s_waitcnt lgkmcnt(0)"),
                 (12, "s_mov_b32 s5, s4"),
                 (0, "s_load_dword s4, s[0:1], 0x0"),
                 (16, "ds_read_b32 v1, v0")])
    assert regs.get("s5") is None and regs.get("s4").atoms == (("0", 1),)
    assert regs.get("v1") is None
