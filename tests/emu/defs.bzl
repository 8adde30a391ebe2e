"""emu_test: a py_test of the emulator with the hermetic tools and the HIP kernels as flags."""

_TOOLS = {
    "llvm_mc": "@llvm_toolchain//:llvm-mc",
    "lld": "@llvm_toolchain//:ld.lld",
    "objdump": "@llvm_toolchain//:llvm-objdump",
}

_KERNELS = ["//tests/emu/kernels:%s_%s" % (k, a)
            for k in ["vector_add", "reduce", "gemm", "private_array", "math_mix"]
            for a in ["gfx1100", "gfx1201", "gfx942", "gfx950"]]

def emu_test(name, size = "small", **kwargs):
    """Defines the py_test `name` from `name`.py.

    Args:
      name: the test; its source is `<name>.py`.
      size: the Bazel test size.
      **kwargs: passed to py_test.

    Example:
        emu_test(name = "salu_test")
    """
    native.py_test(
        name = name,
        srcs = [name + ".py"],
        size = size,
        args = ["--%s=$(rootpath %s)" % (flag, label) for flag, label in _TOOLS.items()] +
               ["--code_object=$(rootpath %s)" % k for k in _KERNELS],
        data = list(_TOOLS.values()) + _KERNELS,
        deps = [":emutest"],
        **kwargs
    )
