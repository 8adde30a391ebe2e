"""What a nested Bazel's output says it did."""

import re


def processes(output):
    """The counts of Bazel's `INFO: N processes: ...` line, by how each ran ("internal",
    "remote", "remote cache hit", "local", "linux-sandbox", ...), and the line itself."""
    line = re.search(r"INFO: \d+ process(?:es)?: ([^\n]*)", output)
    assert line, output
    line = line.group(1).rstrip(".")
    counts = {}
    for part in line.split(", "):
        n, how = part.split(" ", 1)
        counts[how] = int(n)
    return counts, line
