"""The kernel library for one target under remote execution, at full scale: a grid on this machine
(toolchains/remote/grid.py: PostgreSQL, BuildGrid, two workers) and two copies of this checkout,
each with a Bazel output base of its own and no disk cache (--config=remote has none), building
`//kernels:all --config=gfx1100` through ./bazelw as a user would:

1. the first copy from an empty CAS with --noremote_local_fallback: every action that is not
   Bazel's own runs on a worker (the dialect, its passes, the MLIR Python bindings, the emulator,
   every kernel's trace and compile); a worker is killed (SIGKILL) while it runs an action, which
   the grid gives to another worker, and the build passes with nothing run here;
2. the second copy: every one of those actions is a remote cache hit, nothing runs;
3. one kernel's source changed in the second copy: exactly its trace and its compile run.

Manual (not part of //...): it takes about five minutes on two cores and a few GB under
TEST_TMPDIR (the toolchains uploaded to the grid's CAS, two output bases):

    ./bazelw test //toolchains/tests:remote_library_test \\
        --test_env=HK_CACHE_DIR=$HOME/.cache/hk --test_env=HK_BASE_PYTHON=$(command -v python3)

With those two, the copies find the toolchain packages and the project's virtualenv where the
checkout's own ./bazelw put them; without them they fetch and build their own.
"""

import os
import shutil
import signal
import subprocess
import threading
import time

from absl.testing import absltest

from toolchains.remote.grid import LocalGrid
from toolchains.tests.bazel_output import processes

BUILD = ["build", "--config=remote", "--config=gfx1100", "--jobs=2", "--noremote_local_fallback", "//kernels:all"]
KERNEL = "examples/02_rmsnorm.py"                  # the library's rmsnorm, and nothing else of it
KERNEL_CO = "bazel-bin/kernels/rmsnorm.gfx1100.co"
BUILD_SECONDS = {"empty CAS": 1800, "cache": 900, "one kernel": 600}
KILL_AFTER = 60                                    # seconds into the first build


def checkout():
    """The checkout this test was built from: where its runfile README.md really is."""
    readme = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"], "README.md")
    return os.path.dirname(os.path.realpath(readme))


def copy_checkout(src, dst):
    """The checkout's files as they are (tracked, and untracked but not ignored), without its
    Bazel symlinks or anything it built."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=src,
                           check=True, stdout=subprocess.PIPE).stdout.decode().split("\0")
    for name in filter(None, files):
        path = os.path.join(src, name)
        if not os.path.lexists(path):
            continue                               # deleted in the working tree
        os.makedirs(os.path.dirname(os.path.join(dst, name)), exist_ok=True)
        shutil.copy2(path, os.path.join(dst, name), follow_symlinks=False)


class RemoteLibraryTest(absltest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = os.environ["TEST_TMPDIR"]
        cls.home = os.path.join(cls.tmp, "home")
        os.makedirs(cls.home)
        cls.cache = os.environ.get("HK_CACHE_DIR") or os.path.join(cls.tmp, "hk-cache")
        cls.copies = {}
        for name in ("first", "second"):
            cls.copies[name] = os.path.join(cls.tmp, name)
            copy_checkout(checkout(), cls.copies[name])
        cls.grid = LocalGrid(os.path.join(cls.tmp, "grid"), workers=2,
                             venv_root=os.path.join(cls.cache, "buildgrid"), keepalive=10)
        cls.grid.__enter__()

    @classmethod
    def tearDownClass(cls):
        try:
            for name in cls.copies:
                subprocess.run(cls.bazelw(name) + ["shutdown"], cwd=cls.copies[name], env=cls.env(), timeout=120)
        finally:
            cls.grid.stop()

    @classmethod
    def bazelw(cls, name):
        return [os.path.join(cls.copies[name], "bazelw"), "--output_user_root=" + os.path.join(cls.tmp, "root-" + name)]

    @classmethod
    def env(cls):
        env = {"PATH": "/usr/bin:/bin", "HOME": cls.home, "HK_CACHE_DIR": cls.cache,
               "HK_REMOTE_EXECUTOR": cls.grid.endpoint, "HK_REMOTE_INSTANCE": cls.grid.instance}
        for name in ("HK_BASE_PYTHON", "HK_BAZEL"):
            if os.environ.get(name):
                env[name] = os.environ[name]
        return env

    def build(self, name, step, during=None):
        """Builds the library in copy `name`; returns Bazel's process counts. `during(proc)` runs
        beside the build."""
        start = time.time()
        proc = subprocess.Popen(self.bazelw(name) + BUILD, cwd=self.copies[name], env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        helper = threading.Thread(target=during, args=(proc,), daemon=True) if during else None
        if helper:
            helper.start()
        try:
            out, _ = proc.communicate(timeout=BUILD_SECONDS[step])
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            self.fail("%s: the build did not finish within %d s\n%s\n%s"
                      % (step, BUILD_SECONDS[step], out[-5000:], self.grid.tails()))
        if helper:
            helper.join()
        self.assertEqual(proc.returncode, 0, "%s:\n%s" % (step, out[-5000:]))
        counts, line = processes(out)
        print("%s: %s in %.0f s" % (step, line, time.time() - start), flush=True)
        return counts

    def kill_a_worker_mid_action(self, build):
        """Once the build has run KILL_AFTER seconds, kills the first worker to take a new action
        the moment it takes it, and starts another in its place."""
        deadline = time.time() + KILL_AFTER
        while time.time() < deadline and build.poll() is None:
            time.sleep(1)
        before = [len(self.grid.leases(i)) for i in range(len(self.grid.workers))]
        while build.poll() is None:
            for i in range(len(before)):
                taken = self.grid.leases(i)
                if len(taken) > before[i]:
                    self.grid.workers[i].send_signal(signal.SIGKILL)
                    self.killed = (i, taken[-1])
                    self.grid.add_worker()
                    return
            time.sleep(0.05)

    def test_library_remotely_then_from_the_cache_then_one_kernel(self):
        # 1. Empty CAS: everything on the workers, one of them killed mid-action.
        self.killed = None
        first = self.build("first", "empty CAS", during=self.kill_a_worker_mid_action)
        self.assertEqual(set(first) - {"internal"}, {"remote"}, first)   # nothing ran here
        self.assertGreater(first["remote"], 50, first)
        self.assertIsNotNone(self.killed, "the build ended before a worker could be killed")
        victim, lease = self.killed
        others = [i for i in range(len(self.grid.workers)) if i != victim]
        retried = [i for i in others if lease in self.grid.leases(i)]
        print("worker%d killed holding lease %s; retried by worker%s" % (victim, lease, retried), flush=True)
        self.assertNotEqual(retried, [], "the killed worker's action was not given to another worker")
        subprocess.run(self.bazelw("first") + ["shutdown"], cwd=self.copies["first"], env=self.env(), timeout=120)

        # 2. Another copy, its own output base: every action a remote cache hit.
        second = self.build("second", "cache")
        self.assertEqual(set(second) - {"internal"}, {"remote cache hit"}, second)
        self.assertEqual(second["remote cache hit"], first["remote"], second)
        co = os.path.join(self.copies["second"], KERNEL_CO)
        with open(co, "rb") as f:
            before = f.read()

        # 3. One kernel's source changed: its trace and its compile, nothing else.
        path = os.path.join(self.copies["second"], KERNEL)
        with open(path) as f:
            source = f.read()
        changed = source.replace("+ eps)", "+ eps * 0.5)")
        self.assertNotEqual(changed, source, "%s no longer has the line this test changes" % KERNEL)
        with open(path, "w") as f:
            f.write(changed)
        third = self.build("second", "one kernel")
        self.assertEqual(third, {"internal": third.get("internal", 0), "remote": 2}, third)
        with open(co, "rb") as f:
            self.assertNotEqual(f.read(), before, "the changed kernel's code object is the old one")


if __name__ == "__main__":
    absltest.main()
