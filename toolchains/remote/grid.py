"""A remote execution grid on this machine: PostgreSQL, a BuildGrid server (execution, CAS,
action cache) and N workers (worker.py), on free local ports, everything under one directory,
stopped together. local_grid.py is its command line.

BuildGrid 0.4.4 is installed from PyPI into its own virtualenv ($HK_CACHE_DIR/buildgrid/KEY),
and Debian's postgresql with apt-get when no PostgreSQL server is found.
"""

import contextlib
import glob
import hashlib
import os
import re
import shutil
import signal
import socket
import string
import subprocess
import sys
import time

from hk.errors import ToolchainError

HERE = os.path.dirname(os.path.abspath(__file__))
# The grid's environment: BuildGrid with its PostgreSQL driver, and absl for the worker's flags.
PINS = ["buildgrid[database]==0.4.4", "absl-py==2.5.1"]


def _cache_root():
    root = os.environ.get("HK_CACHE_DIR")
    if root:
        return root
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "hk")


def grid_python(base_python, root=None):
    """The interpreter of BuildGrid's virtualenv under `root`, built from `base_python` if missing.
    It is marked complete last: a crash leaves an environment that the next call rebuilds."""
    base = shutil.which(base_python)
    if not base:
        raise ToolchainError("no Python interpreter %r to build BuildGrid's environment from" % base_python,
                             hint="install Python 3.11 or pass --python")
    key = hashlib.sha256(("\n".join(PINS) + "\n" + os.path.realpath(base)).encode()).hexdigest()[:16]
    venv = os.path.join(root or os.path.join(_cache_root(), "buildgrid"), key)
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(os.path.join(venv, ".hk-complete")):
        return python
    shutil.rmtree(venv, ignore_errors=True)
    print("local_grid: installing %s into %s" % (", ".join(PINS), venv), file=sys.stderr)
    subprocess.run([base, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q"] + PINS, check=True)
    open(os.path.join(venv, ".hk-complete"), "w").close()
    return python


def postgres_bin():
    """The directory of PostgreSQL's server programs, installing Debian's postgresql if none."""
    for _ in range(2):
        found = shutil.which("pg_ctl")
        if found:
            return os.path.dirname(os.path.realpath(found))
        dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]))
        if dirs:
            return dirs[-1]
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        print("local_grid: installing postgresql with apt-get", file=sys.stderr)
        subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True)
        subprocess.run(sudo + ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq",
                               "postgresql"], check=True)
    raise ToolchainError("postgresql installed, but no pg_ctl found under /usr/lib/postgresql")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port, proc, what, log, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise ToolchainError("%s exited (%d) while starting" % (what, proc.returncode),
                                 hint="its log: %s" % log)
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise ToolchainError("%s did not listen on port %d within %ds" % (what, port, seconds), hint="its log: %s" % log)


class LocalGrid(contextlib.AbstractContextManager):
    """PostgreSQL + BuildGrid + `workers` workers under `directory` while in a `with` block.
    `endpoint` and `instance` are what Bazel's --remote_executor and --remote_instance_name take."""

    def __init__(self, directory, workers=2, instance="hk", python="python3", venv_root=None,
                 keepalive=10, port=0, verbose=False):
        self.dir = os.path.abspath(directory)
        self.n_workers = workers
        self.instance = instance
        self.python = python
        self.venv_root = venv_root
        self.keepalive = keepalive
        self.verbose = verbose  # the server logs each request (for diagnosing a stalled build)
        self.port = port or free_port()
        self.endpoint = "grpc://127.0.0.1:%d" % self.port
        self.procs = []  # (name, Popen), in start order
        self.workers = []
        self.pg_port = None

    def log(self, name):
        return os.path.join(self.dir, "logs", name + ".log")

    def leases(self, i):
        """The ids of the leases worker `i` took, in order (worker.py logs each as it takes it)."""
        with open(self.log("worker%d" % i)) as f:
            return re.findall(r"\blease ([0-9a-f-]+)$", f.read(), re.MULTILINE)

    def scheduler_state(self):
        """What the scheduler's database holds: {"queued": jobs waiting for a worker, "executing":
        jobs held by one, "bots": open bot sessions}."""
        # A job's stage is REAPI's ExecutionStage: 2 QUEUED, 3 EXECUTING.
        query = ("select (select count(*) from jobs where stage = 2 and not cancelled), "
                 "(select count(*) from jobs where stage = 3 and not cancelled), (select count(*) from bots)")
        out = subprocess.run([os.path.join(postgres_bin(), "psql"), "-h", "127.0.0.1", "-p", str(self.pg_port),
                              "-U", "bgd", "-d", "postgres", "-tA", "-F", " ", "-c", query],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if out.returncode != 0:
            raise ToolchainError("could not read the grid's database: %s" % out.stdout.strip())
        queued, executing, bots = (int(n) for n in out.stdout.split())
        return {"queued": queued, "executing": executing, "bots": bots}

    def tails(self, chars=2000):
        """The last `chars` characters of each process's log, for a failure's message."""
        parts = []
        for name, _ in self.procs:
            with open(self.log(name)) as f:
                parts.append("== %s\n%s" % (name, f.read()[-chars:]))
        return "\n".join(parts)

    def _start(self, name, argv, **kw):
        with open(self.log(name), "ab") as log:
            # A session of its own: a Ctrl-C at the terminal reaches this process, which stops
            # the others in order.
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, **kw)
        self.procs.append((name, proc))
        return proc

    def __enter__(self):
        try:
            self._up()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _up(self):
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        python = grid_python(self.python, self.venv_root)
        pg = postgres_bin()
        # PostgreSQL refuses to run as root: as root, it runs in a user namespace where it is an
        # ordinary user (and the files it writes are still root's outside).
        as_user = ["unshare", "--user", "--map-user=1000", "--map-group=1000"] if os.geteuid() == 0 else []
        data = os.path.join(self.dir, "pgdata")
        shutil.rmtree(data, ignore_errors=True)
        with open(self.log("initdb"), "wb") as log:
            subprocess.run(as_user + [os.path.join(pg, "initdb"), "-D", data, "-A", "trust", "-U", "bgd",
                                      "--no-sync"], check=True, stdout=log, stderr=subprocess.STDOUT)
        self.pg_port = pg_port = free_port()
        # TCP only (-k ""): a Unix socket's path is limited to 107 bytes, which a deep
        # directory (a test's) exceeds.
        postgres = self._start("postgres", as_user + [os.path.join(pg, "postgres"), "-D", data, "-k", "",
                                                      "-p", str(pg_port), "-h", "127.0.0.1", "-F"])
        _wait_port(pg_port, postgres, "PostgreSQL", self.log("postgres"))
        url = "postgresql+psycopg2://bgd@127.0.0.1:%d/postgres" % pg_port
        bgd = os.path.join(os.path.dirname(python), "bgd")
        for attempt in range(20):  # the port listens a little before connections are accepted
            with open(self.log("migrate"), "ab") as log:
                if subprocess.run([bgd, "migrate", "apply", url], stdout=log, stderr=subprocess.STDOUT).returncode == 0:
                    break
            time.sleep(0.5)
        else:
            raise ToolchainError("BuildGrid's database migration failed", hint="its log: %s" % self.log("migrate"))
        with open(os.path.join(HERE, "buildgrid.yml.in")) as f:
            config = string.Template(f.read()).substitute(
                port=self.port, pg_port=pg_port, cas_dir=os.path.join(self.dir, "cas"),
                instance=self.instance, keepalive=self.keepalive)
        config_path = os.path.join(self.dir, "buildgrid.yml")
        with open(config_path, "w") as f:
            f.write(config)
        server = self._start("buildgrid", [bgd, "server", "start"] + ["-v"] * self.verbose + [config_path])
        _wait_port(self.port, server, "BuildGrid", self.log("buildgrid"))
        for i in range(self.n_workers):
            self.add_worker(python)
        # Ready when every worker holds its bot session: a build started earlier would have its
        # first actions queued while the pool is still forming.
        for i in range(self.n_workers):
            self.wait_worker(i)

    def add_worker(self, python=None):
        i = len(self.workers)
        python = python or grid_python(self.python, self.venv_root)
        proc = self._start("worker%d" % i, [
            python, os.path.join(HERE, "worker.py"), "--server=" + self.endpoint, "--instance=" + self.instance,
            "--work_dir=" + os.path.join(self.dir, "worker%d" % i), "--bot_id=worker%d" % i])
        self.workers.append(proc)
        return proc

    def wait_worker(self, i, seconds=120):
        """Waits until worker `i` has its bot session (worker.py logs it)."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if self.workers[i].poll() is not None:
                raise ToolchainError("worker%d exited (%d) while starting" % (i, self.workers[i].returncode),
                                     hint="its log: %s" % self.log("worker%d" % i))
            with open(self.log("worker%d" % i)) as f:
                if "bot session" in f.read():
                    return
            time.sleep(0.2)
        raise ToolchainError("worker%d got no bot session within %ds" % (i, seconds),
                             hint="its log: %s; the server's: %s" % (self.log("worker%d" % i), self.log("buildgrid")))

    def stop(self):
        """Stops what was started: the workers and the server, then PostgreSQL (which the server
        needs until it exits)."""
        procs, self.procs = self.procs, []
        for group in ([p for n, p in procs if n != "postgres"], [p for n, p in procs if n == "postgres"]):
            for proc in group:
                if proc.poll() is None:
                    # SIGTERM (SIGINT may be ignored, inherited from a background shell); it is
                    # also PostgreSQL's smart shutdown, and no client is left by then.
                    proc.terminate()
            for proc in group:
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
