"""Shared pieces of the repository rules: the cache, the host interpreter, the package fetch."""

# The environment the repository rules read; a change to any of them re-runs the rule.
REPOSITORY_ENVIRON = ["HK_CACHE_DIR", "HK_PYTHON", "HK_ROCM_PATH", "XDG_CACHE_HOME", "HOME"]

def cache_dir(rctx):
    """(string) hk's cache root: $HK_CACHE_DIR, else $XDG_CACHE_HOME/hk, else ~/.cache/hk."""
    env = rctx.os.environ
    if env.get("HK_CACHE_DIR"):
        return env["HK_CACHE_DIR"]
    if env.get("XDG_CACHE_HOME"):
        return env["XDG_CACHE_HOME"] + "/hk"
    if not env.get("HOME"):
        fail("neither HK_CACHE_DIR nor HOME is set; set HK_CACHE_DIR to a writable directory")
    return env["HOME"] + "/.cache/hk"

def host_python(rctx):
    """(path) the interpreter bazelw exported as HK_PYTHON, else python3 on PATH."""
    python = rctx.os.environ.get("HK_PYTHON")
    if python:
        return rctx.path(python)
    found = rctx.which("python3")
    if not found:
        fail("no Python interpreter: run the build through ./bazelw, or put python3 on PATH")
    return found

def debian_manifest(rctx):
    """(dict) third_party/debian/packages.json: archives, packages, sets and sources."""
    return json.decode(rctx.read(Label("//third_party/debian:packages.json")))

def debian_fetch_args(rctx, manifest):
    """(list) the start of a debian_fetch command line: the script, the cache and the archives."""
    script = rctx.path(Label("//hk/runtime:debian_fetch.py"))
    args = [host_python(rctx), script, "--cache", cache_dir(rctx) + "/debian"]
    for url, suites in manifest["archives"].items():
        args += ["--archive", "%s=%s" % (url, ",".join(suites))]
    return args

def fetch_debian_packages(rctx, package_set, dest = "."):
    """Downloads (or takes from the cache) the pinned packages of a set and unpacks them in `dest`.

    Args:
      rctx: the repository context.
      package_set: (string) a key of the manifest's "sets", e.g. "rocm_device".
      dest: (string) directory inside the repository to unpack into.

    Returns:
      (list of string) the names of the packages unpacked.
    """
    manifest = debian_manifest(rctx)
    if package_set not in manifest["sets"]:
        fail("package set %r is not in third_party/debian/packages.json (it has %s)" %
             (package_set, ", ".join(sorted(manifest["sets"].keys()))))
    names = manifest["sets"][package_set]
    args = debian_fetch_args(rctx, manifest) + ["--dest", dest]
    for name in names:
        if name not in manifest["packages"]:
            fail("package %r is not in third_party/debian/packages.json; add its version and sha256 there" % name)
        pin = manifest["packages"][name]
        args += ["--package", "%s=%s=%s" % (name, pin["version"], pin["sha256"])]
    rctx.report_progress("fetching %d Debian packages" % len(names))
    result = rctx.execute(args, timeout = 3600, quiet = False)
    if result.return_code != 0:
        fail("fetching %s failed:\n%s" % (", ".join(names), result.stderr))
    return names

def tool_wrapper(rctx, path, target, library_dirs):
    """Writes an executable script at `path` that runs `target` with `library_dirs` on the loader path.

    Both are relative to the repository root; the script finds that root through the real path
    of its copy in its own runfiles (a tool's `sh_binary` is run from bazel-bin, beside them), of
    its copy in the caller's runfiles, or of itself, so it works from the repository, an action's
    sandbox, a test's runfiles and a remote worker (where files are copies, not symlinks into this
    machine's output base) alike. Locally every way leads to the same file.

    Args:
      rctx: the repository context.
      path: (string) where the wrapper goes, e.g. "bin/clang++".
      target: (string) the real binary, e.g. "usr/lib/llvm-22/bin/clang++".
      library_dirs: (list of string) directories prepended to LD_LIBRARY_PATH.
    """
    depth = len(path.split("/")) - 1
    up = "/".join([".."] * depth) if depth else "."
    lib_path = ":".join(['$root/' + d for d in library_dirs])
    rctx.file(path, executable = True, content = """#!/usr/bin/env bash
# Generated: runs {target} from the unpacked package tree.
self="${{BASH_SOURCE[0]}}"
for wrapper in "$self.runfiles/{repo}/{path}" "${{RUNFILES_DIR:-${{TEST_SRCDIR:-/nonexistent}}}}/{repo}/{path}" "$self"; do
  [ -e "$wrapper" ] && break
done
root="$(cd "$(dirname "$(readlink -f "$wrapper")")/{up}" && pwd)"
export LD_LIBRARY_PATH="{lib_path}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"
exec "$root/{target}" "$@"
""".format(target = target, up = up, lib_path = lib_path, repo = rctx.name, path = path))
