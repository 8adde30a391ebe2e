"""A remote execution grid on this machine, for trying --config=remote without a cluster
(grid.py): PostgreSQL, BuildGrid and N workers on free local ports under --dir. It prints the
endpoint, serves until interrupted, or runs a command with HK_REMOTE_EXECUTOR and
HK_REMOTE_INSTANCE set, and stops everything it started, pass or fail.

    bazel run //toolchains/remote:local_grid -- --dir=DIR --workers=2
    bazel run //toolchains/remote:local_grid -- --dir=DIR -- \\
        ./bazelw build --config=remote //kernels:rmsnorm_gfx1100
"""

import os
import signal
import subprocess
import sys
import time

from absl import app, flags

from hk.errors import ToolchainError
from toolchains.remote.grid import LocalGrid

FLAGS = flags.FLAGS
flags.DEFINE_string("dir", None, "where the database, the CAS, the workers' files and the logs go")
flags.DEFINE_integer("workers", 2, "workers started")
flags.DEFINE_string("instance", "hk", "the instance name")
flags.DEFINE_integer("port", 0, "the server's port (default: a free one)")
flags.DEFINE_string("python", os.environ.get("HK_BASE_PYTHON", "python3"),
                    "the interpreter BuildGrid's virtualenv is built from (3.11)")
flags.DEFINE_integer("keepalive", 10, "seconds before a silent worker's job is given to another")
flags.mark_flag_as_required("dir")


def main(argv):
    command = argv[1:]
    if FLAGS.workers < 1:
        raise app.UsageError("--workers must be at least 1")

    def stop_on_signal(signum, frame):
        raise KeyboardInterrupt

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop_on_signal)
    try:
        with LocalGrid(FLAGS.dir, workers=FLAGS.workers, instance=FLAGS.instance, python=FLAGS.python,
                       keepalive=FLAGS.keepalive, port=FLAGS.port) as grid:
            print("HK_REMOTE_EXECUTOR=%s HK_REMOTE_INSTANCE=%s" % (grid.endpoint, grid.instance), flush=True)
            if command:
                env = dict(os.environ, HK_REMOTE_EXECUTOR=grid.endpoint, HK_REMOTE_INSTANCE=grid.instance)
                # bazel run starts us in the runfiles: run the command where the user was.
                cwd = os.environ.get("BUILD_WORKING_DIRECTORY", os.getcwd())
                return subprocess.run(command, env=env, cwd=cwd).returncode
            print("local_grid: serving until interrupted (logs in %s)" % os.path.join(grid.dir, "logs"),
                  file=sys.stderr, flush=True)
            while True:
                for name, proc in grid.procs:
                    if proc.poll() is not None:
                        raise ToolchainError("%s exited (%d)" % (name, proc.returncode), hint="its log: %s" % grid.log(name))
                time.sleep(1)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    app.run(main)
