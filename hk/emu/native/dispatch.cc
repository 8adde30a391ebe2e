// Running a dispatch: workgroups one after another; within a workgroup, waves interleave and meet
// at barriers. Each wave starts as the hardware starts it: user SGPRs, then the workgroup ids
// (and ttmp7-ttmp9 on gfx12), EXEC for its lanes, and the work-item ids in v0 (packed x | y << 10
// | z << 20) or in v0, v1, v2.
#include <algorithm>

#include "operands.h"

namespace emu {

static void barrier_try_release(Machine& m) {
  if (m.barrier_arrived == 0 || m.barrier_arrived < m.live) return;
  m.barrier_gen++;
  m.barrier_arrived = 0;
  races_interval(m);
  for (Wave& w : m.waves) {
    if (w.state == Wave::BARRIER) w.state = Wave::RUN;
    w.signalled = false;
  }
}

void barrier_signal(Machine& m, Wave& w) {
  if (w.signalled) return;
  w.signalled = true;
  w.barrier_gen = m.barrier_gen;
  m.barrier_arrived++;
  barrier_try_release(m);
}

bool barrier_blocked(Machine& m, Wave& w) { return w.signalled && w.barrier_gen == m.barrier_gen; }

void wave_end(Machine& m, Wave& w) {
  retire_all(m, w);
  w.state = Wave::DONE;
  if (w.signalled) { w.signalled = false; m.barrier_arrived--; }
  m.live--;
  barrier_try_release(m);
}

// VOPD: both halves read their sources before either writes.
static void run_vopd(Machine& m, Wave& w, const Inst& x, const Inst& y, const Handler* h) {
  uint32_t before[LANES], after[LANES];
  int xd = x.d[0].reg;
  std::memcpy(before, w.vr(xd), sizeof before);
  h[x.op](m, w, x);
  std::memcpy(after, w.vr(xd), sizeof after);
  std::memcpy(w.vr(xd), before, sizeof before);
  h[y.op](m, w, y);
  std::memcpy(w.vr(xd), after, sizeof after);
}

static void run_wave(Machine& m, Wave& w, uint64_t quantum) {
  const std::vector<Inst>& insts = m.prog->insts;
  const Handler* h = m.handlers->data();
  const int n = int(insts.size());
  const bool rnd = m.opt.randomize;
  const Inst* cur = nullptr;
  try {
    while (w.state == Wave::RUN && quantum--) {
      if (w.pc < 0 || w.pc >= n) throw Fault("kernel " + m.kernel + ": the program counter left the code object");
      cur = &insts[size_t(w.pc)];
      ++w.pc;
      if (cur->flags & F_VOPD) {
        if (w.pc >= n) m.fail(w, *cur, "a VOPD instruction without its second half");
        run_vopd(m, w, *cur, insts[size_t(w.pc)], h);
        ++w.pc;
      } else {
        h[cur->op](m, w, *cur);
      }
      if (m.prof) profile_step(m, w, *cur);
      if (rnd) random_step(m, w);
      if (m.yield_now) { m.yield_now = false; ++m.executed; break; }
      if (++m.executed > m.opt.max_instructions)
        m.fail(w, *cur, "more than " + std::to_string(m.opt.max_instructions) +
                            " wave-instructions executed (an endless loop?)");
    }
  } catch (const MemFault& e) {
    if (cur) throw MemFault("memory fault in " + m.where(w, *cur) + ": " + e.what());
    throw;
  }
}

static void init_wave(Machine& m, const Launch& l, Wave& w, int idx, uint32_t nthreads) {
  w.wsize = l.wsize;
  w.full = l.wsize == 64 ? ~0ull : 0xffffffffull;
  w.id = idx;
  w.state = Wave::RUN;
  w.pc = int(l.entry);
  w.scc = false;
  w.signalled = false;
  w.pend.clear();
  std::memset(w.s, 0, sizeof w.s);
  std::memset(w.vpend, 0, sizeof w.vpend);
  std::memset(w.spend, 0, sizeof w.spend);
  w.npend = 0;
  if (w.v.size() != size_t(NVREG + 32) * LANES) w.v.assign(size_t(NVREG + 32) * LANES, 0);
  std::fill(w.v.begin(), w.v.begin() + long(std::min<uint32_t>(l.nvgpr, NVREG)) * LANES, 0u);
  int s = 0;
  for (uint32_t u : l.user_sgprs) w.s[s++] = u;
  for (int d = 0; d < 3; ++d) if (l.wg_id_en[d]) w.s[s++] = m.wg_id[d];
  if (l.wg_info_en) w.s[s++] = 0;
  if (l.private_en) w.s[s++] = 0;            // private segment wave offset: scratch is per wave here
  w.s[R_TTMP0 + 9] = m.wg_id[0];             // gfx12 architected SGPRs
  w.s[R_TTMP0 + 7] = m.wg_id[1] | (m.wg_id[2] << 16);
  w.s[R_TTMP0 + 8] = uint32_t(idx) << 25;    // [29:25] the wave's index in its workgroup
  uint64_t exec = 0;
  uint32_t* v0 = w.vr(0);
  uint32_t* v1 = w.vr(1);
  uint32_t* v2 = w.vr(2);
  for (int lane = 0; lane < w.wsize; ++lane) {
    uint32_t t = uint32_t(idx * w.wsize + lane);
    if (t >= nthreads) continue;
    exec |= 1ull << lane;
    uint32_t x = t % l.block[0], y = (t / l.block[0]) % l.block[1], z = t / (l.block[0] * l.block[1]);
    if (l.packed_tid) {
      v0[lane] = x | (l.vgpr_workitem_id >= 1 ? y << 10 : 0) | (l.vgpr_workitem_id >= 2 ? z << 20 : 0);
    } else {
      v0[lane] = x;
      if (l.vgpr_workitem_id >= 1) v1[lane] = y;
      if (l.vgpr_workitem_id >= 2) v2[lane] = z;
    }
  }
  w.set_exec(exec);
  w.psize = l.private_bytes;
  w.scratch.assign(size_t(l.private_bytes) * size_t(w.wsize), 0);
}

uint64_t run_dispatch(Machine& m, const Launch& l) {
  uint32_t nthreads = l.block[0] * l.block[1] * l.block[2];
  if (nthreads == 0 || nthreads > 1024) throw Fault("a workgroup must have 1 to 1024 work-items");
  int nwaves = int((nthreads + uint32_t(l.wsize) - 1) / uint32_t(l.wsize));
  m.waves.resize(size_t(nwaves));
  m.rng.seed(m.opt.seed);
  const uint64_t quantum = m.opt.randomize ? 0 : (1ull << 62);
  // A profiled run runs the workgroups it lists; any other, every workgroup in order.
  std::vector<std::array<uint32_t, 3>> order;
  if (m.prof) order = m.prof->workgroups;
  else
    for (uint32_t gz = 0; gz < l.grid[2]; ++gz)
      for (uint32_t gy = 0; gy < l.grid[1]; ++gy)
        for (uint32_t gx = 0; gx < l.grid[0]; ++gx) order.push_back({gx, gy, gz});
  for (const auto& g : order) {
    m.wg_id[0] = g[0]; m.wg_id[1] = g[1]; m.wg_id[2] = g[2];
    if (m.prof) {
      m.prof->first_stream = m.prof->streams.size();
      m.prof->streams.resize(m.prof->first_stream + size_t(nwaves));
    }
    m.lds.assign(l.lds_bytes, 0);
    if (m.opt.randomize)                 // uninitialised LDS holds garbage on hardware
      for (auto& b : m.lds) b = uint8_t(m.rng());
    for (int i = 0; i < nwaves; ++i) init_wave(m, l, m.waves[size_t(i)], i, nthreads);
    m.dma.clear();                       // of a workgroup a prefix profile left
    races_begin(m, l.lds_bytes);
    m.live = uint32_t(nwaves);
    m.barrier_arrived = 0;
    // A profile of a prefix runs each wave a slice at a time and leaves the workgroup once it
    // has run its share of wave-instructions (its memory lines are what is wanted).
    const uint64_t prefix = m.prof ? m.prof->prefix : 0;
    const uint64_t first = m.executed;
    for (;;) {
      bool ran = false;
      int start = m.opt.randomize ? int(m.rng() % uint64_t(nwaves)) : 0;
      for (int k = 0; k < nwaves; ++k) {
        Wave& w = m.waves[size_t((start + k) % nwaves)];
        if (w.state != Wave::RUN) continue;
        run_wave(m, w, prefix ? std::max<uint64_t>(1, prefix / uint64_t(nwaves) / 8) : quantum ? quantum : 1 + m.rng() % 48);
        ran = true;
      }
      if (m.live == 0 || (prefix && m.executed - first >= prefix)) break;
      if (!ran) throw Fault("kernel " + m.kernel + ": every wave waits at a barrier that can never complete");
    }
    if (m.prof) profile_workgroup_end(m);
  }
  return m.executed;
}

}  // namespace emu
