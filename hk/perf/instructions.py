"""What each instruction of a code object is to the timing model: its class, and what decides its
cost (a matrix instruction's cycles and FLOPs, the counts a wait waits for, a nop's cycles).

The classes follow the units an instruction occupies: the SIMD's vector ALU (VALU, and the
quarter-rate transcendentals), its matrix unit, the scalar ALU, the CU's LDS, its vector memory
pipe (loads, stores, global->LDS copies), the scalar cache, and the sequencer (waits, barriers,
branches, nops).
"""

import re

import numpy as np

SALU, VALU, TRANS, MATRIX, LDS, LOAD, STORE, COPY, SMEM, WAIT, BARRIER, BRANCH, END, NOP, FREE = range(15)
NAMES = ("salu", "valu", "trans", "matrix", "lds", "load", "store", "copy", "smem", "wait", "barrier", "branch",
         "end", "nop", "free")

# Counters a wait names, as the model keeps them: vector memory (loads; on gfx9 stores and copies
# too), vector stores (gfx10+), LDS with scalar memory.
VM, VS, LGKM = range(3)

_TRANS = re.compile(r"^v_(exp|log|rcp|rsq|sqrt|sin|cos)_")
_MATRIX = re.compile(r"^v_(wmma|mfma|smfmac)_")
_SHAPE = re.compile(r"(\d+)x(\d+)x(\d+)")
_WAIT_FIELD = re.compile(r"(vmcnt|lgkmcnt|vscnt|expcnt)\((\d+)\)")
_GFX12_WAIT = {"s_wait_loadcnt": VM, "s_wait_storecnt": VS, "s_wait_dscnt": LGKM, "s_wait_kmcnt": LGKM}
_FREE = ("s_setprio", "s_sched_barrier", "s_set_inst_prefetch_distance", "s_delay_alu", "s_clause",
         "s_waitcnt_depctr", "s_inst_prefetch", "s_trap", "s_icache_inv", "s_dcache_inv", "s_sethalt",
         "s_version", "s_code_end", "s_wait_idle", "s_singleuse_vdst", "s_wait_alu", "s_wait_event",
         "s_wait_expcnt", "s_wait_samplecnt", "s_wait_bvhcnt")


def mnemonic(text):
    """An instruction's mnemonic as the ISA names it (the emulator's core shares handlers between
    opcodes: its names are coarser), without encoding suffixes."""
    word = text.split(None, 1)[0] if text.strip() else ""
    return re.sub(r"_(e32|e64|dpp|sdwa)$", "", word)


class Table:
    """Per instruction index of a code object: class, matrix cycles and FLOPs, wait counts
    (-1 where a counter is not waited for), nop cycles."""

    def __init__(self, listing, matrix_cycles):
        n = len(listing)
        self.cls = np.full(n, FREE, dtype=np.int8)
        self.cycles = np.zeros(n, dtype=np.float64)     # matrix: cycles of the matrix unit; nop: cycles
        self.flops = np.zeros(n, dtype=np.float64)
        self.waits = np.full((n, 3), -1, dtype=np.int32)
        self.unknown_matrix = set()
        for i, (_, text, _) in enumerate(listing):
            self.cls[i], self.cycles[i], self.flops[i] = self._classify(i, mnemonic(text), text, matrix_cycles)

    def _classify(self, i, op, text, matrix_cycles):
        if _MATRIX.match(op):
            m, n, k = (int(x) for x in _SHAPE.search(op).groups()) if _SHAPE.search(op) else (16, 16, 16)
            cycles = matrix_cycles(op)
            if cycles is None:
                self.unknown_matrix.add(op)
                cycles = 0.0
            return MATRIX, cycles, 2.0 * m * n * k
        if op.startswith("ds_"):
            return LDS, 0, 0
        if op.startswith(("global_load_lds", "buffer_load_lds")) or (
                op.startswith(("buffer_load", "global_load")) and re.search(r"\blds\b", text)):
            return COPY, 0, 0
        if op.startswith(("global_load", "buffer_load", "flat_load", "scratch_load")):
            return LOAD, 0, 0
        if op.startswith(("global_store", "buffer_store", "flat_store", "scratch_store")):
            return STORE, 0, 0
        if op.startswith(("global_atomic", "buffer_atomic", "flat_atomic")):
            return (LOAD if re.search(r"\b(glc|sc0|th:TH_ATOMIC_RETURN)\b", text) else STORE), 0, 0
        if op.startswith(("s_load", "s_buffer_load", "s_scratch_load")):
            return SMEM, 0, 0
        if op.startswith(_FREE):
            return FREE, 0, 0
        if op.startswith("s_waitcnt") or op.startswith("s_wait_"):
            self._wait(i, op, text)
            return WAIT, 0, 0
        if op.startswith("s_barrier"):
            return BARRIER, 0, 0
        if op in ("s_endpgm",):
            return END, 0, 0
        if op.startswith(("s_branch", "s_cbranch", "s_setpc", "s_swappc", "s_call", "s_getpc")):
            return BRANCH, 0, 0
        if op == "s_nop":
            m = re.search(r"s_nop\s+(0x[0-9a-fA-F]+|\d+)", text)
            return NOP, 1 + (int(m.group(1), 0) if m else 0), 0
        if op in ("s_sleep",):
            m = re.search(r"s_sleep\s+(0x[0-9a-fA-F]+|\d+)", text)
            return NOP, 64 * (int(m.group(1), 0) if m else 1), 0
        if op.startswith("s_"):
            return SALU, 0, 0
        if _TRANS.match(op):
            return TRANS, 0, 0
        if op.startswith("v_"):
            return VALU, 0, 0
        return FREE, 0, 0

    def _wait(self, i, op, text):
        w = self.waits[i]
        if op in ("s_waitcnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt", "s_waitcnt_vscnt"):
            fields = dict((k, int(v)) for k, v in _WAIT_FIELD.findall(text))
            tail = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else ""
            if op == "s_waitcnt" and not fields and tail.strip() in ("0", "0x0"):
                fields = {"vmcnt": 0, "lgkmcnt": 0}
            if op != "s_waitcnt":       # SOPK forms: `s_waitcnt_vscnt null, 0x0`
                count = int(tail.split(",")[-1].strip(), 0) if tail else 0
                fields = {op[len("s_waitcnt_"):]: count}
            if "vmcnt" in fields:
                w[VM] = fields["vmcnt"]
            if "vscnt" in fields:
                w[VS] = fields["vscnt"]
            if "lgkmcnt" in fields:
                w[LGKM] = fields["lgkmcnt"]
            return
        tail = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else "0"
        value = int(tail.split(",")[-1].strip(), 0)
        if op in _GFX12_WAIT:
            w[_GFX12_WAIT[op]] = value
        elif op in ("s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt"):
            w[VM if op == "s_wait_loadcnt_dscnt" else VS] = (value >> 8) & 0x3F
            w[LGKM] = value & 0x3F
