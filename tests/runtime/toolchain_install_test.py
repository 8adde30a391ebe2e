"""hk-toolchain install: the pinned packages (here small stand-ins built with dpkg-deb, so that
no network is needed) are verified, unpacked and laid out as a ROCm root with working tool
wrappers, which hk.runtime.toolchain then finds; damage and a missing piece are refused."""

import hashlib
import json
import os
import subprocess
import sys

import pytest

from hk.runtime import debian_fetch, toolchain, toolchain_install

LLVM = "usr/lib/llvm-22"
FILES = {
    "fake-clang": {LLVM + "/bin/" + tool: "#!/bin/sh\necho \"%s $LD_LIBRARY_PATH $*\"\n" % tool
                   for tool in ("clang++", "ld.lld", "llvm-objdump", "llvm-readelf", "llvm-mc")},
    "fake-hip": {"usr/include/hip/hip_runtime.h": "// HIP\n", "usr/share/hip/version": "HIP_VERSION_MAJOR=7\n"},
    "fake-bitcode": {LLVM + "/lib/clang/22/amdgcn/bitcode/ocml.bc": "BC"},
}


def make_deb(tmp, name, files):
    tree = tmp / ("tree-" + name)
    for path, text in files.items():
        p = tree / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        p.chmod(0o755 if "/bin/" in path else 0o644)
    (tree / "DEBIAN").mkdir()
    (tree / "DEBIAN" / "control").write_text(
        "Package: %s\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: hk <hk@example.org>\n"
        "Description: a stand-in for a toolchain package\n" % name)
    deb = tmp / (name + ".deb")
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(tree), str(deb)], check=True,
                   stdout=subprocess.DEVNULL)
    return deb


@pytest.fixture
def setup(tmp_path):
    """(cache, manifest) with the stand-in packages already in hk's Debian cache."""
    cache = tmp_path / "cache"
    debs = cache / "debian" / "debs"
    debs.mkdir(parents=True)
    manifest = {"archives": {"http://deb.invalid/debian": ["sid"]}, "packages": {},
                "sets": {toolchain_install.PACKAGE_SET: sorted(FILES)}}
    for name, files in FILES.items():
        deb = make_deb(tmp_path, name, files)
        manifest["packages"][name] = {"version": "1.0-1",
                                      "sha256": hashlib.sha256(deb.read_bytes()).hexdigest()}
        os.replace(deb, debs / debian_fetch.deb_filename(name, "1.0-1"))
    return str(cache), manifest


def test_install_lays_out_a_rocm_root_with_working_tools(setup):
    cache, manifest = setup
    root = toolchain_install.install(cache, manifest, offline=True)
    assert root.startswith(os.path.join(cache, "toolchain"))
    assert open(os.path.join(root, "rocm", "include", "hip", "hip_runtime.h")).read() == "// HIP\n"
    assert os.path.exists(os.path.join(root, "rocm", "amdgcn", "bitcode", "ocml.bc"))
    assert os.path.exists(os.path.join(root, "rocm", "share", "hip", "version"))
    out = subprocess.run([os.path.join(root, "bin", "clang++"), "--version"], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    assert out.startswith("clang++ ") and out.rstrip().endswith("--version")
    assert os.path.join(root, "unpacked", "usr/lib/x86_64-linux-gnu") in out  # its libraries
    # A wrapper reached through a symlink (as a ROCm root's llvm/bin would be) still works.
    link = os.path.join(cache, "objdump-link")
    os.symlink(os.path.join(root, "bin", "llvm-objdump"), link)
    assert subprocess.run([link], stdout=subprocess.PIPE, universal_newlines=True).stdout.startswith("llvm-objdump")
    assert toolchain_install.installed(cache, manifest) == root


def test_a_second_install_reuses_the_root_and_toolchain_find_picks_it(setup, monkeypatch):
    cache, manifest = setup
    root = toolchain_install.install(cache, manifest, offline=True)
    for deb in os.listdir(os.path.join(cache, "debian", "debs")):
        os.remove(os.path.join(cache, "debian", "debs", deb))
    assert toolchain_install.install(cache, manifest, offline=True) == root
    for var in ("HK_CLANG", "HK_ROCM_ROOT", "HK_ROCM_PATH", "RUNFILES_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HK_CACHE_DIR", cache)
    monkeypatch.setattr(toolchain_install, "load_manifest", lambda path=None: manifest)
    monkeypatch.setattr(toolchain, "_from_runfiles", lambda: None)
    found = toolchain.find()
    assert found.origin.startswith("hk-toolchain install")
    assert found.clang == os.path.join(root, "bin", "clang++")
    assert found.rocm_root == os.path.join(root, "rocm")
    assert found.tool("llvm-readelf") == os.path.join(root, "bin", "llvm-readelf")
    # An explicit ROCm wins over the installed toolchain, and a wrong one is an error.
    monkeypatch.setenv("HK_ROCM_PATH", os.path.join(cache, "no-such-rocm"))
    with pytest.raises(toolchain.ToolchainError, match="is not a directory"):
        toolchain.find()


def test_a_damaged_package_is_refused_and_nothing_is_installed(setup):
    cache, manifest = setup
    deb = os.path.join(cache, "debian", "debs", debian_fetch.deb_filename("fake-hip", "1.0-1"))
    with open(deb, "ab") as f:
        f.write(b"damage")
    with pytest.raises(debian_fetch.FetchError, match="fake-hip"):
        toolchain_install.install(cache, manifest, offline=True)
    assert toolchain_install.installed(cache, manifest) is None
    assert not os.path.exists(os.path.join(cache, "toolchain")) or not any(
        n for n in os.listdir(os.path.join(cache, "toolchain")) if not n.endswith(".lock"))


def test_packages_that_lack_a_piece_are_refused(setup):
    cache, manifest = setup
    manifest["sets"][toolchain_install.PACKAGE_SET].remove("fake-bitcode")
    with pytest.raises(debian_fetch.FetchError, match="amdgcn/bitcode"):
        toolchain_install.install(cache, manifest, offline=True)
    assert toolchain_install.installed(cache, manifest) is None


def test_the_shipped_manifest_names_the_set_and_pins_every_package():
    manifest = toolchain_install.load_manifest()
    names = manifest["sets"][toolchain_install.PACKAGE_SET]
    assert "clang-22" in names and "rocm-device-libs-22" in names and "libamdhip64-dev" in names
    for name in names:
        assert len(manifest["packages"][name]["sha256"]) == 64


def run_cli(*args, cache):
    env = dict(os.environ, HK_CACHE_DIR=cache)
    return subprocess.run([sys.executable, "-m", "hk.runtime.toolchain_install"] + list(args), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def test_command_line(tmp_path):
    cache = str(tmp_path / "empty-cache")
    none = run_cli("path", cache=cache)
    assert none.returncode == 1 and "hk-toolchain install" in none.stderr
    wrong = run_cli("frobnicate", cache=cache)
    assert wrong.returncode == 2 and "install, path, show" in wrong.stderr
    assert "Traceback" not in wrong.stderr
    helped = run_cli("--help", cache=cache)
    assert helped.returncode == 0 and "hk-toolchain install" in helped.stdout and "offline" in helped.stdout
    bad_flag = run_cli("install", "--no_such_flag", cache=cache)
    assert bad_flag.returncode == 2 and "no_such_flag" in bad_flag.stderr
    offline = run_cli("install", "--offline", cache=cache)
    assert offline.returncode == 1 and "not in the cache" in offline.stderr
    # --cache_dir names the cache root instead of HK_CACHE_DIR, for path and show alike.
    other = str(tmp_path / "other-cache")
    root = toolchain_install.root_for(toolchain_install.load_manifest(), other)
    os.makedirs(root)
    open(os.path.join(root, ".hk-complete"), "w").close()
    found = run_cli("path", "--cache_dir=" + other, cache=cache)
    assert found.returncode == 0 and found.stdout.strip() == root, found.stderr
