"""The external repositories hk-dsl builds with. Call hk_toolchains() from the WORKSPACE.

Every toolchain is unpacked from pinned, checksummed packages (third_party/debian/packages.json);
`--repo_env=HK_ROCM_PATH=/opt/rocm` takes the HIP compiler, headers and device libraries from an
installed ROCm instead.
"""

load("//toolchains/private:engine_env.bzl", "engine_env_repository")
load("//toolchains/private:llvm.bzl", "llvm_toolchain_repository")
load("//toolchains/private:llvm_source.bzl", "llvm_source_repository")
load("//toolchains/private:python.bzl", "hk_python_repository")
load("//toolchains/private:rocm.bzl", "rocm_device_repository")
load("//toolchains/private:targets.bzl", "hk_targets_repository")

def hk_toolchains():
    """Declares @hk_python, @hk_targets, @llvm_toolchain, @llvm_source, @rocm_device, and the
    engines' test environments @vllm_env and @sglang_env.

    Example (WORKSPACE):
        load("//toolchains:repositories.bzl", "hk_toolchains")
        hk_toolchains()
        register_toolchains("@hk_python//:toolchain")
    """
    hk_python_repository(name = "hk_python")
    hk_targets_repository(name = "hk_targets")
    llvm_toolchain_repository(name = "llvm_toolchain")
    rocm_device_repository(name = "rocm_device")
    llvm_source_repository(name = "llvm_source")
    engine_env_repository(name = "vllm_env", engine = "vllm", requirements = "//integration/vllm:requirements.txt")
    engine_env_repository(name = "sglang_env", engine = "sglang", requirements = "//integration/sglang:requirements.txt")
