"""suite_times reads each test's time from Bazel's test.xml files: labels from the tree, shards
summed, packages ranked by their sum."""

import os

from tests.bench import suite_times

XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="{name}" tests="1" failures="0" errors="0">
    <testcase name="{name}" status="run" duration="{t:.0f}" time="{t}"></testcase>
  </testsuite>
</testsuites>
"""


def write(root, path, seconds):
    directory = os.path.join(root, path)
    os.makedirs(directory)
    with open(os.path.join(directory, "test.xml"), "w") as f:
        f.write(XML.format(name=path, t=seconds))


# As a test runner writes it: the suite's time, its cases' own (here zeros).
RUNNER_XML = """<?xml version="1.0"?>
<testsuites name="" tests="2" time="176.5">
<testsuite name="GateTest" tests="2" time="176.5">
  <testcase name="test_a" time="0.000" classname="GateTest"></testcase>
  <testcase name="test_b" time="0.000" classname="GateTest"></testcase>
</testsuite>
</testsuites>
"""


def test_times_per_test_and_package(tmp_path):
    root = str(tmp_path)
    write(root, "tests/ops/moe_test", 141.0)
    write(root, "tests/ops/gemm_test", 101.5)
    write(root, "integration/vllm/e2e_llama_test", 238.0)
    write(root, "tests/hk/big_test/shard_1_of_2", 30.0)
    write(root, "tests/hk/big_test/shard_2_of_2", 12.0)
    os.makedirs(os.path.join(root, "tests/hk/not_run"))  # no test.xml: not counted
    os.makedirs(os.path.join(root, "tests/perf/gate_test"))
    with open(os.path.join(root, "tests/perf/gate_test/test.xml"), "w") as f:
        f.write(RUNNER_XML)
    times = suite_times.test_times(root)
    assert times == {"//tests/ops:moe_test": 141.0, "//tests/ops:gemm_test": 101.5,
                     "//integration/vllm:e2e_llama_test": 238.0, "//tests/hk:big_test": 42.0,
                     "//tests/perf:gate_test": 176.5}
    assert suite_times.by_package(times) == [("//tests/ops", 242.5, 2), ("//integration/vllm", 238.0, 1),
                                             ("//tests/perf", 176.5, 1), ("//tests/hk", 42.0, 1)]
