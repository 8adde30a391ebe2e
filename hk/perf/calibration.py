"""The model's calibration: its one fitted parameter per architecture and its stated error, from
published measurements of kernels whose code objects the model can read.

A point is a published measurement (TFLOP/s of one launch on one device) beside the model's
prediction of the same launch. Points are either fitted or held out. What the model fits is the
clock each architecture sustains under a kernel's load, as a share of the peak clock the device
facts give (data-center parts run matrix-heavy kernels well below it): the geometric mean of
published over predicted on the fitted points of the architecture, at most 1. The stated error
of an architecture is the root mean square relative error of all its points after the fit,
rounded up to 5%, and never below the held-out points' own; an architecture with no point takes
the largest of the others', doubled.

    python -m hk.perf.calibration points.json      # prints the fit, the table and the errors

points.json: [{"name", "device", "arch", "published_tflops", "predicted_tflops", "unfitted_tflops",
"fitted": bool, "source"}]: "unfitted_tflops" predicted with every sustained clock at 1, which the
fit reads, and "predicted_tflops" by the model with the fitted clocks, which the errors read (see
docs/performance.md; hk/target/perf.json keeps the points under "model").
"""

import dataclasses
import json
import math
import sys

from hk.perf.model import PerfError


@dataclasses.dataclass(frozen=True)
class Point:
    name: str
    device: str
    arch: str
    published: float          # TFLOP/s
    predicted: float          # TFLOP/s
    fitted: bool
    unfitted: float           # TFLOP/s predicted with every sustained clock at 1
    source: str = ""

    @property
    def error(self):
        """The prediction's relative error (positive: the model is too fast)."""
        return (self.predicted - self.published) / self.published


def points(raw):
    """Points from their JSON form; PerfError naming a point that is not one."""
    out = []
    for i, p in enumerate(raw):
        try:
            point = Point(str(p["name"]), str(p["device"]), str(p["arch"]), float(p["published_tflops"]),
                          float(p["predicted_tflops"]), bool(p["fitted"]), float(p["unfitted_tflops"]),
                          str(p.get("source", "")))
        except (KeyError, TypeError, ValueError) as e:
            raise PerfError("calibration point %d is not {name, device, arch, published_tflops, predicted_tflops, "
                            "unfitted_tflops, fitted}: %s" % (i, e)) from None
        if min(point.published, point.predicted, point.unfitted) <= 0:
            raise PerfError("calibration point %s has a throughput that is not positive" % point.name)
        out.append(point)
    return out


def fit(pts):
    """{arch: sustained clock share} from the fitted points' unfitted predictions."""
    by_arch = {}
    for p in pts:
        if p.fitted:
            by_arch.setdefault(p.arch, []).append(math.log(p.published / p.unfitted))
    return {arch: round(min(1.0, math.exp(sum(v) / len(v))), 3) for arch, v in sorted(by_arch.items())}


def _rms(values):
    return math.sqrt(sum(v * v for v in values) / len(values)) if values else 0.0


def stated_errors(pts, archs):
    """{arch: the model's stated relative error} from the fitted model's predictions."""
    out = {}
    for arch in archs:
        mine = [p.error for p in pts if p.arch == arch]
        held = [p.error for p in pts if p.arch == arch and not p.fitted]
        if mine:
            out[arch] = math.ceil(max(_rms(mine), _rms(held)) * 20 - 1e-9) / 20
    worst = max(out.values()) if out else 0.5
    for arch in archs:
        out.setdefault(arch, min(1.0, 2 * worst))
    return out


def table(pts):
    """The calibration table, one line per point."""
    lines = ["%-52s %-17s %9s %9s %7s  %s" % ("point", "device", "published", "predicted", "error", "role")]
    for p in pts:
        lines.append("%-52s %-17s %9.1f %9.1f %+6.0f%%  %s" % (p.name, p.device, p.published, p.predicted,
                                                              100 * p.error, "fitted" if p.fitted else "held out"))
    for role, fitted in (("fitted", True), ("held out", False)):
        errs = [abs(p.error) for p in pts if p.fitted == fitted]
        if errs:
            lines.append("%s: %d points, mean |error| %.0f%%, worst %.0f%%" % (role, len(errs), 100 * sum(errs) / len(errs),
                                                                          100 * max(errs)))
    return lines


def main(argv):
    from hk.target import facts

    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        pts = points(json.load(f))
    for line in table(pts):
        print(line)
    print(json.dumps({"sustained_clock": fit(pts), "error": stated_errors(pts, facts.archs())}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
