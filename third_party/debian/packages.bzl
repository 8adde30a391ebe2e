"""The Debian packages the hermetic toolchains are unpacked from: every name, version and sha256.

The sha256 is the one the archive's Packages index lists for the .deb; a download whose digest
differs is refused. LLVM 22.1.8 comes from bookworm-security, HIP 7.2.4 and the device libraries
built for LLVM 22 from experimental. LLVM's own source (for the MLIR Python bindings, which
Debian does not build) is the orig tarball of sid's llvm-toolchain-22 1:22.1.8-3, identical to
bookworm-security's 22.1.8 source.
"""

# Archive suites the private apt configuration lists, per archive root.
DEBIAN_ARCHIVES = {
    "http://deb.debian.org/debian": ["experimental", "sid"],
    "http://deb.debian.org/debian-security": ["bookworm-security"],
}

_LLVM = "1:22.1.8-1~deb12u1"

# name: (version, sha256)
PACKAGES = {
    "clang-22": (_LLVM, "b6ffc4ffae2bf3d0757bab0623701060b30f5bb59e7ba4123d66b56fbb91362a"),
    "libclang-cpp22": (_LLVM, "662a8497190dd6cebaee2ac9421ed9d91cb1199eeabd154eafc4b5c1ac01d4b3"),
    "libclang-common-22-dev": (_LLVM, "833d7559bfbe169d7927dfe151cae48bf352da5202e36034a206688ae33f9031"),
    "lld-22": (_LLVM, "13103b3fb3195bfeade9835d3906a4cc91002010f9013d98aa1fc55b841d07b4"),
    "liblld-22": (_LLVM, "538ad201ca6e898d5a02b52572d28e129e9822e4aaea5418f157a18813b6ac72"),
    "llvm-22": (_LLVM, "fcde579693b3f1cf1da596694c1add8a961ab1e1bd22744d4bff165d4f865add"),
    "libllvm22": (_LLVM, "729ec3e943d320515c2bbdc96acfffd7ce34861e62bd5c42726bf586d644dfe2"),
    "llvm-22-tools": (_LLVM, "6edd5aaa2703a8507dd3eb6f8ecb6c8b6f70e5a75cc2c39c3a4d7d31d7766911"),
    "llvm-22-dev": (_LLVM, "72250802fb65f281aa88bffe317bec70d6ddbe21134736c354a4f13ed24709ad"),
    "libmlir-22": (_LLVM, "d961acd13b217ce08fb067d8ca073bc800e3c64b0907d640a7df067d3e9c59cf"),
    "libmlir-22-dev": (_LLVM, "7b46221bc4df3c193f01aee030cffebeedb520b9265b488940e639b00f45f045"),
    "mlir-22-tools": (_LLVM, "bbfaa827931d8f2ca2dcf031c3ef1c20341a4658ec9019694d3c1c4c9920ffa7"),
    "libamdhip64-dev": ("7.2.4-1~exp2", "28ae316c5be2d33b53fae8f2151e76a758f84aa3493abafeaef935e49cc5ba07"),
    "rocm-device-libs-22": ("7.2.4+dfsg-1~exp1", "24b439be7c151ff67bc1f4f4f42a7c4047b3e6fd7905b9e6df89c0fa5dea8031"),
}

# What each toolchain repository is unpacked from.
LLVM_TOOLCHAIN_PACKAGES = [
    "clang-22",
    "libclang-cpp22",
    "libclang-common-22-dev",
    "lld-22",
    "liblld-22",
    "llvm-22",
    "libllvm22",
    "llvm-22-tools",
    "llvm-22-dev",
    "libmlir-22",
    "libmlir-22-dev",
    "mlir-22-tools",
]

ROCM_DEVICE_PACKAGES = [
    "libamdhip64-dev",
    "rocm-device-libs-22",
]

# name: (version, file of the source package, sha256)
SOURCE_PACKAGES = {
    "llvm-toolchain-22": (
        "1:22.1.8-3",
        "llvm-toolchain-22_22.1.8.orig.tar.xz",
        "b49b9277aef97616320b2da259e1f8174c65b0ce2fbe2e8629644a97693402fe",
    ),
}
