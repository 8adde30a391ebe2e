"""How llvm-objdump must be asked to disassemble each target, for the emulator and the wait gate."""


def features(arch):
    """llvm-objdump flags for `arch`: gfx11/gfx12 disassemble in true16 form. Code compiled for
    true16 (Triton's gfx1201 code) only decodes that way, and fake16 code reads the same (its
    16-bit VOP1/VOP2 operands are v0-v127, which print as their .l halves)."""
    return ["--mattr=+real-true16"] if arch and arch.startswith(("gfx11", "gfx12")) else []
