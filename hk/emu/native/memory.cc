// Device memory regions, instruction lookup by address, and error messages that name the kernel,
// the instruction and its address.
#include <algorithm>
#include <cstdio>

#include "emu.h"

namespace emu {

static std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

uint64_t Memory::alloc(uint64_t size, uint64_t at) {
  uint64_t base = at ? at : next_;
  if (!at) next_ = (base + size + 0xffff + 0x10000) & ~0xffffull;   // a guard gap after each buffer
  Region r{base, size, {static_cast<uint8_t*>(std::calloc(size ? size : 1, 1)), std::free}};
  if (!r.data) throw Fault("cannot allocate " + std::to_string(size) + " bytes of device memory");
  auto pos = std::lower_bound(regions.begin(), regions.end(), base,
                              [](const Region& a, uint64_t b) { return a.base < b; });
  regions.insert(pos, std::move(r));
  last_ = 0;
  return base;
}

Region* Memory::find(uint64_t addr, uint64_t n) {
  if (last_ < regions.size()) {
    Region& r = regions[last_];
    if (addr >= r.base && addr + n <= r.base + r.size) return &r;
  }
  auto it = std::upper_bound(regions.begin(), regions.end(), addr,
                             [](uint64_t a, const Region& b) { return a < b.base; });
  if (it == regions.begin()) return nullptr;
  --it;
  if (addr >= it->base && addr + n <= it->base + it->size) {
    last_ = size_t(it - regions.begin());
    return &*it;
  }
  return nullptr;
}

uint8_t* Memory::ptr_found(uint64_t addr, uint64_t n, const char* what) {
  Region* r = find(addr, n);
  if (!r) throw MemFault(std::string(what) + " of " + std::to_string(n) + " bytes at " + hex(addr) +
                         " is outside every buffer");
  return r->data.get() + (addr - r->base);
}

int Program::index_of(uint64_t pc) const {
  if (pc < text_base || pc >= text_end || (pc - text_base) % 4) return -1;
  return pc_index[(pc - text_base) / 4];
}

std::string Machine::where(const Wave& w, const Inst& in) const {
  size_t idx = size_t(&in - prog->insts.data());
  std::string text = idx < prog->text.size() ? prog->text[idx] : "?";
  return "kernel " + kernel + ", pc " + hex(in.pc) + " (" + text + "), workgroup (" +
         std::to_string(wg_id[0]) + "," + std::to_string(wg_id[1]) + "," + std::to_string(wg_id[2]) +
         ") wave " + std::to_string(w.id);
}

void Machine::fail(const Wave& w, const Inst& in, const std::string& msg) const {
  throw Fault(where(w, in) + ": " + msg);
}

void Machine::hazard(const Wave& w, const Inst& in, const std::string& msg) const {
  throw Hazard("hazard in " + where(w, in) + ": " + msg);
}

}  // namespace emu
