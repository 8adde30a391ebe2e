"""hk.emu: run real AMDGPU code objects on the CPU.

The emulator loads the ELF code object that clang produced for gfx1100, gfx1201, gfx942 or
gfx950, decodes its instructions once (with the hermetic llvm-objdump) and interprets them in
a C++ core, wave by wave. It needs no GPU.

    import numpy as np, hk.emu
    a = np.arange(1024, dtype=np.float32); b = np.ones_like(a); c = np.zeros_like(a)
    hk.emu.launch("vector_add.gfx1100.co", "vector_add", grid=(4,), block=(256,),
                  args=[a, b, c, a.size])
    assert (c == a + 1).all()

launch(code_object, kernel_name, grid, block, args, arch=None, hazards=True,
       random_order_seed=None, shared_mem=0, max_instructions=2_000_000_000) -> int

  code_object   bytes, or the path of a .co file
  grid, block   workgroups per dimension (HIP's gridDim) and work-items per workgroup (blockDim)
  args          the kernel's explicit arguments in order: numpy arrays, CPU torch tensors or bytes
                for pointers (copied into device memory, and copied back after the run); ints,
                floats and numpy scalars for by-value arguments; None for a null pointer;
                ByValue(pack) for a by-value struct that holds pointers (pack(alloc) returns its
                bytes, alloc(array) places an array in device memory and returns its address);
                Zeros(nbytes) for a zero-filled buffer that is neither copied in nor back
  arch          when given, the code object must be for this architecture
  hazards       model the wait counters of the target: using a register whose load is still
                outstanding, or touching LDS bytes a global->LDS copy (of any wave) still
                writes raises HazardError (LDS operations outstanding at a barrier precede, in
                the LDS's one order, every LDS access issued after it); so does
                an LDS race between the waves of a workgroup (a read of bytes another wave wrote,
                or a write of bytes another wave read or wrote, with no barrier between them;
                atomics of different waves, and stores of the same bytes, do not race)
  random_order_seed  complete memory operations (and interleave waves) in a random legal order
                drawn from this seed, to surface races a fixed order hides; implies hazards
  shared_mem    dynamic LDS bytes, added to the kernel's static LDS
  returns       the number of wave-instructions executed

Device memory is a flat 64-bit address space: each buffer argument gets its own region, with a
gap after it, so an access outside every buffer raises MemoryFault. Workgroups run one after
another; the waves of a workgroup interleave and meet at barriers. The hidden arguments of code
object v5/v6 (block counts, group sizes, remainders, grid dims, ...) are filled in, and waves
start with the SGPRs, EXEC and work-item ids the hardware gives them.

What is modelled: SALU (with gfx12's scalar f32/f16 arithmetic, compares and conversions), SMEM, VALU (VOP1/2/3/3P, VOPD, DPP, SDWA, true16 and packed 16-bit,
integer clamp (saturation), f16/bf16/fp8 conversions, transcendentals within the hardware's
error), global/flat/scratch/buffer memory up to 128 bits, LDS incl. b128 and the cross-lane ops,
WMMA (gfx11, gfx12) and single-block MFMA (gfx942, gfx950) with AGPRs, gfx950's f8f6f4 MFMAs
with every operand format cbsz/blgp select (fp8, bf8, fp6, bf6, fp4), barriers, the wait
counters of each family.

The f32 denormal mode of the kernel descriptor (flush inputs and/or outputs) is honoured by the
f32 arithmetic.

What is not: the rest of the MODE register (f16/f64 denormals are always kept, rounding is
always to nearest even, s_setreg/s_denorm_mode changes are ignored), synchronisation between workgroups (they run one after another), hostcall/printf,
image and sample instructions, multi-block and scaled MFMA and the cbsz/abid/blgp broadcasts
(outside the f8f6f4 MFMAs, where cbsz/blgp are formats),
dynamic VGPR indexing (v_movrel*, s_set_gpr_idx), the 4-, 6- and 8-bit transposing LDS loads of
gfx950 (the 16-bit ds_read_b64_tr_b16 is modelled). An instruction the core lacks, whose operands
it cannot read, or that llvm-objdump cannot decode raises EmuError naming it and its address when
(and only when) it is executed.

Errors: CodeObjectError (not a loadable code object, unknown kernel), EmuError (an instruction
the emulator lacks, a bad launch), MemoryFault, HazardError; all are hk.errors.HKError.
"""

from hk.emu.errors import CodeObjectError, EmuError, HazardError, MemoryFault
from hk.emu.args import ByValue, Zeros


def launch(code_object, kernel_name, grid, block, args, arch=None, hazards=True, random_order_seed=None,
           shared_mem=0, max_instructions=2_000_000_000):
    """Runs one kernel of a code object on the emulator; see the module docstring."""
    from hk.emu import runner as _runner
    return _runner.run(code_object, kernel_name, grid, block, args, arch=arch, hazards=hazards,
                       random_order_seed=random_order_seed, shared_mem=shared_mem,
                       max_instructions=max_instructions)


def kernels(code_object):
    """The names of the kernels in a code object."""
    from hk.emu import runner as _runner
    return sorted(_runner.load(code_object)[0].kernels)


def profile(code_object, kernel_name, grid, block, args, workgroups=None, arch=None, shared_mem=0,
            lds_banks=None, lds_bank_bytes=None, line_bytes=128, max_instructions=2_000_000_000, prefix=0,
            hazards=True):
    """Runs some workgroups of a launch recording what each instruction does: each wave's
    instruction stream, the LDS cycles of each LDS instruction with its bank conflicts, the global
    lines each workgroup touches. Returns an hk.emu.profiling.Profile; `.lds()` lists the conflicts
    per LDS instruction. A nonzero `prefix` runs only about that many wave-instructions of each
    workgroup. See hk/emu/profiling.py."""
    from hk.emu import profiling as _profiling
    return _profiling.profile(code_object, kernel_name, grid, block, args, workgroups=workgroups, arch=arch,
                            shared_mem=shared_mem, lds_banks=lds_banks, lds_bank_bytes=lds_bank_bytes,
                            line_bytes=line_bytes, max_instructions=max_instructions, prefix=prefix,
                            hazards=hazards)


def unsupported(code_object):
    """[(pc, text, why)] of the instructions in a code object the emulator cannot run (each would
    raise EmuError if executed): empty when it runs all of them."""
    from hk.emu import runner as _runner
    return _runner.unsupported(code_object)


__all__ = ["launch", "kernels", "profile", "unsupported", "ByValue", "Zeros", "CodeObjectError", "EmuError", "HazardError", "MemoryFault"]
