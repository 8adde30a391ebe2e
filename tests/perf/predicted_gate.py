"""The predicted gate: the library's kernels at reference shapes (tests/perf/reference.py), as
hk.perf predicts them on each target's device, against tests/perf/budgets.json's "predicted":
the share of the peak may not fall below its budget, and the bound is the one recorded.

    ./bazelw test //tests/perf:predicted_gate
    ./bazelw run //tests/perf:predicted_figures     # the current predictions, in the budgets' form
    ./bazelw run //tests/perf:predicted_figures -- --only=gemm_4096,gemm_8192   # some of them

The prediction is deterministic (the emulator's exact streams, the model), so a budget is the
figure a kernel has; a change to a kernel, the compiler or the model that lowers it fails here
until the budget is lowered on purpose. These are predictions, with the model's stated error
(hk/target/perf.json), not measurements.
"""

import json
import sys

from absl import app, flags
from absl.testing import absltest, parameterized

from tests.perf import reference

FLAGS = flags.FLAGS
flags.DEFINE_string("budgets", None, "the budgets file")
flags.DEFINE_list("only", [], "with --print: the reference launches to predict (default: all)")

CASES = [(name, arch) for name in reference.REFERENCES for arch in reference.archs(name)]


def load_budgets():
    with open(FLAGS.budgets) as f:
        return json.load(f).get("predicted", {})


def violation(name, arch, percent, bound, budgets):
    """What is wrong with a prediction against its budget, or None."""
    budget = budgets.get(name, {}).get(arch)
    if budget is None:
        return ("%s on %s has no predicted budget; add it to tests/perf/budgets.json: %s"
                % (name, arch, json.dumps({"percent_of_peak": round(percent - 0.005, 2), "bound": bound})))
    if percent < budget["percent_of_peak"] - 1e-9:
        return ("%s on %s: predicted %.2f%% of the peak, below its budget %.2f%% (bound: %s)"
                % (name, arch, percent, budget["percent_of_peak"], bound))
    if bound != budget["bound"]:
        return "%s on %s: bound by %s, where its budget records %s" % (name, arch, bound, budget["bound"])
    return None


class PredictedGateTest(parameterized.TestCase):

    @parameterized.parameters(*CASES)
    def test_the_prediction_keeps_its_budget(self, name, arch):
        percent, bound, predictions = reference.predicted(name, arch)
        for p in predictions:
            self.assertGreater(p.seconds, 0)
            self.assertIn("model error", str(p))
        problem = violation(name, arch, percent, bound, load_budgets())
        self.assertIsNone(problem, problem)

    def test_the_budgets_name_only_reference_launches(self):
        listed = {(name, arch) for name, archs in load_budgets().items() for arch in archs}
        self.assertEqual(sorted(listed - set(CASES)), [])

    def test_a_lower_share_or_another_bound_is_refused(self):
        budgets = {"k": {"gfx950": {"percent_of_peak": 50.0, "bound": "matrix unit"}}}
        self.assertIsNone(violation("k", "gfx950", 50.0, "matrix unit", budgets))
        self.assertIn("below its budget 50.00%", violation("k", "gfx950", 49.9, "matrix unit", budgets))
        self.assertIn("bound by LDS", violation("k", "gfx950", 51.0, "LDS", budgets))
        self.assertIn("has no predicted budget", violation("k", "gfx1100", 1.0, "x", budgets))


def print_figures(argv):
    del argv
    unknown = sorted(set(FLAGS.only) - set(reference.REFERENCES))
    if unknown:
        raise app.UsageError("--only names no reference launch %s; tests/perf/reference.py has %s"
                             % (", ".join(unknown), ", ".join(reference.REFERENCES)))
    table = {}
    for name, arch in CASES:
        if FLAGS.only and name not in FLAGS.only:
            continue
        percent, bound, _ = reference.predicted(name, arch)
        table.setdefault(name, {})[arch] = {"percent_of_peak": round(percent - 0.005, 2), "bound": bound}
        print("%s %s %.2f%% %s" % (name, arch, percent, bound), file=sys.stderr, flush=True)
    json.dump({"predicted": table}, sys.stdout, indent=2, sort_keys=True)
    print()


if __name__ == "__main__":
    if "--print" in sys.argv:
        sys.argv.remove("--print")
        app.run(print_figures)
    else:
        absltest.main()
