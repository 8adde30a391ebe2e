"""bazelw, with a stand-in for Bazel: it passes the arguments through, exports the project's
interpreter, and points Bazel's disk cache under HK_CACHE_DIR (the file .bazelrc imports, rewritten
only when the cache root moves)."""

import hashlib
import os
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

    def bazelw(self, cache, *args):
        env = dict(os.environ, HK_CACHE_DIR=cache, HK_BAZEL=self.bazel, HK_BASE_PYTHON="python3",
                   HOME=os.path.join(self.tmp, "home"))
        result = subprocess.run([os.path.join(self.ws, "bazelw")] + list(args), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        self.assertEqual(result.returncode, 0, result.stdout)
        return result.stdout

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
        self.assertNotIn("--disk_cache=", "\n".join(l for l in text.splitlines() if not l.startswith("#")))


if __name__ == "__main__":
    absltest.main()
