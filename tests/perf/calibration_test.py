"""The model's calibration: the fit of each architecture's sustained clock, the stated errors, and
that hk/target/perf.json's parameters are what its own calibration points give."""

import json
import math
import os

from absl.testing import absltest

from hk.perf import calibration
from hk.perf import device as devices
from hk.perf import model
from hk.target import facts


def point(name, arch, published, unfitted, fitted, predicted=None):
    return calibration.Point(name, "dev", arch, published, predicted or unfitted, fitted, unfitted)


class CalibrationTest(absltest.TestCase):

    def test_the_fit_is_the_geometric_mean_of_the_fitted_points_at_most_one(self):
        pts = [point("a", "gfx950", 90, 100, True), point("b", "gfx950", 80, 100, True),
               point("c", "gfx950", 10, 100, False),                  # held out: not fitted
               point("d", "gfx942", 120, 100, True)]                  # faster than the model: 1
        clocks = calibration.fit(pts)
        self.assertAlmostEqual(clocks["gfx950"], round(math.sqrt(0.9 * 0.8), 3))
        self.assertEqual(clocks["gfx942"], 1.0)
        self.assertNotIn("gfx1100", clocks)

    def test_the_stated_error_covers_every_point_and_the_held_out_ones(self):
        pts = [point("a", "gfx950", 100, 100, True, predicted=103),
               point("b", "gfx950", 100, 100, True, predicted=97),
               point("c", "gfx950", 100, 100, False, predicted=120),
               point("d", "gfx942", 100, 100, True, predicted=111)]
        errors = calibration.stated_errors(pts, ["gfx950", "gfx942", "gfx1201"])
        rms_held = 0.20
        self.assertEqual(errors["gfx950"], math.ceil(rms_held * 20) / 20)
        self.assertEqual(errors["gfx942"], 0.15)                       # 11% rounded up to 5%
        self.assertEqual(errors["gfx1201"], 0.40)                      # no point: twice the worst
        self.assertIn("held out: 1 points", "\n".join(calibration.table(pts)))

    def test_a_bad_point_is_refused(self):
        with self.assertRaises(model.PerfError):
            calibration.points([{"name": "x", "device": "d", "arch": "gfx950", "published_tflops": 1}])
        with self.assertRaises(model.PerfError):
            calibration.points([{"name": "x", "device": "d", "arch": "gfx950", "published_tflops": 0,
                                 "predicted_tflops": 1, "unfitted_tflops": 1, "fitted": True}])

    def test_the_facts_hold_what_their_calibration_gives(self):
        path = os.path.join(os.path.dirname(facts.__file__), "perf.json")
        with open(path) as f:
            m = json.load(f)["model"]
        pts = calibration.points(m["calibration"])
        self.assertEqual(calibration.fit(pts), m["parameters"]["sustained_clock"])
        self.assertEqual(calibration.stated_errors(pts, facts.archs()), m["error"])
        for arch in ("gfx950", "gfx942", "gfx1100"):
            roles = {p.fitted for p in pts if p.arch == arch}
            self.assertEqual(roles, {True, False}, "%s needs fitted and held-out points" % arch)
        for p in pts:
            self.assertTrue(p.source.strip(), p.name)
            self.assertEqual(devices.get(p.device).arch, p.arch, p.name)
        # A prediction states its architecture's error.
        dev = devices.get(arch="gfx950")
        self.assertEqual(model.stated_error(dev), m["error"]["gfx950"])


if __name__ == "__main__":
    absltest.main()
