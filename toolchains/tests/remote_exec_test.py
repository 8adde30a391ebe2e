"""Remote execution end to end: a grid on this machine (toolchains/remote/grid.py: PostgreSQL,
BuildGrid, two workers) and a nested Bazel building a small workspace made here with
--remote_executor. From an empty CAS every action runs remotely; after a clean every one is a
remote cache hit; an edited input re-runs exactly the actions that read it; a worker killed in
the middle of an action does not fail the build, and one that joins while an action waits runs
it; a blob damaged in the CAS is never taken for an output.

It installs BuildGrid from PyPI (under TEST_TMPDIR, or $HK_CACHE_DIR/buildgrid when the runner
passes HK_CACHE_DIR with --test_env) and PostgreSQL with apt-get when missing."""

import glob
import hashlib
import os
import pathlib
import shutil
import signal
import subprocess
import textwrap
import time
import uuid

from absl.testing import absltest

from toolchains.remote.grid import LocalGrid
from toolchains.tests.bazel_output import processes

# Four generated files from three inputs, one through a declared tool; `slow` runs long enough
# to lose its worker.
BUILD = """
[genrule(
    name = "upper_%d" % i,
    srcs = ["in_%d.txt" % i],
    outs = ["upper_%d.txt" % i],
    cmd = "$(location :upper.sh) < $< > $@",
    tools = [":upper.sh"],
) for i in (1, 2, 3)]

genrule(
    name = "joined",
    srcs = [":upper_1", ":upper_2", ":upper_3"],
    outs = ["joined.txt"],
    cmd = "cat $(SRCS) > $@",
)

genrule(
    name = "plain",
    srcs = ["plain_in.txt"],
    outs = ["plain.txt"],
    cmd = "$(location :upper.sh) < $< > $@",
    tools = [":upper.sh"],
    tags = ["manual"],
)

genrule(
    name = "slow",
    srcs = ["slow_in.txt"],
    outs = ["slow.txt"],
    cmd = "sleep 12; cat $< > $@",
    tags = ["manual"],
)
"""


# Each nested build is small: a stall is cut here, with the logs, well inside the test's timeout.
BUILD_SECONDS = 150


def summary(output):
    """(remote, remote cache hit) counts of Bazel's `N processes: ...` line, and the line."""
    counts, line = processes(output)
    return counts.get("remote", 0), counts.get("remote cache hit", 0), line


class RemoteExecTest(absltest.TestCase):

    @classmethod
    def setUpClass(cls):
        tmp = os.environ["TEST_TMPDIR"]
        cls.ws = os.path.join(tmp, "ws")
        os.makedirs(cls.ws)
        with open(os.path.join(cls.ws, "WORKSPACE"), "w") as f:
            f.write('workspace(name = "remote_exec_test")\n')
        with open(os.path.join(cls.ws, "BUILD"), "w") as f:
            f.write(textwrap.dedent(BUILD))
        upper = os.path.join(cls.ws, "upper.sh")
        with open(upper, "w") as f:
            f.write("#!/bin/sh\ntr a-z A-Z\n")
        os.chmod(upper, 0o755)
        for i in (1, 2, 3):
            cls.write("in_%d.txt" % i, "input %d\n" % i)
        cls.home = os.path.join(tmp, "home")
        os.makedirs(cls.home)
        cls.bazel = os.environ.get("HK_BAZEL") or shutil.which("bazel")
        cache = os.environ.get("HK_CACHE_DIR")
        venvs = os.path.join(cache, "buildgrid") if cache else os.path.join(tmp, "buildgrid-venv")
        cls.grid = LocalGrid(os.path.join(tmp, "grid"), workers=2, venv_root=venvs, keepalive=5, verbose=True)
        cls.grid.__enter__()

    @classmethod
    def tearDownClass(cls):
        try:
            subprocess.run(cls.startup() + ["shutdown"], cwd=cls.ws, timeout=120)
        finally:
            cls.grid.stop()

    @classmethod
    def write(cls, name, text):
        with open(os.path.join(cls.ws, name), "w") as f:
            f.write(text)

    @classmethod
    def startup(cls):
        # The system rc stays: Debian's Bazel finds its install base through it.
        return [cls.bazel, "--nohome_rc",
                "--output_user_root=" + os.path.join(os.environ["TEST_TMPDIR"], "bazel-root")]

    def bazel_cmd(self, *args):
        return self.startup() + list(args) + [
            "--remote_executor=" + self.grid.endpoint, "--remote_instance_name=" + self.grid.instance,
            "--incompatible_strict_action_env", "--jobs=2", "--remote_local_fallback", "--nosandbox_debug"]

    def env(self):
        return {"PATH": "/usr/bin:/bin", "HOME": self.home, "TEST_TMPDIR": os.environ["TEST_TMPDIR"]}

    def run_build(self, *targets, during=None):
        """Builds `targets` on the grid and returns Bazel's output; `during(build)`, when given,
        is called while the build runs (to act on the grid as its actions reach it)."""
        build = subprocess.Popen(self.bazel_cmd("build", *targets), cwd=self.ws, env=self.env(),
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        try:
            if during:
                during(build)
            out, _ = build.communicate(timeout=BUILD_SECONDS)
        except subprocess.TimeoutExpired:
            build.kill()
            self.stalled("build " + " ".join(targets), build.communicate()[0])
        finally:
            if build.poll() is None:  # `during` failed: its server would go on building
                build.kill()
                self.kill_servers()
        self.assertEqual(build.returncode, 0, out)
        return out

    def stalled(self, what, out):
        """Fails with what the stalled build, the grid and the nested Bazel server logged, after
        stopping that server (it would hold its lock and stall the next test's builds too)."""
        saved = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
        logs = [self.grid.log(name) for name, _ in self.grid.procs]
        logs += glob.glob(os.path.join(os.environ["TEST_TMPDIR"], "bazel-root", "*", "java.log"))
        self.kill_servers()
        tails = []
        for log in logs:
            if saved:
                shutil.copy(log, os.path.join(saved, os.path.basename(os.path.dirname(log)) + "-" + os.path.basename(log)))
            tails.append("== %s\n%s" % (log, pathlib.Path(log).read_text()[-3000:]))
        self.fail("%s did not finish within %d s\n%s\n%s" % (what, BUILD_SECONDS, out, "\n".join(tails)))

    @staticmethod
    def kill_servers():
        """Kills the nested Bazel servers, which a killed client leaves building."""
        for pid_file in glob.glob(os.path.join(os.environ["TEST_TMPDIR"], "bazel-root", "*", "server", "server.pid.txt")):
            try:
                os.kill(int(pathlib.Path(pid_file).read_text()), signal.SIGKILL)
            except (OSError, ValueError):
                pass

    def build(self, *targets):
        counts = summary(self.run_build(*targets))
        print("build", " ".join(targets), "->", counts[2], flush=True)
        return counts

    def output(self, name):
        with open(os.path.join(self.ws, "bazel-bin", name)) as f:
            return f.read()

    def wait_for(self, condition, what, seconds=60):
        """Waits until `condition` holds of the scheduler's state."""
        deadline = time.time() + seconds
        while not condition(self.grid.scheduler_state()):
            if time.time() > deadline:
                self.fail("waited %d s for %s: %s" % (seconds, what, self.grid.scheduler_state()))
            time.sleep(0.2)

    def test_remote_then_cached_then_incremental(self):
        remote, hits, line = self.build("//:joined")
        self.assertEqual((remote, hits), (4, 0), line)  # three upper_* and joined, on the grid
        self.assertEqual(self.output("joined.txt"), "INPUT 1\nINPUT 2\nINPUT 3\n")
        workers_used = [i for i in range(2) if self.grid.leases(i)]
        self.assertNotEqual(workers_used, [])

        subprocess.run(self.startup() + ["clean"], cwd=self.ws, env=self.env(), check=True)
        remote, hits, line = self.build("//:joined")
        self.assertEqual((remote, hits), (0, 4), line)
        self.assertEqual(self.output("joined.txt"), "INPUT 1\nINPUT 2\nINPUT 3\n")

        self.write("in_2.txt", "edited %s\n" % uuid.uuid4().hex[:8])
        remote, hits, line = self.build("//:joined")
        self.assertEqual((remote, hits), (2, 0), line)  # upper_2 and joined, nothing else
        self.assertIn("EDITED", self.output("joined.txt").splitlines()[1])

    def test_corrupt_blob_not_taken(self):
        token = uuid.uuid4().hex
        self.write("plain_in.txt", token + "\n")  # never built before: no cache hit
        remote, hits, line = self.build("//:plain")
        self.assertEqual((remote, hits), (1, 0), line)
        expected = token.upper() + "\n"
        subprocess.run(self.startup() + ["clean"], cwd=self.ws, env=self.env(), check=True)
        self.assertEqual(self.build("//:plain")[:2], (0, 1))  # intact: a remote cache hit
        # The grid's disk storage keeps a blob under its SHA-256: overwrite the output's bytes.
        digest = hashlib.sha256(expected.encode()).hexdigest()
        blob = os.path.join(self.grid.dir, "cas", "cas", "objects", digest[:2], digest[2:])
        self.assertTrue(os.path.exists(blob), blob)
        with open(blob, "w") as f:
            f.write("X" * len(expected))
        subprocess.run(self.startup() + ["clean"], cwd=self.ws, env=self.env(), check=True)
        out = self.run_build("//:plain")
        # Bazel checks the digest of what it downloads: the damaged blob is no cache hit, and the
        # action runs again (here, by --remote_local_fallback: the grid still holds the bad blob).
        line = summary(out)[2]
        print("corrupt blob ->", line, flush=True)
        self.assertNotIn("remote cache hit", line)
        self.assertRegex(line, r"1 (remote|local|linux-sandbox|processwrapper-sandbox)\b")
        self.assertEqual(self.output("plain.txt"), expected)

    def test_worker_joining_takes_the_waiting_action(self):
        # No worker alive, an action queued: the first worker to open a session is given it with
        # the session, and must run it (the build waited forever when that lease was dropped).
        for proc in self.grid.workers:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        self.wait_for(lambda s: s["bots"] == 0, "the killed workers' sessions to close")
        token = uuid.uuid4().hex
        self.write("plain_in.txt", token + "\n")  # never built before: no cache hit
        joined = len(self.grid.workers)

        def join(_):
            self.wait_for(lambda s: s["queued"] == 1, "the action to be queued")
            self.grid.add_worker()

        out = self.run_build("//:plain", during=join)
        self.assertEqual(self.output("plain.txt"), token.upper() + "\n")
        line = summary(out)[2]
        print("worker%d joined with an action queued ->" % joined, line, flush=True)
        self.assertRegex(line, r"\b1 remote\b")
        self.assertEqual(len(self.grid.leases(joined)), 1)
        self.grid.add_worker()  # two again, for the tests after this one
        for i in (joined, joined + 1):
            self.grid.wait_worker(i)

    def test_worker_killed_mid_action(self):
        token = uuid.uuid4().hex
        self.write("slow_in.txt", token + "\n")  # never built before: no cache hit
        before = [len(self.grid.leases(i)) for i in range(len(self.grid.workers))]
        killed = []

        def kill_the_worker_taking_it(build):
            deadline = time.time() + 120
            while not killed and time.time() < deadline and build.poll() is None:
                killed.extend(i for i in range(len(before))
                              if self.grid.workers[i].poll() is None and len(self.grid.leases(i)) > before[i])
                time.sleep(0.2)
            self.assertTrue(killed, "no worker took the slow action")
            self.grid.workers[killed[0]].send_signal(signal.SIGKILL)

        out = self.run_build("//:slow", during=kill_the_worker_taking_it)
        self.assertEqual(self.output("slow.txt"), token + "\n")
        _, _, line = summary(out)
        print("worker%d killed mid-action ->" % killed[0], line, flush=True)
        # Retried by the surviving worker once the grid drops the silent one, or run here.
        self.assertRegex(line, r"1 (remote|local|linux-sandbox|processwrapper-sandbox)\b")
        self.grid.add_worker()  # the other test may run after this one
        self.grid.wait_worker(len(self.grid.workers) - 1)


if __name__ == "__main__":
    absltest.main()
