"""hk.perf.simulate on streams small enough to time by hand: the vector ALU's issue rate, two
waves sharing a SIMD or not, a WMMA holding the vector ALU on RDNA, an L2 hit and a miss waited
for, LDS cycles and latency, a barrier, workgroups taking turns in the unit's slots, the event
order's determinism; and its refusals (a stream naming an instruction the table lacks or not
ending with s_endpgm, nothing to run)."""

import dataclasses

import numpy as np
from absl.testing import absltest

from hk.perf import instructions as I
from hk.perf import simulate

# A unit with round numbers: one issue per cycle, a VALU instruction every 2 cycles, a workgroup
# starting 10 cycles after its slot frees, a barrier released 16 cycles after the last arrival.
UNIT = simulate.Unit(
    simds=2, wave_size=32, issue_interval=1, valu_cycles=2.0, trans_cycles=8.0, matrix_on_valu=True,
    lds_scale=2.0, lds_latency=64.0, lds_write_bytes=128.0, lines_per_cycle=1.0, line_bytes=128,
    l2_latency=100.0, dram_latency=500.0, miss_cycles=50.0, l2_bytes_per_cycle=128.0, smem_latency=200.0,
    barrier_cycles=16.0, workgroup_cycles=10.0, stores_on_vm=False)

TEXTS = ["v_add_f32 v0, v1, v2", "s_endpgm", "global_load_b32 v0, v1, s[0:1]", "s_waitcnt vmcnt(0)",
         "ds_load_b32 v0, v1", "s_waitcnt lgkmcnt(0)", "s_barrier",
         "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]"]
TABLE = I.Table([(4 * i, text, None) for i, text in enumerate(TEXTS)], lambda op: 8.0)
VALU, END, LOAD, WAIT_VM, LDS, WAIT_LGKM, BARRIER, WMMA = range(len(TEXTS))


def wave(*insts):
    """A wave's stream: instruction indices, or (index, bytes, lines or LDS cycles)."""
    rows = [i if isinstance(i, tuple) else (i, 0, 0) for i in insts]
    return np.array(rows, dtype=np.int32).reshape(-1, 3)


def run(programs, count=None, resident=1, hit=1.0, unit=UNIT):
    return simulate.run(unit, TABLE, programs, len(programs) if count is None else count, resident, hit)


class SimulateTest(absltest.TestCase):

    def test_the_table_classifies_the_streams_instructions(self):
        self.assertEqual([I.NAMES[c] for c in TABLE.cls],
                         ["valu", "end", "load", "wait", "lds", "wait", "barrier", "matrix"])

    def test_valu_issue_waits_for_the_vector_alu(self):
        # Issued at 10, 12, 14, 16, 18 (2 cycles each); s_endpgm a cycle after the last.
        r = run([[wave(*[VALU] * 5, END)]])
        self.assertEqual(r.cycles, 19.0)
        self.assertEqual(r.busy["valu"], 10.0)
        self.assertEqual((r.instructions, r.workgroups), (6, 1))

    def test_two_waves_share_a_simd_or_run_side_by_side(self):
        program = [[wave(*[VALU] * 5, END), wave(*[VALU] * 5, END)]]
        self.assertEqual(run(program).cycles, 19.0)                                       # a SIMD each
        one_simd = dataclasses.replace(UNIT, simds=1)
        r = run(program, unit=one_simd)
        self.assertEqual(r.cycles, 29.0)            # ten VALU instructions, 2 cycles each, from 10
        self.assertEqual(r.busy["valu"], 20.0)

    def test_a_wmma_holds_the_vector_alu_on_rdna_only(self):
        program = [[wave(WMMA, VALU, END)]]
        r = run(program)
        self.assertEqual(r.cycles, 19.0)            # the VALU issues when the WMMA's 8 cycles end
        self.assertEqual(r.busy["matrix"], 8.0)
        self.assertEqual(run(program, unit=dataclasses.replace(UNIT, matrix_on_valu=False)).cycles, 12.0)

    def test_a_wait_holds_the_wave_until_its_load_arrives(self):
        program = [[wave((LOAD, 4, 1), WAIT_VM, END)]]
        hit = run(program, hit=1.0)
        self.assertEqual(hit.cycles, 110.0)         # issued at 10, the L2's 100 cycles
        self.assertEqual(hit.missed_lines, 0.0)
        miss = run(program, hit=0.0)
        self.assertEqual(miss.cycles, 510.0)        # the DRAM's 500
        self.assertEqual(miss.missed_lines, 1.0)
        self.assertEqual(miss.busy["memory beyond the L2"], 50.0)
        # Without the wait the wave does not wait for it.
        self.assertEqual(run([[wave((LOAD, 4, 1), END)]], hit=0.0).cycles, 11.0)

    def test_lds_cycles_and_latency(self):
        r = run([[wave((LDS, 4, 4), WAIT_LGKM, END)]])
        self.assertEqual(r.busy["lds"], 8.0)        # 4 bank-group cycles at 2 cycles each
        self.assertEqual(r.cycles, 82.0)            # 10 + 8 + 64

    def test_a_barrier_releases_every_wave_after_the_last_arrives(self):
        r = run([[wave(VALU, VALU, VALU, BARRIER, END), wave(BARRIER, END)]])
        self.assertEqual(r.cycles, 31.0)            # the last arrives at 15, released 16 later

    def test_a_finished_wave_releases_the_barrier_it_will_never_reach(self):
        r = run([[wave(VALU, END), wave(BARRIER, END)]])
        self.assertEqual(r.cycles, 27.0)            # the first ends at 11; 16 later the other goes on

    def test_workgroups_take_turns_in_the_units_slots(self):
        program = [wave(*[VALU] * 5, END)]
        serial = run([program], count=3, resident=1, unit=dataclasses.replace(UNIT, simds=1))
        self.assertEqual((serial.cycles, serial.workgroups), (57.0, 3))   # 19 each, one after another
        together = run([program], count=3, resident=3, unit=dataclasses.replace(UNIT, simds=4))
        self.assertEqual((together.cycles, together.workgroups), (19.0, 3))
        # Workgroup k replays program k modulo their number.
        mixed = run([[wave(VALU, END)], [wave(*[VALU] * 20, END)]], count=4, resident=1,
                    unit=dataclasses.replace(UNIT, simds=1))
        self.assertEqual(mixed.instructions, 2 * 2 + 2 * 21)

    def test_a_run_is_deterministic(self):
        rng = np.random.default_rng(7)
        streams = [wave(*[(int(k), 4, int(rng.integers(1, 5))) for k in rng.choice([VALU, LOAD, LDS, WMMA], 200)],
                        WAIT_VM, WAIT_LGKM, BARRIER, END) for _ in range(4)]
        first = run([streams], count=6, resident=2, hit=0.7)
        again = run([streams], count=6, resident=2, hit=0.7)
        self.assertEqual(dataclasses.astuple(first), dataclasses.astuple(again))
        self.assertEqual(first.instructions, 6 * 4 * 204)

    def test_refusals(self):
        with self.assertRaisesRegex(ValueError, "instruction 99 of a table of 8"):
            run([[wave(99, END)]])
        with self.assertRaisesRegex(ValueError, r"\(n, 3\) array"):
            simulate.run(UNIT, TABLE, [[np.zeros((2, 2), dtype=np.int32)]], 1, 1, 1.0)
        with self.assertRaisesRegex(ValueError, "does not end with s_endpgm"):
            run([[wave(VALU, BARRIER)]])
        with self.assertRaisesRegex(ValueError, "no workgroup programs"):
            run([], count=1)
        with self.assertRaisesRegex(ValueError, "at least one workgroup"):
            run([[wave(END)]], resident=0)


if __name__ == "__main__":
    absltest.main()
