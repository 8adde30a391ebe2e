"""debian_fetch refuses a package whose sha256 differs from its pin and caches what it verified.

apt-get is replaced by a script on PATH that "downloads" a .deb built here with dpkg-deb, so the
test needs no network and controls what arrives.
"""

import hashlib
import io
import os
import subprocess
import sys
import textwrap

from absl.testing import absltest

from hk.runtime import debian_fetch

ARCHIVES = {"http://deb.debian.org/debian": ["experimental"]}


def build_deb(workdir, name, payload):
    """A real, minimal .deb holding usr/share/<name>/payload.txt."""
    root = os.path.join(workdir, "pkg-" + name)
    os.makedirs(os.path.join(root, "DEBIAN"))
    os.makedirs(os.path.join(root, "usr", "share", name))
    with open(os.path.join(root, "DEBIAN", "control"), "w") as f:
        f.write("Package: %s\nVersion: 1:1.0-1\nArchitecture: amd64\nMaintainer: hk <hk@example.org>\n"
                "Description: test package\n" % name)
    with open(os.path.join(root, "usr", "share", name, "payload.txt"), "w") as f:
        f.write(payload)
    out = os.path.join(workdir, name + ".deb")
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", root, out], check=True,
                   stdout=subprocess.DEVNULL)
    return out


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


class FetchTest(absltest.TestCase):

    def setUp(self):
        super().setUp()
        self.work = self.create_tempdir().full_path
        self.cache = os.path.join(self.work, "cache")
        self.bin = os.path.join(self.work, "bin")
        os.makedirs(self.bin)
        self.calls = os.path.join(self.work, "apt-calls")
        self.good = build_deb(self.work, "hk-test", "the real payload\n")
        self.evil = build_deb(self.work, "hk-evil", "something else\n")
        self.install_fake_apt(self.good)
        self.path = os.environ["PATH"]
        os.environ["PATH"] = self.bin + os.pathsep + self.path

    def tearDown(self):
        os.environ["PATH"] = self.path
        super().tearDown()

    def install_fake_apt(self, serves, fail=False):
        """An apt-get that logs its calls and 'downloads' `serves` under the requested name."""
        script = os.path.join(self.bin, "apt-get")
        with open(script, "w") as f:
            f.write(textwrap.dedent("""\
                #!/bin/sh
                echo "$*" >> {calls}
                for a in "$@"; do last="$a"; done
                case " $* " in
                  *" update "*) exit 0 ;;
                  *" download "*)
                    {fail}
                    name="${{last%%=*}}"; version="${{last#*=}}"
                    cp {serves} "${{name}}_$(echo "$version" | sed 's/:/%3a/')_amd64.deb" ;;
                esac
                """).format(calls=self.calls, serves=serves,
                            fail="echo 'E: unable to locate' >&2; exit 100" if fail else ""))
        os.chmod(script, 0o755)

    def apt_calls(self):
        return open(self.calls).read().splitlines() if os.path.exists(self.calls) else []

    def test_check_refuses_a_mismatch_and_names_the_package(self):
        with self.assertRaises(debian_fetch.FetchError) as e:
            debian_fetch.check("hk-test", "1:1.0-1", "0" * 64, self.good)
        message = str(e.exception)
        self.assertIn("hk-test=1:1.0-1", message)
        self.assertIn(sha256(self.good), message)
        self.assertIn("0" * 64, message)

    def test_wrong_checksum_is_refused_and_nothing_is_cached(self):
        self.install_fake_apt(self.evil)
        with self.assertRaisesRegex(debian_fetch.FetchError, r"package hk-test=1:1\.0-1: sha256"):
            debian_fetch.fetch(self.cache, ARCHIVES, [("hk-test", "1:1.0-1", sha256(self.good))],
                               log=io.StringIO())
        self.assertEqual(os.listdir(os.path.join(self.cache, "debs")), [])

    def test_command_line_exits_1_on_a_wrong_checksum(self):
        self.install_fake_apt(self.evil)
        result = subprocess.run(
            [sys.executable, debian_fetch.__file__, "--cache", self.cache,
             "--archive", "http://deb.debian.org/debian=experimental",
             "--package", "hk-test=1:1.0-1=" + sha256(self.good)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
            env=dict(os.environ))
        self.assertEqual(result.returncode, 1)
        self.assertIn("refusing it", result.stderr)

    def test_verified_package_is_cached_and_unpacked(self):
        pin = [("hk-test", "1:1.0-1", sha256(self.good))]
        paths = debian_fetch.fetch(self.cache, ARCHIVES, pin, log=io.StringIO())
        self.assertEqual(sha256(paths[0]), sha256(self.good))
        dest = os.path.join(self.work, "dest")
        debian_fetch.unpack(paths, dest)
        with open(os.path.join(dest, "usr", "share", "hk-test", "payload.txt")) as f:
            self.assertEqual(f.read(), "the real payload\n")
        # The second fetch is served from the cache: apt-get is not asked again.
        downloads = [c for c in self.apt_calls() if " download " in " %s " % c]
        self.install_fake_apt(self.good, fail=True)
        again = debian_fetch.fetch(self.cache, ARCHIVES, pin, log=io.StringIO())
        self.assertEqual(again, paths)
        self.assertEqual([c for c in self.apt_calls() if " download " in " %s " % c], downloads)

    def test_private_apt_configuration_never_names_the_system_sources(self):
        debian_fetch.fetch(self.cache, ARCHIVES, [("hk-test", "1:1.0-1", sha256(self.good))],
                           log=io.StringIO())
        for call in self.apt_calls():
            self.assertIn("Dir::Etc::SourceList=/dev/null", call)
            self.assertIn("Dir::Etc::SourceParts=" + os.path.join(self.cache, "apt", "sources"), call)
        with open(os.path.join(self.cache, "apt", "sources", "hk.sources")) as f:
            self.assertIn("Suites: experimental", f.read())

    def test_damaged_cache_entry_is_fetched_again(self):
        pin = [("hk-test", "1:1.0-1", sha256(self.good))]
        (path,) = debian_fetch.fetch(self.cache, ARCHIVES, pin, log=io.StringIO())
        with open(path, "ab") as f:
            f.write(b"bit rot")
        log = io.StringIO()
        (again,) = debian_fetch.fetch(self.cache, ARCHIVES, pin, log=log)
        self.assertEqual(sha256(again), sha256(self.good))
        self.assertIn("fetching again", log.getvalue())

    def test_offline_fetch_of_a_missing_package_is_an_error(self):
        with self.assertRaisesRegex(debian_fetch.FetchError, "not in the cache"):
            debian_fetch.fetch(self.cache, ARCHIVES, [("hk-test", "1:1.0-1", "a" * 64)],
                               offline=True, log=io.StringIO())


if __name__ == "__main__":
    absltest.main()
