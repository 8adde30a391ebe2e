"""Packs a wheel (PEP 427) from a list of files, reproducibly: entries sorted, fixed timestamps,
permissions from the file (executable or not), so the same inputs give the same bytes.

    wheel.py --out=NAME.whl --files=LIST --distribution=hk-dsl --version=0.1.0 \\
        --tag=cp311-cp311-manylinux_2_36_x86_64 [--requires=numpy==2.4.6 ...] \\
        [--extra=torch:torch>=2.4 ...] [--entry_point=console_scripts:hk-check = hk.x:entry ...]

LIST holds one `path-in-wheel<TAB>file` per line. The rule that runs it is dist/defs.bzl.
"""

import base64
import hashlib
import os
import stat
import sys
import zipfile

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("out", None, "the wheel to write")
flags.DEFINE_string("files", None, "the list of path-in-wheel<TAB>file lines")
flags.DEFINE_string("distribution", None, "the distribution's name")
flags.DEFINE_string("version", None, "its version")
flags.DEFINE_string("tag", "py3-none-any", "python-abi-platform")
flags.DEFINE_string("summary", "", "the one-line summary")
flags.DEFINE_string("description", None, "a Markdown file: the long description")
flags.DEFINE_string("requires_python", ">=3.10", "Requires-Python")
flags.DEFINE_multi_string("requires", [], "a Requires-Dist entry")
flags.DEFINE_multi_string("extra", [], "EXTRA:requirement")
flags.DEFINE_multi_string("entry_point", [], "GROUP:name = module:function")

# Zip's earliest representable time: no build's clock reaches the wheel.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def metadata():
    lines = ["Metadata-Version: 2.1", "Name: " + FLAGS.distribution, "Version: " + FLAGS.version]
    if FLAGS.summary:
        lines.append("Summary: " + FLAGS.summary)
    lines += ["License: MIT", "Requires-Python: " + FLAGS.requires_python]
    lines += ["Requires-Dist: " + r for r in FLAGS.requires]
    extras = {}
    for item in FLAGS.extra:
        extra, _, requirement = item.partition(":")
        extras.setdefault(extra, []).append(requirement)
    for extra in sorted(extras):
        lines.append("Provides-Extra: " + extra)
        lines += ['Requires-Dist: %s ; extra == "%s"' % (r, extra) for r in extras[extra]]
    text = "\n".join(lines) + "\n"
    if FLAGS.description:
        with open(FLAGS.description) as f:
            text += "Description-Content-Type: text/markdown\n\n" + f.read()
    return text


def entry_points():
    groups = {}
    for item in FLAGS.entry_point:
        group, _, entry = item.partition(":")
        groups.setdefault(group, []).append(entry.strip())
    return "".join("[%s]\n%s\n\n" % (g, "\n".join(sorted(groups[g]))) for g in sorted(groups))


def main(argv):
    del argv
    with open(FLAGS.files) as f:
        files = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    name = FLAGS.distribution.replace("-", "_")
    info = "%s-%s.dist-info" % (name, FLAGS.version)
    pure = FLAGS.tag.endswith("-none-any")
    entries = []  # (path in the wheel, bytes, executable)
    for path, src in sorted(files):
        with open(src, "rb") as f:
            data = f.read()
        entries.append((path, data, bool(os.stat(src).st_mode & stat.S_IXUSR)))
    entries.append((info + "/METADATA", metadata().encode(), False))
    entries.append((info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: hk-dsl dist/wheel.py\n"
                                      "Root-Is-Purelib: %s\nTag: %s\n" % (str(pure).lower(), FLAGS.tag)).encode(), False))
    if FLAGS.entry_point:
        entries.append((info + "/entry_points.txt", entry_points().encode(), False))
    record = "".join("%s,%s,%d\n" % (p, record_hash(d), len(d)) for p, d, _ in entries)
    record += info + "/RECORD,,\n"
    entries.append((info + "/RECORD", record.encode(), False))

    tmp = FLAGS.out + ".tmp"
    with zipfile.ZipFile(tmp, "w") as z:
        for path, data, executable in entries:
            zi = zipfile.ZipInfo(path, _EPOCH)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
            z.writestr(zi, data, compresslevel=9)
    os.replace(tmp, FLAGS.out)
    return 0


if __name__ == "__main__":
    flags.mark_flags_as_required(["out", "files", "distribution", "version"])
    app.run(main)
