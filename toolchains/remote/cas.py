"""The worker's side of the content-addressable storage: staging an action's input root from its
digest, and uploading what the action wrote (blobs and output trees). It speaks REAPI v2 and
ByteStream through BuildGrid's generated modules (the worker runs in BuildGrid's environment)."""

import hashlib
import os
import shutil
import uuid

from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2_grpc as re_grpc
from buildgrid._protos.google.bytestream import bytestream_pb2, bytestream_pb2_grpc

# Blobs up to this size travel in batches; larger ones stream (gRPC's default message limit is
# 4 MiB, and a batch carries several).
BATCH_BYTES = 1 << 20
CHUNK = 1 << 20


def digest_of(data):
    return re_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))


def digest_of_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return re_pb2.Digest(hash=h.hexdigest(), size_bytes=os.path.getsize(path))


class Cas:
    """One instance's CAS on a channel. `cache_dir` keeps every file fetched, by digest, so an
    input seen before is hard-linked into the next input root rather than fetched again."""

    def __init__(self, channel, instance, cache_dir):
        self.instance = instance
        self.cas = re_grpc.ContentAddressableStorageStub(channel)
        self.bytestream = bytestream_pb2_grpc.ByteStreamStub(channel)
        self.cache_dir = cache_dir
        os.makedirs(cache_dir, exist_ok=True)

    # Reading.

    def read(self, digest):
        return self.read_many([digest])[digest.hash]

    def read_many(self, digests):
        """{hash: bytes} of the blobs, batched when small."""
        out, batch, size = {}, [], 0
        for d in {d.hash: d for d in digests}.values():
            if d.size_bytes > BATCH_BYTES:
                out[d.hash] = b"".join(self._stream(d))
                continue
            if size + d.size_bytes > BATCH_BYTES and batch:
                out.update(self._batch_read(batch))
                batch, size = [], 0
            batch.append(d)
            size += d.size_bytes
        if batch:
            out.update(self._batch_read(batch))
        return out

    def _batch_read(self, digests):
        reply = self.cas.BatchReadBlobs(re_pb2.BatchReadBlobsRequest(
            instance_name=self.instance, digests=digests))
        out = {}
        for r in reply.responses:
            if r.status.code != 0:
                raise IOError("CAS has no blob %s/%d: %s" % (r.digest.hash, r.digest.size_bytes, r.status.message))
            out[r.digest.hash] = r.data
        return out

    def _stream(self, digest):
        name = "%s/blobs/%s/%d" % (self.instance, digest.hash, digest.size_bytes)
        for reply in self.bytestream.Read(bytestream_pb2.ReadRequest(resource_name=name.lstrip("/"))):
            yield reply.data

    def message(self, digest, cls):
        msg = cls()
        msg.ParseFromString(self.read(digest))
        return msg

    # Staging an input root.

    def stage(self, root_digest, path):
        """Lays the input root `root_digest` out under `path` (which must not exist): exactly its
        files, directories and symlinks."""
        dirs = {}
        for reply in self.cas.GetTree(re_pb2.GetTreeRequest(instance_name=self.instance,
                                                            root_digest=root_digest)):
            for d in reply.directories:
                dirs[digest_of(d.SerializeToString()).hash] = d
        wanted = []
        self._collect(dirs, root_digest, wanted)
        self._fill_cache([f.digest for f in wanted])
        self._lay_out(dirs, root_digest, path)

    def _collect(self, dirs, digest, files):
        d = dirs[digest.hash]
        files.extend(d.files)
        for sub in d.directories:
            self._collect(dirs, sub.digest, files)

    def _cached(self, digest, executable):
        return os.path.join(self.cache_dir, digest.hash[:2],
                            "%s-%d%s" % (digest.hash, digest.size_bytes, "x" if executable else ""))

    def _fill_cache(self, digests):
        missing = {d.hash: d for d in digests if not os.path.exists(self._cached(d, False))}
        todo = list(missing.values())
        for i in range(0, len(todo), 256):
            for h, data in self.read_many(todo[i:i + 256]).items():
                self._store(self._cached(missing[h], False), data, 0o444)

    @staticmethod
    def _store(target, data, mode):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = "%s.%s" % (target, uuid.uuid4().hex)
        with open(tmp, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, target)

    def _lay_out(self, dirs, digest, path):
        os.makedirs(path)
        d = dirs[digest.hash]
        for f in d.files:
            src = self._cached(f.digest, f.is_executable)
            if f.is_executable and not os.path.exists(src):
                # The executable copy: a hard link shares its mode with every other link.
                tmp = "%s.%s" % (src, uuid.uuid4().hex)
                shutil.copyfile(self._cached(f.digest, False), tmp)
                os.chmod(tmp, 0o555)
                os.replace(tmp, src)
            os.link(src, os.path.join(path, f.name))
        for s in d.symlinks:
            os.symlink(s.target, os.path.join(path, s.name))
        for sub in d.directories:
            self._lay_out(dirs, sub.digest, os.path.join(path, sub.name))

    # Writing.

    def upload(self, blobs):
        """Uploads {hash: (Digest, bytes or a file's path)} that the CAS does not hold."""
        missing = self.cas.FindMissingBlobs(re_pb2.FindMissingBlobsRequest(
            instance_name=self.instance, blob_digests=[d for d, _ in blobs.values()])).missing_blob_digests
        batch, size = [], 0
        for m in missing:
            digest, src = blobs[m.hash]
            if digest.size_bytes > BATCH_BYTES:
                self._write_stream(digest, src)
                continue
            data = src if isinstance(src, bytes) else open(src, "rb").read()
            if size + len(data) > BATCH_BYTES and batch:
                self._batch_write(batch)
                batch, size = [], 0
            batch.append(re_pb2.BatchUpdateBlobsRequest.Request(digest=digest, data=data))
            size += len(data)
        if batch:
            self._batch_write(batch)

    def _batch_write(self, requests):
        reply = self.cas.BatchUpdateBlobs(re_pb2.BatchUpdateBlobsRequest(
            instance_name=self.instance, requests=requests))
        for r in reply.responses:
            if r.status.code != 0:
                raise IOError("CAS refused blob %s: %s" % (r.digest.hash, r.status.message))

    def _write_stream(self, digest, src):
        name = ("%s/uploads/%s/blobs/%s/%d" % (self.instance, uuid.uuid4(), digest.hash,
                                              digest.size_bytes)).lstrip("/")

        def requests():
            f = open(src, "rb") if not isinstance(src, bytes) else None
            offset = 0
            try:
                while True:
                    chunk = f.read(CHUNK) if f else src[offset:offset + CHUNK]
                    last = offset + len(chunk) >= digest.size_bytes
                    yield bytestream_pb2.WriteRequest(resource_name=name if offset == 0 else "",
                                                      write_offset=offset, data=chunk,
                                                      finish_write=last)
                    offset += len(chunk)
                    if last:
                        return
            finally:
                if f:
                    f.close()

        self.bytestream.Write(requests())

    def tree_of(self, path, blobs):
        """The Tree of the directory `path`, its files added to `blobs` (a symlink is kept as one)."""
        children = []
        root = self._directory(path, blobs, children)
        return re_pb2.Tree(root=root, children=children)

    def _directory(self, path, blobs, children):
        d = re_pb2.Directory()
        for name in sorted(os.listdir(path)):
            full = os.path.join(path, name)
            if os.path.islink(full):
                d.symlinks.add(name=name, target=os.readlink(full))
            elif os.path.isdir(full):
                sub = self._directory(full, blobs, children)
                children.append(sub)
                d.directories.add(name=name, digest=digest_of(sub.SerializeToString()))
            else:
                digest = digest_of_file(full)
                blobs[digest.hash] = (digest, full)
                d.files.add(name=name, digest=digest, is_executable=os.access(full, os.X_OK))
        return d
