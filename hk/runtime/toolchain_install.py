"""hk-toolchain: the HIP compiler for a machine with no ROCm, from the project's own pins.

    hk-toolchain install     fetch, verify and unpack the pinned packages; print the root
    hk-toolchain path        print the installed root (exit 1 when there is none)
    hk-toolchain show        the toolchain hk would compile with, and where it comes from

The packages are those the Bazel build's hermetic toolchain is unpacked from (clang, lld and
the LLVM tools 22.1.8, the HIP 7.2.4 headers and the AMDGPU device libraries built for LLVM 22),
pinned with their sha256 in third_party/debian/packages.json (the wheel carries a copy). They
are fetched from Debian's archive with apt-get through a private configuration (the system's
apt sources are neither read nor changed), so a Debian-based system is needed. The result lies
in $HK_CACHE_DIR/toolchain/<key>, laid out as a ROCm root, and hk.runtime.toolchain finds it
when neither HK_CLANG nor HK_ROCM_PATH says otherwise.
"""

import hashlib
import json
import os
import shutil
import sys

from hk.runtime import debian_fetch, paths

# The set of packages (a key of the manifest's "sets") a device compile needs.
PACKAGE_SET = "device_compiler"
_LLVM = "usr/lib/llvm-22"
_LIBRARY_DIRS = ("usr/lib/x86_64-linux-gnu", _LLVM + "/lib")
# Tools of the installed root: name in bin/ -> binary under the unpacked tree.
TOOLS = {
    "clang++": _LLVM + "/bin/clang++",
    "ld.lld": _LLVM + "/bin/ld.lld",
    "llvm-objdump": _LLVM + "/bin/llvm-objdump",
    "llvm-readelf": _LLVM + "/bin/llvm-readelf",
    "llvm-mc": _LLVM + "/bin/llvm-mc",
}
# The ROCm root clang's --rocm-path wants, as links into the unpacked tree.
_ROCM_LAYOUT = {
    "rocm/include/hip": "usr/include/hip",
    "rocm/share/hip/version": "usr/share/hip/version",
    "rocm/amdgcn/bitcode": _LLVM + "/lib/clang/22/amdgcn/bitcode",
}
_COMPLETE = ".hk-complete"


def manifest_path():
    """The package manifest: the wheel's copy beside this module, else the source tree's."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "debian_packages.json"),
                      os.path.join(here, "..", "..", "third_party", "debian", "packages.json")):
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    raise FileNotFoundError("hk's Debian package manifest is missing (neither the wheel's "
                            "hk/runtime/debian_packages.json nor third_party/debian/packages.json)")


def load_manifest(path=None):
    with open(path or manifest_path()) as f:
        return json.load(f)


def pins(manifest, package_set=PACKAGE_SET):
    """[(name, version, sha256)] of a set of the manifest."""
    return [(n, manifest["packages"][n]["version"], manifest["packages"][n]["sha256"])
            for n in manifest["sets"][package_set]]


def root_for(manifest, cache=None, package_set=PACKAGE_SET):
    """Where the toolchain of these pins is installed: one directory per set of digests, so a
    new pin installs beside the old one and never over it."""
    key = hashlib.sha256("\n".join(sha for _, _, sha in pins(manifest, package_set)).encode())
    return os.path.join(cache or paths.cache_base(), "toolchain", key.hexdigest()[:16])


def installed(cache=None, manifest=None):
    """The installed root of the current pins, or None."""
    try:
        root = root_for(manifest or load_manifest(), cache)
    except (OSError, ValueError, KeyError):
        return None
    return root if os.path.exists(os.path.join(root, _COMPLETE)) else None


def _wrapper(target):
    # Finds the root through its own real path, so the tree can be moved as a whole.
    lib_path = ":".join('$root/unpacked/' + d for d in _LIBRARY_DIRS)
    return """#!/bin/sh
# Written by hk-toolchain: runs the unpacked {target} with its libraries.
root="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
LD_LIBRARY_PATH="{lib_path}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}" exec "$root/unpacked/{target}" "$@"
""".format(target=target, lib_path=lib_path)


def install(cache=None, manifest=None, offline=False, log=sys.stderr):
    """Fetches (or takes from hk's Debian cache), verifies and unpacks the pinned packages and
    lays them out as a ROCm root with bin/ wrappers; returns the root. Atomic: the root appears
    complete or not at all, and a second install of the same pins does nothing."""
    manifest = manifest or load_manifest()
    cache = cache or paths.cache_base()
    root = root_for(manifest, cache)
    if os.path.exists(os.path.join(root, _COMPLETE)):
        return root
    debs = debian_fetch.fetch(os.path.join(cache, "debian"), manifest["archives"], pins(manifest),
                              offline=offline, log=log)
    os.makedirs(os.path.dirname(root), exist_ok=True)
    tmp = "%s.partial.%d" % (root, os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        os.makedirs(os.path.join(tmp, "unpacked"))
        debian_fetch.unpack(debs, os.path.join(tmp, "unpacked"))
        for link, target in _ROCM_LAYOUT.items():
            if not os.path.exists(os.path.join(tmp, "unpacked", target)):
                raise debian_fetch.FetchError("the unpacked packages have no %s" % target)
            os.makedirs(os.path.dirname(os.path.join(tmp, link)), exist_ok=True)
            depth = link.count("/")
            os.symlink(os.path.join(*([".."] * depth + ["unpacked", target])), os.path.join(tmp, link))
        os.makedirs(os.path.join(tmp, "bin"))
        for name, target in TOOLS.items():
            path = os.path.join(tmp, "bin", name)
            with open(path, "w") as f:
                f.write(_wrapper(target))
            os.chmod(path, 0o755)
        open(os.path.join(tmp, _COMPLETE), "w").close()
        shutil.rmtree(root, ignore_errors=True)  # an incomplete root of an interrupted install
        os.replace(tmp, root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return root


def define_flags():
    from absl import flags

    flags.DEFINE_string("cache_dir", None, "hk's cache root (default: $HK_CACHE_DIR or ~/.cache/hk)")
    flags.DEFINE_bool("offline", False, "install only from packages already in hk's Debian cache")


def main(argv):
    from absl import flags

    from hk.compiler.cli import UsageError
    from hk.runtime import toolchain

    FLAGS = flags.FLAGS
    if len(argv) != 2 or argv[1] not in ("install", "path", "show"):
        raise UsageError("say one of: install, path, show")
    if FLAGS.cache_dir:
        os.environ["HK_CACHE_DIR"] = os.path.abspath(FLAGS.cache_dir)  # for show's lookup too
    command = argv[1]
    if command == "install":
        try:
            print(install(offline=FLAGS.offline))
        except debian_fetch.FetchError as e:
            print("hk-toolchain: error: %s" % e, file=sys.stderr)
            return 1
        return 0
    if command == "path":
        root = installed()
        if not root:
            print("hk-toolchain: no toolchain is installed (run `hk-toolchain install`)", file=sys.stderr)
            return 1
        print(root)
        return 0
    found = toolchain.find()
    print("clang:     %s\nROCm root: %s\nLLVM tools: %s\nfrom:      %s"
          % (found.clang, found.rocm_root, found.llvm_bin, found.origin))
    return 0


def entry():
    from hk.compiler import cli

    cli.run_tool("hk-toolchain", __doc__, define_flags, main)


if __name__ == "__main__":
    entry()
