"""Runs one REAPI action as a remote worker would: in a fresh directory holding only the action's
input root, with only the environment its Command declares, then uploads the outputs the Command
names and returns the ActionResult."""

import os
import shutil
import socket
import subprocess
import time
import uuid

from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2

from cas import digest_of, digest_of_file


def _now(ts):
    ts.FromNanoseconds(time.time_ns())


def run(cas, action, work_dir, worker_name):
    """The ActionResult of `action` (an Action message), run under a new directory in `work_dir`."""
    result = re_pb2.ActionResult()
    meta = result.execution_metadata
    meta.worker = worker_name or socket.gethostname()
    _now(meta.worker_start_timestamp)
    command = cas.message(action.command_digest, re_pb2.Command)
    base = os.path.join(work_dir, uuid.uuid4().hex)
    root = os.path.join(base, "root")
    try:
        _now(meta.input_fetch_start_timestamp)
        cas.stage(action.input_root_digest, root)
        _now(meta.input_fetch_completed_timestamp)
        cwd = os.path.join(root, command.working_directory)
        outputs = list(command.output_files) + list(command.output_directories) + list(command.output_paths)
        for out in outputs:
            # The parents of the outputs exist before the command runs (REAPI's contract).
            os.makedirs(os.path.dirname(os.path.join(cwd, out)), exist_ok=True)
        env = {v.name: v.value for v in command.environment_variables}
        timeout = action.timeout.ToSeconds() or None
        stdout_path, stderr_path = os.path.join(base, "stdout"), os.path.join(base, "stderr")
        _now(meta.execution_start_timestamp)
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            try:
                # The program is resolved the way a worker's execve would: a relative path from
                # the working directory, a bare name on the action's PATH.
                proc = subprocess.run(list(command.arguments), cwd=cwd, env=env, stdout=out,
                                      stderr=err, stdin=subprocess.DEVNULL, timeout=timeout)
                result.exit_code = proc.returncode
            except subprocess.TimeoutExpired:
                err.write(b"worker: the action ran past its timeout of %ds\n" % timeout)
                result.exit_code = 124
            except OSError as e:
                err.write(("worker: cannot start %s: %s\n" % (command.arguments[0], e)).encode())
                result.exit_code = 127
        _now(meta.execution_completed_timestamp)
        _now(meta.output_upload_start_timestamp)
        blobs = {}
        for name, path in (("stdout", stdout_path), ("stderr", stderr_path)):
            digest = digest_of_file(path)
            blobs[digest.hash] = (digest, path)
            getattr(result, name + "_digest").CopyFrom(digest)
        # A failed action's outputs are returned too: Bazel shows them to debug it.
        _collect(cas, cwd, command, result, blobs)
        cas.upload(blobs)
        _now(meta.output_upload_completed_timestamp)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    _now(meta.worker_completed_timestamp)
    return result


def _collect(cas, cwd, command, result, blobs):
    """Adds the outputs the command wrote to `result` (a missing one is left out, as REAPI says)."""
    files = list(command.output_files)
    dirs = list(command.output_directories)
    for p in command.output_paths:
        (dirs if os.path.isdir(os.path.join(cwd, p)) else files).append(p)
    for rel in files:
        path = os.path.join(cwd, rel)
        if not os.path.isfile(path):
            continue
        digest = digest_of_file(path)
        blobs[digest.hash] = (digest, path)
        result.output_files.add(path=rel, digest=digest, is_executable=os.access(path, os.X_OK))
    for rel in dirs:
        path = os.path.join(cwd, rel)
        if not os.path.isdir(path):
            continue
        tree = cas.tree_of(path, blobs)
        data = tree.SerializeToString()
        digest = digest_of(data)
        blobs[digest.hash] = (digest, data)
        result.output_directories.add(path=rel, tree_digest=digest)
