"""bazelw, with a stand-in for Bazel: it passes the arguments through, exports the project's
interpreter, and points Bazel's disk cache under HK_CACHE_DIR (the file .bazelrc imports, rewritten
only when its text changes). The remote settings: HK_REMOTE_* and HK_TLS_* become flags of
--config=remote-cache and --config=remote in that file (nothing remote without them), and a config
named without its endpoint is refused before anything is installed or run."""

import hashlib
import os
import stat
import shutil
import subprocess
import unittest

from absl import flags
from absl.testing import absltest

FLAGS = flags.FLAGS
flags.DEFINE_string("bazelw", None, "the bazelw script")
flags.DEFINE_string("bazelrc", None, "the workspace's .bazelrc")

FAKE_BAZEL = """#!/bin/sh
echo "ARGS $*"
echo "HK_PYTHON=$HK_PYTHON"
echo "HK_CACHE_DIR=$HK_CACHE_DIR"
"""


class BazelwTest(absltest.TestCase):

    def setUp(self):
        self.tmp = self.create_tempdir().full_path
        self.ws = os.path.join(self.tmp, "ws")
        os.makedirs(os.path.join(self.ws, "third_party", "python"))
        shutil.copy(FLAGS.bazelw, os.path.join(self.ws, "bazelw"))
        self.requirements = os.path.join(self.ws, "third_party", "python", "requirements.txt")
        with open(self.requirements, "w") as f:
            f.write("# nothing\n")
        self.bazel = os.path.join(self.tmp, "bazel")
        with open(self.bazel, "w") as f:
            f.write(FAKE_BAZEL)
        os.chmod(self.bazel, 0o755)

    def prepared_cache(self, name):
        """A cache root whose environment bazelw finds complete (so it builds nothing)."""
        cache = os.path.join(self.tmp, name)
        python = shutil.which("python3")
        with open(self.requirements, "rb") as f:
            key = hashlib.sha256(f.read() + (python + "\n").encode()).hexdigest()[:16]
        venv = os.path.join(cache, "venv", key)
        os.makedirs(os.path.join(venv, "bin"))
        open(os.path.join(venv, ".hk-complete"), "w").close()
        return cache, venv

    def run_bazelw(self, cache, *args, **remote):
        """(exit code, output) of bazelw with ARGS and the remote settings `remote` (the caller's
        own HK_REMOTE_* and HK_TLS_* left out)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HK_REMOTE_", "HK_TLS_"))}
        env.update(HK_CACHE_DIR=cache, HK_BAZEL=self.bazel, HK_BASE_PYTHON="python3",
                   HOME=os.path.join(self.tmp, "home"), **remote)
        result = subprocess.run([os.path.join(self.ws, "bazelw")] + list(args), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        return result.returncode, result.stdout

    def bazelw(self, cache, *args, **remote):
        code, out = self.run_bazelw(cache, *args, **remote)
        self.assertEqual(code, 0, out)
        return out

    def refused(self, *args, **remote):
        """bazelw's message when it refuses ARGS with `remote`, having installed and run nothing."""
        cache = os.path.join(self.tmp, "untouched")
        code, out = self.run_bazelw(cache, *args, **remote)
        self.assertEqual(code, 2, out)
        self.assertNotIn("ARGS", out)
        self.assertFalse(os.path.exists(cache), "bazelw bootstrapped before refusing")
        self.assertFalse(os.path.exists(os.path.join(self.ws, ".bazelw.bazelrc")))
        return out

    def printed_rc(self, *args, **remote):
        """The lines `bazelw --print_rc ARGS` prints, having installed, written and run nothing."""
        cache = os.path.join(self.tmp, "printing")
        out = self.bazelw(cache, "--print_rc", *args, **remote)
        self.assertNotIn("ARGS", out)
        self.assertFalse(os.path.exists(cache))
        self.assertFalse(os.path.exists(os.path.join(self.ws, ".bazelw.bazelrc")))
        lines = out.splitlines()
        self.assertEqual(lines[0], "build --disk_cache=%s/bazel-disk" % cache)
        return lines[1:]

    def tls_files(self):
        names = {}
        for var, name in [("HK_TLS_CA", "ca.pem"), ("HK_TLS_CLIENT_CERT", "client.pem"),
                          ("HK_TLS_CLIENT_KEY", "client.key")]:
            names[var] = os.path.join(self.tmp, name)
            with open(names[var], "w") as f:
                f.write("-----BEGIN %s-----\n" % ("PRIVATE KEY" if var == "HK_TLS_CLIENT_KEY" else "CERTIFICATE"))
        return names

    def rc(self):
        with open(os.path.join(self.ws, ".bazelw.bazelrc")) as f:
            return f.read()

    def test_the_disk_cache_follows_hk_cache_dir(self):
        cache, venv = self.prepared_cache("one")
        out = self.bazelw(cache, "build", "//kernels:all", "--config=gfx950")
        self.assertIn("ARGS build //kernels:all --config=gfx950", out)
        self.assertIn("HK_PYTHON=%s/bin/python" % venv, out)
        self.assertIn("HK_CACHE_DIR=" + cache, out)
        self.assertEqual(self.rc(), "build --disk_cache=%s/bazel-disk\n" % cache)

        # Unchanged: the file is left as it is (Bazel sees the same options).
        before = os.stat(os.path.join(self.ws, ".bazelw.bazelrc")).st_mtime_ns
        self.bazelw(cache, "info")
        self.assertEqual(os.stat(os.path.join(self.ws, ".bazelw.bazelrc")).st_mtime_ns, before)

        other, _ = self.prepared_cache("two")
        self.bazelw(other, "test", "//...")
        self.assertEqual(self.rc(), "build --disk_cache=%s/bazel-disk\n" % other)

    def test_the_workspace_imports_it_and_names_no_cache_of_its_own(self):
        with open(FLAGS.bazelrc) as f:
            text = f.read()
        self.assertIn("try-import %workspace%/.bazelw.bazelrc", text)
        # (--config=remote turns the disk cache off: an empty path.)
        words = [w for l in text.splitlines() if not l.startswith("#") for w in l.split()]
        self.assertEqual([w for w in words if w.startswith("--disk_cache=")], ["--disk_cache="])

    def pkcs1_key(self):
        path = os.path.join(self.tmp, "rsa.key")
        with open(path, "w") as f:
            f.write("-----BEGIN RSA PRIVATE KEY-----\n")
        return path

    def test_nothing_remote_without_the_settings(self):
        self.assertEqual(self.printed_rc("build", "//kernels:all"), [])
        # Set but empty is unset.
        self.assertEqual(self.printed_rc("build", HK_REMOTE_CACHE="", HK_REMOTE_HEADERS=""), [])

    def test_the_settings_become_flags_of_the_two_configs(self):
        tls = self.tls_files()
        lines = self.printed_rc(
            "test", "--config=remote", "//...",
            HK_REMOTE_CACHE="grpcs://cache.example.com:443",
            HK_REMOTE_EXECUTOR="grpcs://exec.example.com",
            HK_REMOTE_INSTANCE="projects/hk/instances/default",
            HK_REMOTE_HEADERS="x-buildbuddy-api-key=K3y,x-other=a=b\n x-third=3",
            HK_REMOTE_EXEC_PROPERTIES="container-image=docker://debian@sha256:ab12 Pool=linux",
            **tls)
        self.assertEqual(lines, [
            "build:remote-cache --remote_cache=grpcs://cache.example.com:443",
            "build:remote-cache --remote_instance_name=projects/hk/instances/default",
            "build:remote-cache --remote_header=x-buildbuddy-api-key=K3y",
            "build:remote-cache --remote_header=x-other=a=b",
            "build:remote-cache --remote_header=x-third=3",
            "build:remote-cache --tls_certificate=" + tls["HK_TLS_CA"],
            "build:remote-cache --tls_client_certificate=" + tls["HK_TLS_CLIENT_CERT"],
            "build:remote-cache --tls_client_key=" + tls["HK_TLS_CLIENT_KEY"],
            "build:remote --remote_executor=grpcs://exec.example.com",
            "build:remote --remote_default_exec_properties=container-image=docker://debian@sha256:ab12",
            "build:remote --remote_default_exec_properties=Pool=linux",
        ])

    def test_each_endpoint_alone(self):
        for url in ["grpc://127.0.0.1:50051", "grpcs://remote.buildbuddy.io", "http://cache:8080/hk",
                    "https://cache.example.com"]:
            self.assertEqual(self.printed_rc("build", "--config=remote-cache", HK_REMOTE_CACHE=url),
                             ["build:remote-cache --remote_cache=" + url])
        # The executor serves as the cache when no other is named.
        self.assertEqual(self.printed_rc("build", "--config", "remote", HK_REMOTE_EXECUTOR="grpc://bg:50051"),
                         ["build:remote --remote_executor=grpc://bg:50051"])

    def test_a_run_writes_them_for_its_owner_only(self):
        cache, _ = self.prepared_cache("one")
        out = self.bazelw(cache, "build", "--config=remote-cache", "//kernels:all",
                          HK_REMOTE_CACHE="grpcs://remote.buildbuddy.io",
                          HK_REMOTE_HEADERS="x-buildbuddy-api-key=secret")
        self.assertIn("ARGS build --config=remote-cache //kernels:all", out)
        self.assertEqual(self.rc(), "build --disk_cache=%s/bazel-disk\n"
                         "build:remote-cache --remote_cache=grpcs://remote.buildbuddy.io\n"
                         "build:remote-cache --remote_header=x-buildbuddy-api-key=secret\n" % cache)
        mode = stat.S_IMODE(os.stat(os.path.join(self.ws, ".bazelw.bazelrc")).st_mode)
        self.assertEqual(mode & 0o077, 0, oct(mode))
        # Unset again: the file is back to the disk cache alone.
        self.bazelw(cache, "build", "//kernels:all")
        self.assertEqual(self.rc(), "build --disk_cache=%s/bazel-disk\n" % cache)

    def debian_bazel(self):
        """A stand-in laid out as Debian's bazel-bootstrap: bin/bazel beside share/bazel."""
        prefix = os.path.join(self.tmp, "debian")
        os.makedirs(os.path.join(prefix, "bin"))
        os.makedirs(os.path.join(prefix, "share", "bazel"))
        open(os.path.join(prefix, "share", "bazel", "A-server.jar"), "w").close()
        shutil.copy(self.bazel, os.path.join(prefix, "bin", "bazel"))
        return os.path.join(prefix, "bin", "bazel"), os.path.join(prefix, "share", "bazel")

    def test_grpc_over_tls_gets_openssl_on_debians_bazel(self):
        other = self.bazel
        debian, share = self.debian_bazel()
        self.bazel = debian
        cache = os.path.join(self.tmp, "printing")
        startup = "startup --host_jvm_args=-Djava.library.path=%s/jni:%s" % (cache, share)
        for remote in [dict(HK_REMOTE_CACHE="grpcs://remote.buildbuddy.io"),
                       dict(HK_REMOTE_EXECUTOR="grpcs://cluster.engflow.example:443")]:
            self.assertEqual(self.printed_rc("build", **remote)[-1], startup)
        # Plain gRPC, HTTPS (no ALPN) and another Bazel need nothing.
        for remote in [dict(HK_REMOTE_CACHE="grpc://127.0.0.1:50051"), dict(HK_REMOTE_CACHE="https://cache")]:
            self.assertNotIn(startup, self.printed_rc("build", **remote))
        self.bazel = other
        self.assertNotIn(startup, self.printed_rc("build", HK_REMOTE_CACHE="grpcs://remote.buildbuddy.io"))

        # A run with the library in place writes the line (and installs nothing).
        self.bazel = debian
        cache, _ = self.prepared_cache("one")
        os.makedirs(os.path.join(cache, "jni"))
        open(os.path.join(cache, "jni", "libnetty_tcnative.so"), "w").close()
        self.bazelw(cache, "build", "--config=remote-cache", HK_REMOTE_CACHE="grpcs://remote.buildbuddy.io")
        self.assertIn("startup --host_jvm_args=-Djava.library.path=%s/jni:%s\n" % (cache, share), self.rc())

    def test_a_config_without_its_endpoint_is_refused(self):
        for args in [("build", "--config=remote", "//x"), ("test", "--config", "remote", "//x")]:
            out = self.refused(*args, HK_REMOTE_CACHE="grpc://127.0.0.1:50051")
            self.assertIn("--config=remote needs HK_REMOTE_EXECUTOR", out)
        out = self.refused("build", "--config=remote-cache", "//x")
        self.assertIn("--config=remote-cache needs HK_REMOTE_CACHE", out)
        # After `--` a word is a target, not an option.
        self.assertEqual(self.printed_rc("build", "--", "--config=remote"), [])

    def test_bad_settings_are_refused_by_name(self):
        cases = [
            (dict(HK_REMOTE_CACHE="cache.example.com:443"), "HK_REMOTE_CACHE=cache.example.com:443: the endpoint must start with grpc://, grpcs://, http://, https://"),
            (dict(HK_REMOTE_EXECUTOR="https://exec.example.com"), "HK_REMOTE_EXECUTOR=https://exec.example.com: the endpoint must start with grpc://, grpcs://"),
            (dict(HK_REMOTE_HEADERS="x-key"), "HK_REMOTE_HEADERS: 'x-key' is not NAME=VALUE"),
            (dict(HK_REMOTE_EXEC_PROPERTIES="=docker://x"), "HK_REMOTE_EXEC_PROPERTIES: '=docker://x' is not NAME=VALUE"),
            (dict(HK_REMOTE_INSTANCE="main\"x"), "HK_REMOTE_INSTANCE holds whitespace, a quote or a backslash"),
            (dict(HK_TLS_CLIENT_CERT=self.tls_files()["HK_TLS_CLIENT_CERT"]), "both HK_TLS_CLIENT_CERT and HK_TLS_CLIENT_KEY"),
            (dict(HK_TLS_CA=os.path.join(self.tmp, "missing.pem")), "HK_TLS_CA=%s: no such readable file" % os.path.join(self.tmp, "missing.pem")),
            (dict(self.tls_files(), HK_TLS_CLIENT_KEY=self.pkcs1_key()), "HK_TLS_CLIENT_KEY=%s is not an unencrypted PKCS#8 key" % self.pkcs1_key()),
            (dict(HK_REMOTE_CACHE="https://cache", HK_TLS_CA=self.tls_files()["HK_TLS_CA"]), "HK_TLS_CA is not applied by Bazel 4.2.3 to an https:// cache"),
            # Bazel 4.2.3 cannot execute remotely beside an HTTP cache.
            (dict(HK_REMOTE_EXECUTOR="grpc://bg:50051", HK_REMOTE_CACHE="http://cache:8080"), "cannot combine remote execution with an HTTP cache"),
        ]
        for remote, message in cases:
            with self.subTest(remote=remote):
                out = self.refused("build", "--config=remote", "//x", **remote)
                self.assertTrue(out.startswith("bazelw: "), out)
                self.assertIn(message, out)

    def test_the_workspace_defines_the_configs(self):
        with open(FLAGS.bazelrc) as f:
            lines = [l.split() for l in f.read().splitlines() if l and not l.startswith("#")]
        remote_cache = [l[1:] for l in lines if l[0] == "build:remote-cache"]
        remote = [l[1:] for l in lines if l[0] == "build:remote"]
        self.assertIn(["--remote_download_toplevel"], remote_cache)
        self.assertIn(["--config=remote-cache"], remote)
        # Bazel 4.2.3 refuses a disk cache beside remote execution.
        self.assertIn(["--disk_cache="], remote)
        self.assertIn(["--remote_local_fallback"], remote)
        # Action keys must not carry the caller's PATH for a cache to be shared.
        self.assertIn(["build", "--incompatible_strict_action_env"], lines)
        # The endpoints come from the environment only.
        for flag in ["--remote_cache=", "--remote_executor=", "--remote_header="]:
            self.assertFalse([l for l in lines if any(w.startswith(flag) for w in l)], flag)


if __name__ == "__main__":
    absltest.main()
