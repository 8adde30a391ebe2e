"""hk_py_test: a pytest file as a Bazel test, with the hermetic toolchain in its environment."""

# The toolchain a test's kernel.build() compiles with (hk.runtime.toolchain reads these).
TOOLCHAIN_DATA = [
    "@rocm_device//:hip_clang",
    "@rocm_device//:rocm",
    "@rocm_device//:rocm/share/hip/version",
    "@llvm_toolchain//:llvm-readelf",
    "@llvm_toolchain//:llvm-objdump",
    "@llvm_toolchain//:llvm-mc",
    "@llvm_toolchain//:ld.lld",
]

TOOLCHAIN_ENV = {
    "HK_CLANG": "$(rootpath @rocm_device//:hip_clang)",
    "HK_ROCM_VERSION_FILE": "$(rootpath @rocm_device//:rocm/share/hip/version)",
    "HK_LLVM_BIN": "external/llvm_toolchain",
}

def hk_py_test(name, src, deps = [], data = [], toolchain = False, size = "small", tags = [], **kwargs):
    """A pytest test of one file.

    Args:
      name: the test's name.
      src: the test file.
      deps: Python libraries it imports (//hk is always added).
      data: files it reads.
      toolchain: whether it compiles kernels (adds the hermetic toolchain and its environment).
      size: the Bazel test size.
      tags: Bazel tags (e.g. "gpu", "manual"; a "gpu" test is also "no-remote").
      **kwargs: passed to py_test.

    Example:
        hk_py_test(name = "add_test", src = "add_test.py", toolchain = True)
    """
    native.py_test(
        name = name,
        srcs = [src, "//tests:pytest_main.py"],
        main = "//tests:pytest_main.py",
        args = ["$(rootpath %s)" % src],
        deps = deps + ["//hk"],
        data = data + (TOOLCHAIN_DATA + ["//hk/include:headers"] if toolchain else []),
        env = TOOLCHAIN_ENV if toolchain else {},
        size = size,
        # A GPU test's result depends on this machine's GPU, not only on its inputs: it runs here
        # (remote workers have none) and is not shared through a remote cache.
        tags = tags + (["no-remote"] if "gpu" in tags else []),
        **kwargs
    )
