"""Prints where the last `bazel test` spent its time: each test's wall time (from its test.xml)
summed per package, and the longest tests.

    ./bazelw test //...
    ./bazelw run //tests/bench:suite_times -- [--top=15] [--testlogs=DIR]

Times are what each test took when it ran (a result taken from the cache keeps the time of the
run that made it), with the other tests running beside it on the machine's cores: their sum is
the suite's work, not its wall time.
"""

import collections
import os
import xml.etree.ElementTree as ET

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("testlogs", None, "Bazel's test log tree (default: the workspace's bazel-testlogs)")
flags.DEFINE_integer("top", 15, "how many of the longest tests to list")


def test_times(testlogs):
    """{label: seconds} of every test under `testlogs` (a sharded test's shards summed)."""
    times = collections.Counter()
    for directory, _, files in os.walk(testlogs, followlinks=True):
        if "test.xml" not in files:
            continue
        relative = os.path.relpath(directory, testlogs).replace(os.sep, "/")
        parts = relative.split("/")
        if parts[-1].startswith("shard_") and len(parts) > 1:  # <test>/shard_I_of_N/test.xml
            parts = parts[:-1]
        label = "//%s:%s" % ("/".join(parts[:-1]), parts[-1])
        times[label] += _seconds(ET.parse(os.path.join(directory, "test.xml")).getroot())
    return dict(times)


def _seconds(root):
    """A test.xml's time: its suites' (as a test runner writes it), else the sum of its cases'
    (Bazel's own, one case per test)."""
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    if root.get("time"):
        return float(root.get("time"))
    if suites and all(s.get("time") for s in suites):
        return sum(float(s.get("time")) for s in suites)
    return sum(float(c.get("time") or 0) for c in root.iter("testcase"))


def by_package(times):
    """[(package, seconds, tests)] from the longest."""
    sums, counts = collections.Counter(), collections.Counter()
    for label, seconds in times.items():
        package = label.split(":")[0]
        sums[package] += seconds
        counts[package] += 1
    return [(p, s, counts[p]) for p, s in sums.most_common()]


def main(argv):
    del argv
    testlogs = FLAGS.testlogs or os.path.join(os.environ.get("BUILD_WORKSPACE_DIRECTORY", "."), "bazel-testlogs")
    if not os.path.isdir(testlogs):
        raise app.UsageError("no test logs at %s: run `bazel test` first, or pass --testlogs" % testlogs)
    times = test_times(testlogs)
    total = sum(times.values())
    print("%d tests, %.0f s of test time in all" % (len(times), total))
    print("\n%-40s %8s %6s %6s" % ("package", "seconds", "share", "tests"))
    for package, seconds, count in by_package(times):
        print("%-40s %8.0f %5.1f%% %6d" % (package, seconds, 100 * seconds / total if total else 0, count))
    print("\n%-60s %8s" % ("longest tests", "seconds"))
    for label, seconds in sorted(times.items(), key=lambda kv: -kv[1])[:FLAGS.top]:
        print("%-60s %8.0f" % (label, seconds))


if __name__ == "__main__":
    app.run(main)
