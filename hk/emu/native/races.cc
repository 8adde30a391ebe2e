// LDS races between the waves of a workgroup. Waves are ordered only by barriers, so between
// two barriers (an interval) a read of a byte another wave wrote, or a write of a byte another
// wave read or wrote, is a race: either order may happen. Each wave keeps bitmaps of the LDS
// bytes it read, wrote and updated atomically in the current interval, and the instructions
// that did (their pc and the bytes they spanned); an access that meets another wave's bits is
// reported as a hazard naming both instructions. Atomics of different waves do not race with
// each other, nor do plain stores of the same byte value (Triton's warps that hold copies of a
// value all store it). A global->LDS copy writes when its wave's wait retires it. Every bitmap
// empties when a barrier completes: what came before it is ordered before what comes after.
// Only another wave's write consults a read bitmap, so reads that met no rival are set in it
// when one does (settle), in program order, and most never are.
// (A gfx12 wave that signals a barrier and accesses LDS before waiting on it is counted in the
// interval the barrier ends.)
#include <algorithm>
#include <cstdio>

#include "operands.h"

namespace emu {

namespace {

// Bits [lo, lo + n) of a bitmap, n <= 16 (an LDS access moves at most 16 bytes per lane).
inline bool any_bits(const uint64_t* bits, uint32_t lo, uint32_t n) {
  uint32_t word = lo >> 6, from = lo & 63;
  uint64_t mask = ((1ull << n) - 1) << from;
  bool any = bits[word] & mask;
  if (from + n > 64) any |= bits[word + 1] & ((1ull << (from + n - 64)) - 1);
  return any;
}

inline void set_bits(uint64_t* bits, uint32_t lo, uint32_t n) {
  uint32_t word = lo >> 6, from = lo & 63;
  bits[word] |= ((1ull << n) - 1) << from;
  if (from + n > 64) bits[word + 1] |= (1ull << (from + n - 64)) - 1;
}

// set_bits for the lanes of one instruction: their bytes mostly fall in the same or the next
// word, so the bits gather in a register and reach memory once per word.
struct BitSink {
  uint64_t* bits;
  uint32_t word = ~0u;
  uint64_t acc = 0;
  void put(uint32_t w, uint64_t mask) {
    if (w != word) {
      flush();
      word = w;
      acc = 0;
    }
    acc |= mask;
  }
  void add(uint32_t lo, uint32_t n) {
    uint32_t w = lo >> 6, from = lo & 63;
    put(w, ((1ull << n) - 1) << from);
    if (from + n > 64) put(w + 1, (1ull << (from + n - 64)) - 1);
  }
  void flush() {
    if (word != ~0u) bits[word] |= acc;
  }
};

uint32_t first_bit(const LdsBits& s, uint32_t lo, uint32_t hi) {
  for (uint32_t b = lo; b < hi; ++b)
    if ((s.bits[b / 64] >> (b % 64)) & 1) return b;
  return lo;
}

void clear(LdsBits& s) {
  if (s.lo < s.hi) std::fill(s.bits.begin() + s.lo / 64, s.bits.begin() + (s.hi + 63) / 64, 0ull);
  s.lo = ~0u;
  s.hi = 0;
  s.log.clear();
  s.later.clear();
}

// The instruction of `s`'s log that spanned `byte` (the latest such).
uint32_t pc_of(const LdsBits& s, uint32_t byte) {
  for (auto it = s.log.rbegin(); it != s.log.rend(); ++it)
    if (it->lo <= byte && byte < it->hi) return it->pc;
  return s.log.empty() ? 0 : s.log.back().pc;
}

[[noreturn]] __attribute__((noinline)) void race(Machine& m, Wave& w, const Inst& in, uint32_t byte,
                                                 LdsAccess kind, int other, const char* their, const LdsBits& bits) {
  uint32_t pc = pc_of(bits, byte);
  int idx = m.prog->index_of(pc);
  char at[32];
  std::snprintf(at, sizeof at, "0x%x", pc);
  const char* verb = kind == LDS_READ ? "reads" : kind == LDS_WRITE ? "writes over" : "updates";
  m.hazard(w, in, std::string(verb) + " LDS byte " + std::to_string(byte) + ", which wave " + std::to_string(other) +
                      " " + their + " at pc " + at + " (" + (idx >= 0 ? m.prog->text[size_t(idx)] : std::string("?")) +
                      ") with no barrier between them: waves are ordered only by barriers (an LDS race)");
}

// What another wave did in this interval that an access of `kind` may race with.
struct Rival {
  const LdsBits* bits;
  int wave;
  const char* what;
};

// Bytes [lo, lo + n) accessed by wave w against the rivals' bits. Two plain stores of the same
// bytes leave them the same whichever lands last: no race.
inline void check(Machine& m, Wave& w, const Inst& in, const Rival* rivals, size_t count, uint32_t lo, uint32_t n,
                  LdsAccess kind, const uint8_t* value) {
  for (size_t r = 0; r < count; ++r) {
    const Rival& x = rivals[r];
    if (!any_bits(x.bits->bits.data(), lo, n)) continue;
    uint32_t at = first_bit(*x.bits, lo, lo + n);
    if (kind == LDS_WRITE && value && x.bits == &m.lds_bits[size_t(x.wave)].write) {
      bool same = true;
      for (uint32_t b = lo; b < lo + n && same; ++b) same = m.lds_stored[b] == value[b - lo], at = b;
      if (same) continue;
    }
    race(m, w, in, at, kind, x.wave, x.what, *x.bits);
  }
}

void settle(Machine& m, LdsBits& s);

// The other waves' bits an access of `kind` over [lo, hi) may race with.
size_t rivals_of(Machine& m, const Wave& w, LdsAccess kind, uint32_t lo, uint32_t hi, Rival* out) {
  size_t count = 0;
  for (size_t x = 0; x < m.lds_bits.size(); ++x) {
    if (int(x) == w.id) continue;
    WaveLds& o = m.lds_bits[x];
    if (kind != LDS_READ) settle(m, o.read);
    auto add = [&](const LdsBits& s, const char* what) {
      if (s.lo < hi && lo < s.hi) out[count++] = Rival{&s, int(x), what};
    };
    add(o.write, "wrote");
    if (kind != LDS_ATOMIC) add(o.atomic, "updated atomically");
    if (kind != LDS_READ) add(o.read, "read");
  }
  return count;
}

void record(LdsBits& s, uint32_t lo, uint32_t hi, uint32_t pc) {
  s.lo = std::min(s.lo, lo);
  s.hi = std::max(s.hi, hi);
  // One entry per instruction and interval, spanning every byte it touched.
  for (auto it = s.log.rbegin(); it != s.log.rend() && it - s.log.rbegin() < 8; ++it)
    if (it->pc == pc) {
      it->lo = std::min(it->lo, lo);
      it->hi = std::max(it->hi, hi);
      return;
    }
  s.log.push_back({pc, lo, hi});
}

// Sets the bits of an access no other wave's bits meet, and logs it; lane l stores values + 16 l.
void mark(Machine& m, LdsBits& bits, const uint32_t* addr, int wsize, uint64_t mask, uint32_t off, uint32_t n,
          uint32_t pc, const uint8_t* values) {
  const uint32_t size = uint32_t(m.lds_stored.size());
  uint32_t lo_all = ~0u, hi_all = 0;
  BitSink sink{bits.bits.data()};
  for (int l = 0; l < wsize; ++l) {
    if (!((mask >> l) & 1)) continue;
    uint32_t lo = addr[l] + off;
    if (lo >= size || lo + n > size) continue;   // the access itself faults
    lo_all = std::min(lo_all, lo);
    hi_all = std::max(hi_all, lo + n);
    sink.add(lo, n);
    if (values) std::memcpy(&m.lds_stored[lo], values + size_t(l) * 16, n);
  }
  sink.flush();
  if (lo_all < hi_all) record(bits, lo_all, hi_all, pc);
}

// Sets the reads `s` put off, in program order.
void settle(Machine& m, LdsBits& s) {
  for (const LdsBits::Lanes& r : s.later) mark(m, s, r.addr, r.wsize, r.mask, r.off, r.n, r.pc, nullptr);
  s.later.clear();
}

// The lanes of `mask` each access n bytes at addr[l] + off; lane l stores values + 16 l.
void access(Machine& m, Wave& w, const Inst& in, const uint32_t* addr, uint64_t mask, uint32_t off, uint32_t n,
            LdsAccess kind, const uint8_t* values) {
  WaveLds& mine = m.lds_bits[size_t(w.id)];
  LdsBits& bits = kind == LDS_READ ? mine.read : kind == LDS_WRITE ? mine.write : mine.atomic;
  Rival rivals[3 * 32];
  // Nothing another wave did anywhere in LDS can race with this access (the common case): it
  // only has to be recorded, and a read not even now.
  if (rivals_of(m, w, kind, 0, uint32_t(m.lds_stored.size()), rivals) == 0) {
    if (kind == LDS_READ) {
      bits.later.emplace_back();
      LdsBits::Lanes& r = bits.later.back();
      std::memcpy(r.addr, addr, sizeof(uint32_t) * size_t(w.wsize));
      r.mask = mask;
      r.off = off;
      r.n = n;
      r.pc = in.pc;
      r.wsize = w.wsize;
    } else {
      mark(m, bits, addr, w.wsize, mask, off, n, in.pc, values);
    }
    return;
  }
  settle(m, bits);                                // the log stays in program order
  const uint32_t size = uint32_t(m.lds_stored.size());
  uint32_t lo_all = ~0u, hi_all = 0;
  for (int l = 0; l < w.wsize; ++l) {
    if (!((mask >> l) & 1)) continue;
    uint32_t lo = addr[l] + off;
    if (lo >= size || lo + n > size) continue;   // the access itself faults
    lo_all = std::min(lo_all, lo);
    hi_all = std::max(hi_all, lo + n);
  }
  if (lo_all >= hi_all) return;
  size_t count = rivals_of(m, w, kind, lo_all, hi_all, rivals);
  // The wave's own bits are not among its rivals: they may be set after the checks.
  BitSink mine_bits{bits.bits.data()};
  for (int l = 0; l < w.wsize; ++l) {
    if (!((mask >> l) & 1)) continue;
    uint32_t lo = addr[l] + off;
    if (lo >= size || lo + n > size) continue;
    const uint8_t* value = values ? values + size_t(l) * 16 : nullptr;
    if (count) check(m, w, in, rivals, count, lo, n, kind, value);
    mine_bits.add(lo, n);
    if (value) std::memcpy(&m.lds_stored[lo], value, n);
  }
  mine_bits.flush();
  record(bits, lo_all, hi_all, in.pc);
}

}  // namespace

void lds_race(Machine& m, Wave& w, const Inst& in, const uint32_t* addr, uint64_t mask, uint32_t off,
              uint32_t n, LdsAccess kind, const uint8_t* values) {
  if (m.opt.hazards && m.waves.size() > 1) access(m, w, in, addr, mask, off, n, kind, values);
}

void lds_landed(Machine& m, Wave& w, uint32_t lo, uint32_t hi, uint32_t pc) {
  if (!m.opt.hazards || m.waves.size() < 2) return;
  hi = std::min<uint32_t>(hi, uint32_t(m.lds.size()));
  if (lo >= hi) return;
  // The copy's bytes are in LDS now: they are what it stored.
  const Inst& copy = m.prog->insts[size_t(m.prog->index_of(pc))];
  LdsBits& bits = m.lds_bits[size_t(w.id)].write;
  Rival rivals[3 * 32];
  size_t count = rivals_of(m, w, LDS_WRITE, lo, hi, rivals);
  for (uint32_t at = lo; at < hi; at += 16) {
    uint32_t n = std::min<uint32_t>(16, hi - at);
    if (count) check(m, w, copy, rivals, count, at, n, LDS_WRITE, m.lds.data() + at);
    set_bits(bits.bits.data(), at, n);
    std::memcpy(&m.lds_stored[at], m.lds.data() + at, n);
  }
  record(bits, lo, hi, pc);
}

void races_interval(Machine& m) {
  for (WaveLds& o : m.lds_bits) {
    clear(o.read);
    clear(o.write);
    clear(o.atomic);
  }
}

void races_begin(Machine& m, uint32_t lds_bytes) {
  size_t words = (size_t(lds_bytes) + 63) / 64;
  m.lds_bits.resize(m.waves.size());
  for (WaveLds& o : m.lds_bits)
    for (LdsBits* s : {&o.read, &o.write, &o.atomic})
      if (s->bits.size() != words) {
        s->bits.assign(words, 0);
        s->lo = ~0u;
        s->hi = 0;
      }
  m.lds_stored.assign(lds_bytes, 0);
  races_interval(m);
}

}  // namespace emu
