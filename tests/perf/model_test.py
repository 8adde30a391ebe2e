"""hk.perf on microbenchmarks whose answer is the datasheet: back-to-back independent matrix
instructions run at the matrix peak, a streaming copy at the memory bandwidth the model assumes,
an LDS loop whose lanes hit one bank many times slower than one that hits every bank; and the
refusals: facts files with a missing or impossible value, a code object of another target, and
hk-perf's command line."""

import dataclasses
import json
import os
import subprocess
import sys
import types

import numpy as np
import torch
from absl.testing import absltest

import hk
import hk.perf
from hk.perf import device as devices
from hk.perf import traffic
from tests.emu import asm, emutest

MATRIX = {
    "gfx950": ("v_mfma_f32_16x16x32_bf16 v[{0}:{1}], v[40:43], v[44:47], v[{0}:{1}]", 4),
    "gfx1100": ("v_wmma_f32_16x16x16_bf16 v[{0}:{1}], v[40:47], v[48:55], v[{0}:{1}]", 8),
}


def loop(name, body, count):
    """`body` repeated `count` times; `name` labels the loop (unique within a code object)."""
    return """
  s_movk_i32 s20, %d
.L%s:
%s
  s_sub_u32 s20, s20, 1
  s_cmp_lg_u32 s20, 0
  s_cbranch_scc1 .L%s
""" % (count, name, body, name)


def matrix_loop(arch, count=1024):
    """Four independent accumulators per iteration (the matrix unit never waits for a result)."""
    op, width = MATRIX[arch]
    body = "\n".join("  " + op.format(k * width, k * width + width - 1) for k in range(4))
    return loop("matrix", body, count)


def lds_loop(name, address, count=256):
    body = address + "\n" + "\n".join("  ds_load_b32 v%d, v1 offset:%d" % (10 + k, 4 * k) for k in range(8))
    return loop(name, body + "\n  s_waitcnt lgkmcnt(0)", count)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16)))
def copy(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    o[idx] = x[idx].load(hk.RT(hk.bf16, 16, 64))


class ModelTest(emutest.EmuTest):

    def predict(self, co, name, arch, workgroups, block):
        dev = devices.get(arch=arch)
        out = np.zeros(block * 4, np.uint32)
        return hk.perf.predict_code_object(co, name, (workgroups,), (block,), [out, np.zeros(1024, np.uint32)],
                                           arch=arch), dev

    def test_matrix_instructions_back_to_back_reach_the_peak(self):
        for arch in MATRIX:
            wave = asm.WAVE[arch]
            co = asm.assemble(arch, {"peak": (matrix_loop(arch), [0], {"block": 4 * wave})})
            dev = devices.get(arch=arch)
            p, _ = self.predict(co, "peak", arch, 2 * dev.units, 4 * wave)
            self.assertEqual(p.bound, "matrix unit", str(p))
            self.assertGreater(p.busy["matrix"], 0.95, str(p))
            # The launch's overhead is the rest: the loop itself runs at the peak, at the clock
            # the device sustains.
            matrix_seconds = p.seconds - dev.launch_s
            sustained = dev.model.get("sustained_clock", {}).get(arch, 1.0)
            self.assertAlmostEqual(p.flops / matrix_seconds / dev.peak_flops["bf16"], sustained, delta=0.06,
                                   msg=str(p))

    def test_a_streaming_copy_moves_at_the_memory_bandwidth(self):
        for arch in ("gfx1100", "gfx950"):
            dev = devices.get(arch=arch)
            x = torch.empty(8192, 8192, dtype=torch.bfloat16, device="meta")
            o = torch.empty(8192, 8192, dtype=torch.bfloat16, device="meta")
            p = hk.perf.predict(copy, x, o, arch=arch)
            self.assertIn("bandwidth", p.bound, str(p))
            self.assertEqual(p.flops, 0.0)
            # 128 MiB read and 128 MiB written, at the bandwidth the model assumes.
            self.assertAlmostEqual(p.dram_bytes, 2 * 8192 * 8192 * 2, delta=8192 * 8192 * 0.02)
            efficiency = dev.model["dram_efficiency"]
            self.assertAlmostEqual(p.dram_bytes / (p.seconds - dev.launch_s), efficiency * dev.dram_bytes_per_s,
                                   delta=0.05 * dev.dram_bytes_per_s, msg=str(p))
            self.assertIn("memory bandwidth", p.peak)
            # kernel.build(...).report() gives the same prediction for the launch's arguments.
            report = copy.build(arch, divisors=64).report(x, o)
            self.assertIn(str(p), report)
            self.assertIn("\npredicted ", report)

    def test_lds_bank_conflicts_slow_an_lds_loop(self):
        spread = lds_loop("spread", "  v_mov_b32 v1, v100")           # lane l: word l
        one_bank = lds_loop("one_bank", "  v_lshlrev_b32 v1, 7, v0")  # lane l: byte 128 l, bank 0
        co = asm.assemble("gfx1100", {"spread": (spread, [10], {"lds": 32768, "block": 128}),
                                      "one_bank": (one_bank, [10], {"lds": 32768, "block": 128})})
        fast, _ = self.predict(co, "spread", "gfx1100", 96, 128)
        slow, _ = self.predict(co, "one_bank", "gfx1100", 96, 128)
        self.assertEqual(slow.bound, "LDS bandwidth and bank conflicts", str(slow))
        self.assertGreater(slow.seconds - fast.seconds, 8 * (fast.seconds - devices.get(arch="gfx1100").launch_s))

    def test_the_l2_of_each_die_serves_what_its_workgroups_share(self):
        # 16 workgroups of a first round all read the same 100 lines of a buffer of 100 lines.
        line = 128
        shared = np.arange(1000, 1100, dtype=np.uint64)
        lines = [(shared, np.zeros(0, np.uint64))] * 16
        profile = types.SimpleNamespace(lines=lines, buffers=[(1000 * line, 100 * line), (5000 * line, 10 ** 6)])
        for xcds, hit in ((1, 1 - 100 / 1600), (8, 1 - 800 / 1600)):
            dev = dataclasses.replace(devices.get(arch="gfx942"), xcds=xcds)
            t = traffic.estimate(profile, profile, (16, 1, 1), dev, 1.0)
            self.assertAlmostEqual(t.hit, hit)
            self.assertAlmostEqual(t.beyond_bytes, 16 * 100 * (1 - hit) * line)
            # DRAM gives the buffer once (the Infinity Cache holds it), not the unread one.
            self.assertAlmostEqual(t.footprint_bytes, 100 * line)
            self.assertAlmostEqual(t.dram_bytes, 100 * line)
        # Without an Infinity Cache every miss is DRAM's.
        dev = dataclasses.replace(devices.get(arch="gfx942"), xcds=8, infinity_cache_bytes=0.0)
        self.assertAlmostEqual(traffic.estimate(profile, profile, (16, 1, 1), dev, 1.0).dram_bytes, 800 * line)
        # Workgroups that share nothing: no hit; the first round's lines extrapolate to the grid.
        apart = [(np.arange(100 * k, 100 * k + 100, dtype=np.uint64), np.zeros(0, np.uint64)) for k in range(16)]
        profile = types.SimpleNamespace(lines=apart, buffers=[(0, 10 ** 8)])
        t = traffic.estimate(profile, profile, (64, 1, 1), devices.get(arch="gfx942"), 1.0)
        self.assertAlmostEqual(t.hit, 0.0)
        self.assertAlmostEqual(t.footprint_bytes, 64 * 100 * line)

    def test_a_code_object_of_another_target_is_refused(self):
        co = asm.assemble("gfx950", {"peak": (matrix_loop("gfx950", 1), [0], {"block": 64})})
        with self.assertRaises(hk.perf.PerfError) as cm:
            hk.perf.predict_code_object(co, "peak", (1,), (64,), [None, None], arch="gfx1100")
        self.assertIn("for gfx950, not gfx1100", str(cm.exception))
        with self.assertRaises(hk.perf.FactsError) as cm:
            hk.perf.predict_code_object(co, "peak", (1,), (64,), [None, None], device="Radeon PRO W7900")
        self.assertIn("is a gfx1100, not a gfx950", str(cm.exception))
        with self.assertRaises(hk.perf.PerfError) as cm:
            hk.perf.predict_code_object(co, "nope", (1,), (64,), [None, None])
        self.assertIn("no kernel 'nope'", str(cm.exception))

    def test_a_facts_file_with_a_missing_or_impossible_value_is_refused(self):
        good = json.load(open(devices._PATH))["devices"]["Instinct MI355X"]
        tmp = self.create_tempdir()
        cases = [("memory_bandwidth_gbps", None, "lack"), ("clock_mhz", {"value": -1, "source": "x"}, "positive"),
                 ("compute_units", {"value": 256}, "source"), ("arch", "gfx9000", "no architecture")]
        for key, value, words in cases:
            bad = dict(good)
            if value is None:
                del bad[key]
            else:
                bad[key] = value
            path = os.path.join(tmp.full_path, "%s.json" % key)
            with open(path, "w") as f:
                json.dump({"devices": {"Mine": bad}}, f)
            with self.assertRaises(hk.perf.FactsError) as cm:
                devices.load(path)
            self.assertIn(words, str(cm.exception), key)
        path = os.path.join(tmp.full_path, "ok.json")
        with open(path, "w") as f:
            json.dump({"devices": {"Half a MI355X": dict(good, compute_units={"value": 128, "source": "test"})}}, f)
        mine = devices.load(path)["Half a MI355X"]
        self.assertEqual((mine.arch, mine.units), ("gfx950", 128))
        self.assertEqual(devices.get("Half a MI355X").units, 128)

    def test_the_command_line(self):
        co_path = os.path.join(self.create_tempdir().full_path, "peak.co")
        with open(co_path, "wb") as f:
            f.write(asm.assemble("gfx950", {"peak": (matrix_loop("gfx950", 64), [0], {"block": 256})}))
        cli = [sys.executable, "-m", "hk.perf.cli"]
        ok = subprocess.run(cli + ["--kernel=peak", "--grid=512", "--block=256", "--arg=u32[1024]",
                                   "--arg=u32[1024]", co_path], capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("predicted", ok.stdout)
        self.assertIn("model error", ok.stdout)
        self.assertIn("bound: matrix unit", ok.stdout)
        for args, words in ((["--kernel=nope", "--block=64", co_path], "no kernel 'nope'"),
                            (["--kernel=peak", "--block=64", "missing.co"], "no such file"),
                            (["--kernel=peak", "--block=64", "--arg=bf17[3]", co_path], "--arg=bf17[3]"),
                            (["--kernel=peak", "--block=64", "--device=Radeon PRO W7900", "--arg=null",
                              "--arg=null", co_path], "is a gfx1100")):
            r = subprocess.run(cli + args, capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
            self.assertIn(words, r.stderr)
            self.assertNotIn("Traceback", r.stderr)
            self.assertTrue(r.stderr.startswith("hk-perf: error: "), r.stderr)
        devs = subprocess.run(cli + ["--devices"], capture_output=True, text=True)
        self.assertEqual(devs.returncode, 0)
        self.assertIn("Instinct MI355X", devs.stdout)


if __name__ == "__main__":
    emutest.main()
