// The profile of a run: each wave's dynamic instruction stream (which instruction, in order,
// with what its memory access moved), the global memory lines each workgroup read and wrote,
// and the LDS cycles of each LDS instruction (bank conflicts counted exactly from the lanes'
// addresses). hk.perf times a launch from it; hk.emu.profile reports it.
#include <algorithm>

#include "operands.h"

namespace emu {

// Cycles the LDS takes to serve one instruction's lanes, each moving n bytes at addr[l] + off:
// the lanes are served in groups that move banks * bank_bytes bytes together; a group takes as
// many cycles as the most distinct words any one bank holds among them (lanes reading the same
// word share it).
uint32_t lds_cycles(const Profile& p, int wsize, const uint32_t* addr, uint64_t mask, uint32_t off, uint32_t n) {
  const uint32_t banks = p.lds_banks, word = p.lds_bank_bytes;
  const uint32_t per_group = std::max<uint32_t>(1, banks * word / std::max<uint32_t>(n, word));
  uint32_t cycles = 0;
  // Each bank's distinct words of a group, as lists through `next` (a bank holds few of them:
  // this is cheaper than sorting the group's words).
  uint32_t words[LANES * 4];
  int16_t next[LANES * 4], head[128];
  uint32_t per_bank[128];
  for (int g = 0; g < wsize; g += int(per_group)) {
    std::memset(head, 0xff, sizeof(int16_t) * banks);
    std::memset(per_bank, 0, sizeof(uint32_t) * banks);
    int count = 0;
    uint32_t worst = 0;
    for (int l = g; l < std::min<int>(wsize, g + int(per_group)); ++l) {
      if (!((mask >> l) & 1)) continue;
      for (uint32_t b = 0; b < std::max<uint32_t>(n, 1); b += word) {
        uint32_t x = (addr[l] + off + b) / word, bank = x % banks;
        int16_t i = head[bank];
        while (i >= 0 && words[i] != x) i = next[i];
        if (i >= 0) continue;                     // lanes reading the same word share it
        words[count] = x;
        next[count] = head[bank];
        head[bank] = int16_t(count++);
        worst = std::max(worst, ++per_bank[bank]);
      }
    }
    cycles += worst;
  }
  return cycles;
}

void profile_lds(Machine& m, Wave& w, const uint32_t* addr, uint64_t mask, uint32_t off, uint32_t n) {
  Profile& p = *m.prof;
  uint32_t bytes = uint32_t(__builtin_popcountll(mask)) * n;
  uint32_t cycles = lds_cycles(p, w.wsize, addr, mask, off, n);
  p.a += bytes;
  p.b += cycles;
}

void profile_vmem(Machine& m, const uint64_t* addr, uint64_t mask, uint32_t n, bool store, int wsize) {
  Profile& p = *m.prof;
  uint64_t lines[LANES * 2];
  int count = 0;
  for (int l = 0; l < wsize; ++l) {
    if (!((mask >> l) & 1)) continue;
    lines[count++] = addr[l] / p.line_bytes;
    if ((addr[l] + std::max<uint32_t>(n, 1) - 1) / p.line_bytes != addr[l] / p.line_bytes)
      lines[count++] = (addr[l] + n - 1) / p.line_bytes;
  }
  std::sort(lines, lines + count);
  count = int(std::unique(lines, lines + count) - lines);
  std::vector<uint64_t>& into = store ? p.written : p.read;
  into.insert(into.end(), lines, lines + count);
  p.a += uint32_t(__builtin_popcountll(mask)) * n;
  p.b += uint32_t(count);
}

void profile_step(Machine& m, const Wave& w, const Inst& in) {
  Profile& p = *m.prof;
  auto& s = p.streams[p.first_stream + size_t(w.id)];
  s.push_back(int32_t(&in - m.prog->insts.data()));
  s.push_back(int32_t(p.a));
  s.push_back(int32_t(p.b));
  p.a = p.b = 0;
}

void profile_workgroup_end(Machine& m) {
  Profile& p = *m.prof;
  for (std::vector<uint64_t>* v : {&p.read, &p.written}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  p.lines.push_back({std::move(p.read), std::move(p.written)});
  p.read.clear();
  p.written.clear();
}

}  // namespace emu
