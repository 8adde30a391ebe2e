"""A remote execution worker for BuildGrid: it opens a bot session over the Remote Workers API
(google.devtools.remoteworkers.v1test2), takes the leases the scheduler assigns it, runs each
action (action.py) and reports its ActionResult in the lease. It runs in BuildGrid's own
environment, whose generated modules it speaks through.

    python worker.py --server=grpc://127.0.0.1:50051 --instance=hk --work_dir=DIR
"""

import concurrent.futures
import os
import signal
import time
import uuid

from absl import app, flags, logging
import grpc

from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2
from buildgrid._protos.google.devtools.remoteworkers.v1test2 import bots_pb2, bots_pb2_grpc, worker_pb2
from buildgrid._protos.google.rpc import code_pb2, status_pb2

import action as action_lib
from cas import Cas

FLAGS = flags.FLAGS
flags.DEFINE_string("server", None, "the grid's endpoint, grpc://HOST:PORT")
flags.DEFINE_string("instance", "", "the instance name")
flags.DEFINE_string("work_dir", None, "where actions run and fetched inputs are kept")
flags.DEFINE_string("bot_id", None, "this worker's name (default: host and process id)")
flags.DEFINE_integer("capacity", 1, "actions run at once")
flags.DEFINE_multi_string("property", ["OSFamily=linux"], "a NAME=VALUE platform property served")
flags.DEFINE_float("poll_seconds", 1.0, "how often a running lease is reported, keeping the session")
flags.mark_flags_as_required(["server", "work_dir"])

LEASE = bots_pb2.LeaseState
RETRIED = (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class Worker:

    def __init__(self, channel, instance, work_dir, bot_id, capacity, properties):
        self.stub = bots_pb2_grpc.BotsStub(channel)
        self.instance = instance
        self.cas = Cas(channel, instance, os.path.join(work_dir, "cache"))
        self.actions_dir = os.path.join(work_dir, "actions")
        os.makedirs(self.actions_dir, exist_ok=True)
        self.bot_id = bot_id
        self.pool = concurrent.futures.ThreadPoolExecutor(capacity)
        device = worker_pb2.Device(handle=bot_id)
        for prop in properties:
            key, _, value = prop.partition("=")
            device.properties.add(key=key, value=value)
        self.session = bots_pb2.BotSession(bot_id=bot_id, status=bots_pb2.BotStatus.OK,
                                           worker=worker_pb2.Worker(devices=[device]))
        # How many leases the scheduler gives the session at once.
        self.session.worker.configs.add(key="capacity", value=str(capacity))
        self.running = {}  # lease id -> Future of its ActionResult

    def _execute(self, lease):
        if lease.payload.Is(re_pb2.Action.DESCRIPTOR):
            act = re_pb2.Action()
            lease.payload.Unpack(act)
        else:
            digest = re_pb2.Digest()
            lease.payload.Unpack(digest)
            act = self.cas.message(digest, re_pb2.Action)
        return action_lib.run(self.cas, act, self.actions_dir, self.bot_id)

    def _report(self):
        """The session's leases as this worker holds them: finished ones COMPLETED with their
        result (or the error as their status), the others ACTIVE."""
        leases, done = [], []
        for lease_id, future in self.running.items():
            lease = bots_pb2.Lease(id=lease_id, state=LEASE.ACTIVE)
            if future.done():
                lease.state = LEASE.COMPLETED
                error = future.exception()
                if error is None:
                    lease.result.Pack(future.result())
                    lease.status.CopyFrom(status_pb2.Status(code=code_pb2.OK))
                else:
                    logging.error("lease %s failed: %s", lease_id, error)
                    # UNAVAILABLE: the scheduler retries the job (on another worker).
                    lease.status.CopyFrom(status_pb2.Status(code=code_pb2.UNAVAILABLE, message=str(error)))
                done.append(lease_id)
            leases.append(lease)
        return leases, done

    @staticmethod
    def _call(method, request, **kw):
        """`method(request)`, retried while the server is busy or briefly away."""
        for attempt in range(60):
            try:
                return method(request, **kw)
            except grpc.RpcError as e:
                if e.code() not in RETRIED or attempt == 59:
                    raise
                logging.warning("%s, retrying", e.code())
                time.sleep(min(5.0, 0.2 * (attempt + 1)))

    def _take(self):
        """Starts the session's new ACTIVE leases and forgets its CANCELLED ones."""
        for lease in self.session.leases:
            if lease.state == LEASE.ACTIVE and lease.id not in self.running:
                logging.info("lease %s", lease.id)
                self.running[lease.id] = self.pool.submit(self._execute, lease)
            elif lease.state == LEASE.CANCELLED:
                self.running.pop(lease.id, None)

    def serve(self):
        self.session = self._call(self.stub.CreateBotSession, bots_pb2.CreateBotSessionRequest(
            parent=self.instance, bot_session=self.session))
        logging.info("bot session %s", self.session.name)
        # A job waiting when the session opens comes with it: the server has counted it as this
        # bot's (and the session's version with it), so it would not be offered again.
        self._take()
        while True:
            leases, done = self._report()
            del self.session.leases[:]
            self.session.leases.extend(leases)
            self.session = self._call(self.stub.UpdateBotSession, bots_pb2.UpdateBotSessionRequest(
                name=self.session.name, bot_session=self.session), timeout=60)
            for lease_id in done:
                del self.running[lease_id]
            self._take()
            if self.running:
                # Busy: report the running leases again soon (the scheduler drops a silent bot),
                # or at once when one finishes.
                concurrent.futures.wait(list(self.running.values()), timeout=FLAGS.poll_seconds,
                                        return_when=concurrent.futures.FIRST_COMPLETED)


def main(argv):
    del argv
    target = FLAGS.server
    if not target.startswith("grpc://"):
        raise app.UsageError("--server must be grpc://HOST:PORT, not %r" % target)
    for prop in FLAGS.property:
        if "=" not in prop or prop.startswith("="):
            raise app.UsageError("--property takes NAME=VALUE, not %r" % prop)
    channel = grpc.insecure_channel(target[len("grpc://"):], options=[
        ("grpc.max_receive_message_length", 64 << 20), ("grpc.max_send_message_length", 64 << 20)])
    bot_id = FLAGS.bot_id or "%s-%d-%s" % (os.uname().nodename, os.getpid(), uuid.uuid4().hex[:6])
    worker = Worker(channel, FLAGS.instance, FLAGS.work_dir, bot_id, FLAGS.capacity, FLAGS.property)
    # Stopped at once: a lease it held is given to another worker once the grid notices.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: os._exit(0))
    worker.serve()


if __name__ == "__main__":
    app.run(main)
