// The wait-counter model. Every memory instruction leaves a Pending record until a wait retires
// it: registers it will write may not be read or written before then (a hazard), and LDS writes
// may not be outstanding at a barrier. Counters follow the hardware: VMEM loads return in order
// (gfx9: loads and stores together), LDS in order, SMEM in any order. A global->LDS copy (gfx9)
// counts on vmcnt and may stay in flight across a barrier (a pipelined loop keeps the next
// stage's copy in flight on purpose): what is a hazard is any wave touching the LDS bytes it
// still writes. LDS operations are not: the LDS performs the operations of all the waves of a
// workgroup in one order (LLVM's memory model waits on lgkmcnt before a barrier only when it
// orders global memory too), so one outstanding at a barrier precedes every LDS access any wave
// issues after it. With `randomize`, memory effects are deferred and retired at random legal
// moments, in a random legal order.
#include <algorithm>
#include <cstdio>

#include "operands.h"

namespace emu {

static const char* cnt_name(const Machine& m, int c) {
  bool g12 = m.family == RDNA4;
  switch (c) {
    case C_VMLOAD: return g12 ? "loadcnt" : "vmcnt";
    case C_VMSTORE: return g12 ? "storecnt" : (is_gfx9(m.family) ? "vmcnt" : "vscnt");
    case C_DS: return g12 ? "dscnt" : "lgkmcnt";
    case C_SMEM: return g12 ? "kmcnt" : "lgkmcnt";
    default: return "expcnt";
  }
}

static const Pending* find_writer(const Wave& w, int rfile, int reg, int n) {
  for (const Pending& p : w.pend)
    if (p.rfile == rfile && reg < p.reg + p.nreg && p.reg < reg + n) return &p;
  return nullptr;
}

static std::string reg_name(int rfile, int reg) {
  if (rfile == 2) return "s" + std::to_string(reg);
  return reg >= AGPR_BASE ? "a" + std::to_string(reg - AGPR_BASE) : "v" + std::to_string(reg);
}

static void report(Machine& m, Wave& w, const Inst& in, int rfile, int reg, int n) {
  for (int r = reg; r < reg + n; ++r) {
    const Pending* p = find_writer(w, rfile, r, 1);
    if (!p) continue;
    int idx = m.prog->index_of(p->pc);
    std::string text = idx >= 0 ? m.prog->text[size_t(idx)] : "?";
    char pcbuf[32];
    std::snprintf(pcbuf, sizeof pcbuf, "0x%x", p->pc);
    m.hazard(w, in, "uses " + reg_name(rfile, r) + " while the load into it at pc " + pcbuf + " (" + text +
                        ") is still outstanding: a wait on " + cnt_name(m, p->cnt) + " is missing");
  }
}

void check_vread(Machine& m, Wave& w, const Inst& in, int reg, int n) {
  for (int r = reg; r < reg + n && r < NVREG; ++r)
    if (w.vpend[r]) report(m, w, in, 1, reg, n);
}
void check_sread(Machine& m, Wave& w, const Inst& in, int reg, int n) {
  for (int r = reg; r < reg + n && r < NSREG; ++r)
    if (w.spend[r]) report(m, w, in, 2, reg, n);
}

// A load into VGPRs that earlier loads on the same in-order counter still write is safe: their
// data returns in issue order (the two halves of d16 loads, a destination reused after a dead
// load). Only writers on another counter are a hazard.
static void check_ordered_vwrite(Machine& m, Wave& w, const Inst& in, int reg, int n, int cnt) {
  for (int r = reg; r < reg + n && r < NVREG; ++r) {
    if (!w.vpend[r]) continue;
    for (const Pending& p : w.pend)
      if (p.rfile == 1 && r >= p.reg && r < p.reg + p.nreg && p.cnt != cnt) {
        report(m, w, in, 1, r, 1);
        return;
      }
  }
}

Pending& issue(Machine& m, Wave& w, const Inst& in, Cnt cnt, Pipe pipe, int rfile, int reg, int nreg) {
  if (rfile == 1 && (cnt == C_VMLOAD || cnt == C_DS)) check_ordered_vwrite(m, w, in, reg, nreg, cnt);
  else if (rfile == 1) check_vread(m, w, in, reg, nreg);
  if (rfile == 2) check_sread(m, w, in, reg, nreg);
  w.pend.emplace_back();
  Pending& p = w.pend.back();
  p.seq = m.seq++;
  p.cnt = cnt;
  p.pipe = pipe;
  p.rfile = uint8_t(rfile);
  p.reg = uint16_t(reg);
  p.nreg = uint16_t(nreg);
  p.pc = in.pc;
  p.op = in.op;
  return p;
}

static void drain(Machine& m, Wave& w, int mask, int n);

// A counter saturates: an op issued while its counter holds the largest value it can stalls
// until the oldest op of that counter completes, and compilers count on it (with lgkmcnt 4 bits
// wide on gfx9, the first of 16 LDS ops is complete when the 16th issues: no wait guards it).
static void saturate(Machine& m, Wave& w, int cnt) {
  int mask = 1 << cnt, most = 63;
  if (cnt == C_DS || cnt == C_SMEM) {
    if (m.family == RDNA4) most = cnt == C_SMEM ? 31 : 63;                 // dscnt, kmcnt
    else { mask = (1 << C_DS) | (1 << C_SMEM); most = is_gfx9(m.family) ? 15 : 63; }   // lgkmcnt
  } else if (is_gfx9(m.family) && (cnt == C_VMLOAD || cnt == C_VMSTORE)) {
    mask = (1 << C_VMLOAD) | (1 << C_VMSTORE);                            // vmcnt counts both
  } else if (cnt == C_EXP) {
    most = 7;
  }
  drain(m, w, mask, most);
}

void finish_issue(Machine& m, Wave& w, Pending& p) {
  for (int r = p.reg; r < p.reg + p.nreg; ++r) {
    if (p.rfile == 1 && r < NVREG) { if (!w.vpend[r]++) ++w.npend; }
    if (p.rfile == 2 && r < NSREG && r != R_NULL) { if (!w.spend[r]++) ++w.npend; }
  }
  saturate(m, w, p.cnt);                       // may retire older ops: p is not used after
}

static void release(Wave& w, const Pending& p) {
  for (int r = p.reg; r < p.reg + p.nreg; ++r) {
    if (p.rfile == 1 && r < NVREG && w.vpend[r]) { if (!--w.vpend[r]) --w.npend; }
    if (p.rfile == 2 && r < NSREG && w.spend[r]) { if (!--w.spend[r]) --w.npend; }
  }
}

// Completes the op with sequence number `seq`, first completing older ops of the same memory
// pipe so that a wave's own accesses to one memory take effect in program order.
static void retire_seq(Machine& m, Wave& w, uint64_t seq) {
  for (;;) {
    size_t i = 0;
    while (i < w.pend.size() && w.pend[i].seq != seq) ++i;
    if (i == w.pend.size()) return;
    uint8_t pipe = w.pend[i].pipe;
    size_t j = 0;
    if (pipe == P_VMEM || pipe == P_LDS)
      while (j < i && w.pend[j].pipe != pipe) ++j;
    else
      j = i;
    if (j < i) { retire_seq(m, w, w.pend[j].seq); continue; }
    Pending p = std::move(w.pend[i]);
    w.pend.erase(w.pend.begin() + long(i));
    if (p.effect) p.effect();
    release(w, p);
    if (p.dma)
      for (size_t k = 0; k < m.dma.size(); ++k)
        if (m.dma[k].seq == p.seq) {
          lds_landed(m, w, m.dma[k].lo, m.dma[k].hi, m.dma[k].pc);
          m.dma.erase(m.dma.begin() + long(k));
          break;
        }
    return;
  }
}
static void retire_at(Machine& m, Wave& w, size_t i) { retire_seq(m, w, w.pend[i].seq); }

static bool in_group(const Pending& p, int mask) {
  if ((mask >> p.cnt) & 1) return true;
  // FLAT counts on LGKM too; on gfx9 stores count on vmcnt (they are issued as C_VMLOAD there).
  if (p.lgkm_too && ((mask >> C_DS) & 1)) return true;
  return false;
}

// Retires ops of the group until at most n remain. In-order classes retire oldest first; SMEM may
// retire in any order (randomised), which is why only lgkmcnt(0) orders scalar loads.
static void drain(Machine& m, Wave& w, int mask, int n) {
  int count = 0;
  for (const Pending& p : w.pend) count += in_group(p, mask);
  while (count > n) {
    size_t pick = w.pend.size();
    if (m.deferred()) {
      std::vector<size_t> cand;
      bool seen[C_N] = {};
      for (size_t i = 0; i < w.pend.size(); ++i) {
        const Pending& p = w.pend[i];
        if (!in_group(p, mask)) continue;
        if (p.cnt == C_SMEM) cand.push_back(i);
        else if (!seen[p.cnt]) { seen[p.cnt] = true; cand.push_back(i); }
      }
      pick = cand[m.rng() % cand.size()];
      retire_at(m, w, pick);              // may retire older ops of the group too: count again
      count = 0;
      for (const Pending& p : w.pend) count += in_group(p, mask);
    } else {
      for (size_t i = 0; i < w.pend.size(); ++i)
        if (in_group(w.pend[i], mask)) { pick = i; break; }
      retire_at(m, w, pick);              // the ops older than the first of the group are not in it
      --count;
    }
  }
}

void wait_counts(Machine& m, Wave& w, const Inst& in, int vm, int lgkm, int exp, int vs) {
  (void)in;
  if (w.pend.empty()) return;
  if (vm >= 0) drain(m, w, is_gfx9(m.family) ? (1 << C_VMLOAD) | (1 << C_VMSTORE) : (1 << C_VMLOAD), vm);
  if (vs >= 0) drain(m, w, 1 << C_VMSTORE, vs);
  if (lgkm >= 0) drain(m, w, (1 << C_DS) | (1 << C_SMEM), lgkm);
  if (exp >= 0) drain(m, w, 1 << C_EXP, exp);
}

void wait_gfx12(Machine& m, Wave& w, int mask, int n) {
  if (!w.pend.empty()) drain(m, w, mask, n);
}

void retire_all(Machine& m, Wave& w) {
  while (!w.pend.empty()) retire_at(m, w, 0);
}

// Randomised order: now and then, complete one outstanding op that could legally complete now.
void random_step(Machine& m, Wave& w) {
  if (w.pend.empty() || (m.rng() & 3)) return;
  std::vector<size_t> cand;
  bool seen[C_N] = {};
  for (size_t i = 0; i < w.pend.size(); ++i) {
    const Pending& p = w.pend[i];
    if (p.cnt == C_SMEM) cand.push_back(i);
    else if (!seen[p.cnt]) { seen[p.cnt] = true; cand.push_back(i); }
  }
  retire_at(m, w, cand[m.rng() % cand.size()]);
}

// A barrier with LDS operations outstanding: they precede, in the LDS's one order, whatever any
// wave issues after the barrier, so a randomised order performs them now; the registers they
// write stay outstanding until the wave's own wait.
void barrier_check(Machine& m, Wave& w, const Inst& in) {
  (void)m; (void)in;
  for (Pending& p : w.pend) {
    if (p.pipe != P_LDS || !p.effect) continue;
    std::function<void()> effect = std::move(p.effect);
    p.effect = nullptr;
    effect();
  }
}

// An LDS access of `n` bytes at addr[l] + off by the lanes in `mask`, against the copies in flight.
void dma_check(Machine& m, Wave& w, const Inst& in, const uint32_t* addr, uint64_t mask, uint32_t off, uint32_t n) {
  for (const DmaWrite& d : m.dma)
    for (int l = 0; l < w.wsize; ++l) {
      if (!((mask >> l) & 1)) continue;
      uint32_t lo = addr[l] + off;
      if (lo >= d.hi || lo + n <= d.lo) continue;
      int idx = m.prog->index_of(d.pc);
      char buf[96];
      std::snprintf(buf, sizeof buf, "0x%x (", d.pc);
      m.hazard(w, in, "touches LDS bytes " + std::to_string(lo) + "-" + std::to_string(lo + n - 1) +
                          " that the global->LDS copy at pc " + buf +
                          (idx >= 0 ? m.prog->text[size_t(idx)] : std::string("?")) + ") of wave " +
                          std::to_string(d.wave) + " is still writing: the copy counts on vmcnt; " +
                          (d.wave == w.id ? "wait for it before the access"
                                          : "that wave must wait for it, then meet this one at a barrier, before the access"));
    }
}

}  // namespace emu
