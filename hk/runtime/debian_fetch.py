"""Fetch pinned Debian packages with apt-get, check their sha256, and unpack them.

Used by the toolchain repository rules (toolchains/private/debian.bzl) and by hk-toolchain. It
runs with the standard library only, because the rules run it before the project's Python
environment is known to Bazel.

The system's apt configuration is never read or written: apt-get runs with a private sources
list, package lists and archive cache under the cache directory. Verified .deb files are kept
in that cache, so a second fetch of the same package costs a checksum.

    python3 hk/runtime/debian_fetch.py --cache ~/.cache/hk/debian --dest OUT \
        --archive http://deb.debian.org/debian=experimental \
        --package libamdhip64-dev=7.2.4-1~exp2=28ae31...

Source packages work the same way: `--source NAME=VERSION=FILE=SHA256` fetches one file of a
source package (`apt-get source --download-only --tar-only`), and `--member PATH` extracts only
those members of the tarball into --dest. The extracted members are cached as well.
"""

import argparse
import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


class FetchError(Exception):
    """A package could not be fetched or failed its checksum."""


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def deb_filename(name, version):
    # The name apt-get download gives the file ("1:22.1.8" is written "1%3a22.1.8").
    return "%s_%s_amd64.deb" % (name, version.replace(":", "%3a"))


@contextlib.contextmanager
def locked(path):
    """Hold an exclusive lock on `path` so that concurrent fetches take turns."""
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class PrivateApt:
    """apt-get with its own sources, lists and cache: the host's configuration is not touched."""

    def __init__(self, root, archives):
        self.root = root
        self.sources = os.path.join(root, "sources")
        self.lists = os.path.join(root, "lists")
        self.cache = os.path.join(root, "cache")
        for d in (self.sources, os.path.join(self.lists, "partial"),
                  os.path.join(self.cache, "archives", "partial")):
            os.makedirs(d, exist_ok=True)
        stanzas = []
        for url, suites in sorted(archives.items()):
            stanzas.append("Types: deb deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n"
                           % (url, " ".join(suites), KEYRING))
        text = "\n".join(stanzas)
        path = os.path.join(self.sources, "hk.sources")
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)
            self.updated = False
        else:
            self.updated = os.path.exists(os.path.join(self.lists, "hk-updated"))

    def _options(self):
        options = [
            "-o", "Dir::Etc::SourceList=/dev/null",
            "-o", "Dir::Etc::SourceParts=" + self.sources,
            "-o", "Dir::State::Lists=" + self.lists,
            "-o", "Dir::Cache=" + self.cache,
            "-o", "Acquire::Languages=none",
            "-o", "APT::Get::List-Cleanup=0",
        ]
        if os.geteuid() == 0:
            # Downloads go to our own directories, which apt's unprivileged user cannot write.
            options += ["-o", "APT::Sandbox::User=root"]
        return options

    def run(self, args, cwd=None):
        cmd = ["apt-get", "-q"] + self._options() + args
        return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)

    def update(self):
        result = self.run(["update"])
        if result.returncode != 0:
            raise FetchError("apt-get update failed for the private package lists:\n"
                             + result.stdout)
        open(os.path.join(self.lists, "hk-updated"), "w").close()
        self.updated = True

    def download(self, name, version, dest_dir, source=False):
        spec = "%s=%s" % (name, version)
        args = (["source", "--download-only", "--tar-only", spec] if source
                else ["download", spec])
        result = self.run(args, cwd=dest_dir)
        if result.returncode != 0 and not self.updated:
            # Lists missing or stale: refresh them once and try again.
            self.update()
            result = self.run(args, cwd=dest_dir)
        if result.returncode != 0:
            raise FetchError("apt-get download %s failed (is the version still in the archive?):\n%s"
                             % (spec, result.stdout))


def fetch(cache, archives, packages, offline=False, log=sys.stderr, sources=()):
    """Make sure every package is in `cache` with its pinned sha256; return their paths.

    `packages` are (name, version, sha256) of binary packages; `sources` are (name, version,
    file, sha256) of one file of a source package.
    """
    debs = os.path.join(cache, "debs")
    os.makedirs(debs, exist_ok=True)
    wanted = [(n, v, sha, deb_filename(n, v), False) for n, v, sha in packages]
    wanted += [(n, v, sha, f, True) for n, v, f, sha in sources]
    paths = []
    with locked(os.path.join(cache, "fetch.lock")):
        apt = None
        for name, version, sha256, filename, source in wanted:
            path = os.path.join(debs, filename)
            if os.path.exists(path):
                actual = sha256_of(path)
                if actual == sha256:
                    paths.append(path)
                    continue
                # A cached file that no longer matches is damage, not a pin to trust: refetch it.
                print("debian_fetch: cached %s has sha256 %s, not the pinned %s; fetching again"
                      % (os.path.basename(path), actual, sha256), file=log)
                os.remove(path)
            if offline:
                raise FetchError("package %s=%s is not in the cache %s and fetching is off"
                                 % (name, version, debs))
            if apt is None:
                apt = PrivateApt(os.path.join(cache, "apt"), archives)
            print("debian_fetch: downloading %s=%s" % (name, version), file=log)
            tmp = tempfile.mkdtemp(prefix="download.", dir=debs)
            try:
                apt.download(name, version, tmp, source=source)
                got = os.path.join(tmp, filename)
                if not os.path.exists(got):
                    raise FetchError("apt-get %s %s=%s produced %s, not %s"
                                     % ("source" if source else "download", name, version,
                                        sorted(os.listdir(tmp)), filename))
                check(name, version, sha256, got)
                os.replace(got, path)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            paths.append(path)
    return paths


def check(name, version, sha256, path):
    actual = sha256_of(path)
    if actual != sha256:
        raise FetchError(
            "package %s=%s: sha256 of the downloaded .deb is %s but the manifest "
            "(third_party/debian/packages.json) pins %s; refusing it. If Debian really "
            "republished this version, check the new digest against the archive's Packages "
            "index before changing the pin." % (name, version, actual, sha256))


def extract_members(cache, tarball, sha256, members, dest):
    """Copies `members` (paths inside the tarball, below its top directory) into `dest`.

    The extraction is cached under the tarball's digest and the member list: decompressing
    a large tarball takes a while, and the members are small.
    """
    key = hashlib.sha256(("%s\n%s" % (sha256, "\n".join(sorted(members)))).encode()).hexdigest()[:16]
    done = os.path.join(cache, "src", key)
    with locked(os.path.join(cache, "fetch.lock")):
        if not os.path.isdir(done):
            tmp = tempfile.mkdtemp(prefix="extract.", dir=os.path.join(cache, "debs"))
            try:
                with tarfile.open(tarball) as tar:
                    top = tar.next().name.split("/")[0]
                    wanted = tuple(top + "/" + m.rstrip("/") for m in members)
                    chosen = [t for t in tar.getmembers()
                              if (t.name in wanted or t.name.startswith(tuple(w + "/" for w in wanted)))
                              and (t.isfile() or t.isdir())]
                    missing = [m for m, w in zip(members, wanted)
                               if not any(c.name == w or c.name.startswith(w + "/") for c in chosen)]
                    if missing:
                        raise FetchError("%s has no %s" % (os.path.basename(tarball), ", ".join(missing)))
                    if hasattr(tarfile, "data_filter"):
                        tar.extractall(tmp, members=chosen, filter="data")
                    else:
                        tar.extractall(tmp, members=chosen)
                os.makedirs(os.path.dirname(done), exist_ok=True)
                os.replace(os.path.join(tmp, top), done)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(done, dest, dirs_exist_ok=True)


def unpack(paths, dest):
    for path in paths:
        result = subprocess.run(["dpkg-deb", "-x", path, dest], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, universal_newlines=True)
        if result.returncode != 0:
            raise FetchError("dpkg-deb -x %s failed:\n%s" % (path, result.stdout))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="cache directory for .deb files")
    parser.add_argument("--dest", help="directory to unpack into (omit to only fetch)")
    parser.add_argument("--archive", action="append", default=[],
                        help="URL=suite[,suite...]: an archive root and its suites")
    parser.add_argument("--package", action="append", default=[],
                        help="NAME=VERSION=SHA256 (VERSION may hold ':' but not '=')")
    parser.add_argument("--source", action="append", default=[],
                        help="NAME=VERSION=FILE=SHA256: one file of a source package")
    parser.add_argument("--member", action="append", default=[],
                        help="with --source: a path inside the tarball to extract into --dest")
    parser.add_argument("--offline", action="store_true",
                        help="use only the cache; a missing package is an error")
    args = parser.parse_args(argv)
    archives = {}
    for item in args.archive:
        url, _, suites = item.partition("=")
        if not suites:
            parser.error("--archive wants URL=suite[,suite], got %r" % item)
        archives[url] = suites.split(",")
    packages = []
    for item in args.package:
        parts = item.split("=")
        if len(parts) != 3 or len(parts[2]) != 64:
            parser.error("--package wants NAME=VERSION=SHA256, got %r" % item)
        packages.append(tuple(parts))
    sources = []
    for item in args.source:
        parts = item.split("=")
        if len(parts) != 4 or len(parts[3]) != 64:
            parser.error("--source wants NAME=VERSION=FILE=SHA256, got %r" % item)
        sources.append(tuple(parts))
    return args, archives, packages, sources


def main(argv=None):
    args, archives, packages, sources = parse_args(argv)
    cache = os.path.expanduser(args.cache)
    try:
        paths = fetch(cache, archives, packages, offline=args.offline, sources=sources)
        if args.dest:
            unpack(paths[:len(packages)], args.dest)
            for (name, version, filename, sha256), path in zip(sources, paths[len(packages):]):
                extract_members(cache, path, sha256, args.member, args.dest)
    except FetchError as e:
        print("debian_fetch: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
