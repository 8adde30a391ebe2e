"""The performance gate: every shipped kernel's static figures against its budget.

    ./bazelw test //tests/perf:perf_gate          # fails when a figure is worse than its budget
    ./bazelw run //tests/perf:figures              # prints the figures in budgets.json's form

The figures come from the code objects //kernels builds for every architecture: the main loop's
instructions per matrix instruction (hk.runtime.isa_stats), VGPRs (AGPRs included), SGPRs,
spills and LDS bytes. The same compiler and source give the same code, so a budget is the figure
a kernel has, and a change that makes any figure worse fails here until its budget is raised on
purpose. Every kernel the library builds needs a budget: a new kernel cannot enter unmeasured.
"""

import json
import os
import re
import sys

from absl import app, flags
from absl.testing import absltest

from hk.runtime import isa_stats

FLAGS = flags.FLAGS
flags.DEFINE_string("budgets", None, "the budgets file")
flags.DEFINE_string("objdump", None, "llvm-objdump")

# Figures a budget bounds from above; each kernel's budget names the ones that apply to it.
FIGURES = ("per_matrix", "vgprs", "sgprs", "spills", "lds_bytes")


def measured():
    """{(name, arch): {figure: value}} of every code object given."""
    out = {}
    for path in CODE_OBJECTS:
        m = re.match(r"(?P<name>.+)\.(?P<arch>gfx\w+)\.co$", os.path.basename(path))
        if not m:
            raise ValueError("%s is not named <kernel>.<arch>.co" % path)
        (stats,) = isa_stats.stats(path, FLAGS.objdump).values()
        figures = stats.figures()
        out[(m.group("name"), m.group("arch"))] = {k: figures[k] for k in FIGURES if figures[k] is not None}
    return out


def load_budgets():
    with open(FLAGS.budgets) as f:
        return json.load(f)["kernels"]


def violations(figures, budgets):
    """The lines of what is worse than its budget, or missing from it."""
    lines = []
    for (name, arch), got in sorted(figures.items()):
        budget = budgets.get(name, {}).get(arch)
        if budget is None:
            lines.append("%s on %s has no budget; add it to tests/perf/budgets.json: %s"
                         % (name, arch, json.dumps(rounded(got), sort_keys=True)))
            continue
        for figure in FIGURES:
            if figure not in budget:
                continue
            if figure not in got:
                lines.append("%s on %s: the budget bounds %s but the kernel has no such figure "
                             "(no main loop with matrix instructions?)" % (name, arch, figure))
            elif got[figure] > budget[figure] + 1e-9:
                lines.append("%s on %s: %s is %s, worse than its budget %s"
                             % (name, arch, figure, fmt(got[figure]), fmt(budget[figure])))
    return lines


def fmt(x):
    return "%.2f" % x if isinstance(x, float) else str(x)


def rounded(figures):
    return {k: (round(v + 0.005, 2) if isinstance(v, float) else v) for k, v in figures.items()}


class PerfGateTest(absltest.TestCase):

    def test_every_kernel_is_within_its_budget(self):
        figures = measured()
        self.assertGreater(len(figures), 0)
        lines = violations(figures, load_budgets())
        self.assertEqual(lines, [], "\n" + "\n".join(lines))

    def test_the_budgets_name_only_kernels_that_are_built(self):
        built = set(measured())
        listed = {(name, arch) for name, archs in load_budgets().items() for arch in archs}
        self.assertEqual(sorted(listed - built), [], "budgets for kernels the library does not build")

    def test_a_worse_figure_is_refused(self):
        # The check itself: one instruction more per matrix instruction, one VGPR more.
        figures = {("k", "gfx1100"): {"per_matrix": 3.5, "vgprs": 129, "spills": 0}}
        budgets = {"k": {"gfx1100": {"per_matrix": 3.0, "vgprs": 128, "spills": 0}}}
        lines = violations(figures, budgets)
        self.assertEqual(len(lines), 2)
        self.assertIn("per_matrix is 3.50, worse than its budget 3.00", lines[0])
        self.assertIn("vgprs is 129, worse than its budget 128", lines[1])
        self.assertIn("has no budget", violations(figures, {})[0])


def print_figures(argv):
    del argv
    table = {}
    for (name, arch), got in sorted(measured().items()):
        table.setdefault(name, {})[arch] = rounded(got)
    json.dump({"kernels": table}, sys.stdout, indent=2, sort_keys=True)
    print()


# The kernel library's outputs come as positional arguments; the gate reads the code objects.
CODE_OBJECTS = [a for a in sys.argv[1:] if a.endswith(".co")]

if __name__ == "__main__":
    sys.argv = [a for a in sys.argv if not a.endswith((".co", ".mlir", ".cpp"))]
    if "--print" in sys.argv:
        sys.argv.remove("--print")
        app.run(print_figures)
    else:
        absltest.main()
