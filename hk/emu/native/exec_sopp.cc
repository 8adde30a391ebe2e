// Program control: branches, calls (s_getpc/s_setpc/s_swappc/s_call), s_endpgm, barriers (gfx9
// and gfx11 s_barrier, gfx12 s_barrier_signal/s_barrier_wait), the wait instructions, s_getreg
// and the instructions that only schedule or hint (s_nop, s_delay_alu, s_clause, cache controls).
#include "operands.h"

namespace emu {

void barrier_signal(Machine& m, Wave& w);
bool barrier_blocked(Machine& m, Wave& w);
void wave_end(Machine& m, Wave& w);

H(s_nop) { (void)m; (void)w; (void)in; }
H(s_endpgm) { (void)in; wave_end(m, w); }
H(s_branch) { (void)m; w.pc = in.target; }
H(s_cbranch_scc0) { (void)m; if (!w.scc) w.pc = in.target; }
H(s_cbranch_scc1) { (void)m; if (w.scc) w.pc = in.target; }
H(s_cbranch_vccz) {
  (void)m;
  uint64_t vcc = w.s[R_VCC_LO] | (w.wsize == 64 ? uint64_t(w.s[R_VCC_HI]) << 32 : 0);
  if (vcc == 0) w.pc = in.target;
}
H(s_cbranch_vccnz) {
  (void)m;
  uint64_t vcc = w.s[R_VCC_LO] | (w.wsize == 64 ? uint64_t(w.s[R_VCC_HI]) << 32 : 0);
  if (vcc != 0) w.pc = in.target;
}
H(s_cbranch_execz) { (void)m; if (w.exec() == 0) w.pc = in.target; }
H(s_cbranch_execnz) { (void)m; if (w.exec() != 0) w.pc = in.target; }

static uint64_t next_pc(Machine& m, const Inst& in) { (void)m; return CODE_BASE + in.pc + in.size; }
H(s_getpc_b64) { sset64(m, w, in, in.d[0], next_pc(m, in)); }
static int jump_index(Machine& m, Wave& w, const Inst& in, uint64_t addr) {
  if (addr < CODE_BASE) m.fail(w, in, "jump to an address outside the code object");
  return m.prog->index_of(addr - CODE_BASE);
}
H(s_setpc_b64) { w.pc = jump_index(m, w, in, sget64(m, w, in, in.s[0])); }
H(s_swappc_b64) {
  uint64_t to = sget64(m, w, in, in.s[0]);
  sset64(m, w, in, in.d[0], next_pc(m, in));
  w.pc = jump_index(m, w, in, to);
}
H(s_call_b64) {
  sset64(m, w, in, in.d[0], next_pc(m, in));
  w.pc = in.target;
}

// ---- barriers ----
H(s_barrier) {
  if (m.opt.hazards) barrier_check(m, w, in);
  barrier_signal(m, w);
  if (barrier_blocked(m, w)) { w.state = Wave::BARRIER; }
}
H(s_barrier_signal) {
  if (m.opt.hazards) barrier_check(m, w, in);
  barrier_signal(m, w);
}
H(s_barrier_wait) {
  (void)in;
  if (barrier_blocked(m, w)) w.state = Wave::BARRIER;
}

// ---- waits: aux[] holds the thresholds, -1 where the instruction does not wait ----
H(s_waitcnt) {
  if (m.opt.hazards) wait_counts(m, w, in, in.aux[0], in.aux[1], in.aux[2], in.aux[3]);
}
// gfx10/11 SOPK forms: `s_waitcnt_vscnt null, N` (the count is the immediate).
H(s_waitcnt_vscnt) { if (m.opt.hazards) wait_counts(m, w, in, -1, -1, -1, int(in.s[1].imm32 & 0xffff)); }
H(s_waitcnt_vmcnt) { if (m.opt.hazards) wait_counts(m, w, in, int(in.s[1].imm32 & 0xffff), -1, -1, -1); }
H(s_waitcnt_lgkmcnt) { if (m.opt.hazards) wait_counts(m, w, in, -1, int(in.s[1].imm32 & 0xffff), -1, -1); }
H(s_waitcnt_expcnt) { if (m.opt.hazards) wait_counts(m, w, in, -1, -1, int(in.s[1].imm32 & 0xffff), -1); }
// gfx12: one instruction per counter; the bit masks name our counter classes.
#define WAIT12(NAME, MASK) H(NAME) { if (m.opt.hazards) wait_gfx12(m, w, (MASK), int(in.s[0].imm32 & 0xffff)); }
WAIT12(s_wait_loadcnt, 1 << C_VMLOAD)
WAIT12(s_wait_storecnt, 1 << C_VMSTORE)
WAIT12(s_wait_dscnt, 1 << C_DS)
WAIT12(s_wait_kmcnt, 1 << C_SMEM)
WAIT12(s_wait_expcnt, 1 << C_EXP)
WAIT12(s_wait_samplecnt, 1 << C_VMLOAD)
WAIT12(s_wait_bvhcnt, 1 << C_VMLOAD)
H(s_wait_loadcnt_dscnt) {
  if (!m.opt.hazards) return;
  uint32_t v = in.s[0].imm32;
  wait_gfx12(m, w, 1 << C_VMLOAD, int((v >> 8) & 0x3f));
  wait_gfx12(m, w, 1 << C_DS, int(v & 0x3f));
}
H(s_wait_storecnt_dscnt) {
  if (!m.opt.hazards) return;
  uint32_t v = in.s[0].imm32;
  wait_gfx12(m, w, 1 << C_VMSTORE, int((v >> 8) & 0x3f));
  wait_gfx12(m, w, 1 << C_DS, int(v & 0x3f));
}

// ---- hardware registers: aux[0] our id, aux[1] offset, aux[2] size ----
enum HwReg { HW_MODE = 1, HW_STATUS, HW_HW_ID, HW_GPR_ALLOC, HW_LDS_ALLOC, HW_SH_MEM_BASES, HW_XCC_ID,
             HW_OTHER };
H(s_getreg_b32) {
  uint32_t v = 0;
  switch (in.aux[0]) {
    case HW_MODE: v = 0xf0; break;                                   // round to nearest, denormals kept
    case HW_HW_ID: v = uint32_t(w.id) & 0xf; break;
    case HW_SH_MEM_BASES: v = (SHARED_HI & 0xffff0000u) | (PRIVATE_HI >> 16); break;
    case HW_LDS_ALLOC: v = uint32_t(m.lds.size() / 512) << 12; break;
    default: v = 0;
  }
  uint32_t off = uint32_t(in.aux[1] < 0 ? 0 : in.aux[1]), size = uint32_t(in.aux[2] <= 0 ? 32 : in.aux[2]);
  v = (v >> off) & (size >= 32 ? ~0u : ((1u << size) - 1));
  sset(m, w, in, in.d[0], v);
}
H(s_setreg_b32) { (void)m; (void)w; (void)in; }   // MODE changes are not modelled
H(s_memtime) { sset64(m, w, in, in.d[0], m.executed); }
H(s_trap) { m.fail(w, in, "s_trap: the kernel trapped (an assert or __trap())"); }
H(s_code_end) { m.fail(w, in, "execution ran past the end of the kernel (s_code_end)"); }
H(s_sleep) { (void)w; (void)in; m.yield_now = true; }   // a spin-wait gives the other waves a turn

void register_sopp(Registry& r) {
#define R(name) r.add(#name, name);
  R(s_nop) R(s_endpgm) R(s_branch) R(s_cbranch_scc0) R(s_cbranch_scc1) R(s_cbranch_vccz)
  R(s_cbranch_vccnz) R(s_cbranch_execz) R(s_cbranch_execnz) R(s_getpc_b64) R(s_setpc_b64)
  R(s_swappc_b64) R(s_call_b64) R(s_barrier) R(s_barrier_signal) R(s_barrier_wait) R(s_waitcnt)
  R(s_waitcnt_vscnt) R(s_waitcnt_vmcnt) R(s_waitcnt_lgkmcnt) R(s_waitcnt_expcnt) R(s_wait_loadcnt)
  R(s_wait_storecnt) R(s_wait_dscnt) R(s_wait_kmcnt) R(s_wait_expcnt) R(s_wait_samplecnt)
  R(s_wait_bvhcnt) R(s_wait_loadcnt_dscnt) R(s_wait_storecnt_dscnt) R(s_getreg_b32) R(s_setreg_b32)
  R(s_memtime) R(s_trap) R(s_code_end) R(s_sleep)
#undef R
  // Scheduling hints, cache maintenance and messages: no effect on results here.
  for (const char* n : {"s_delay_alu", "s_clause", "s_setprio", "s_sethalt", "s_sendmsg", "s_icache_inv",
                        "s_wait_alu", "s_wait_idle", "s_ttracedata", "s_setreg_imm32_b32", "s_denorm_mode",
                        "s_round_mode", "s_dcache_inv", "s_dcache_wb", "s_gl1_inv", "buffer_gl0_inv",
                        "buffer_gl1_inv", "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_inv",
                        "buffer_wbl2", "global_inv", "global_wb", "global_wbinv", "s_version",
                        "s_inst_prefetch", "s_prefetch_inst", "s_set_inst_prefetch_distance",
                        "s_singleuse_vdst", "s_wait_event", "s_waitcnt_depctr", "s_sendmsg_rtn_b32", "s_sendmsghalt"})
    r.add(n, s_nop);
}

}  // namespace emu
