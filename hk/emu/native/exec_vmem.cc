// Memory instructions: scalar loads (SMEM), global/flat/scratch and buffer loads, stores and
// atomics up to 128 bits, and loads from global memory straight into LDS (gfx9 `lds`).
// Each access is issued through the hazard model (hazards.cc): performed now, or later in a
// randomised legal order when that option is on.
#include <array>
#include <cmath>

#include "operands.h"

namespace emu {

enum Space : uint8_t { S_GLOBAL, S_FLAT, S_SCRATCH, S_BUFFER };
using Addrs = std::array<uint64_t, LANES>;

[[noreturn]] __attribute__((noinline, cold)) static void beyond(const char* what, const char* space, uint64_t off,
                                                                 const std::string& limit) {
  throw MemFault(std::string(what) + " of " + space + " offset " + std::to_string(off) + " is beyond the " + limit);
}

// Where lane l's bytes live: global memory, LDS or the lane's private memory. Called per lane:
// the checks stay inline, the messages out of line.
static inline uint8_t* locate(Machine& m, Wave& w, uint64_t addr, int lane, uint32_t n, bool scratch,
                              const char* what) {
  uint32_t hi = uint32_t(addr >> 32);
  if (!scratch && hi == SHARED_HI) {
    uint64_t off = uint32_t(addr);
    if (off + n > m.lds.size()) beyond(what, "LDS", off, std::to_string(m.lds.size()) + " bytes of LDS");
    return m.lds.data() + off;
  }
  if (scratch || hi == PRIVATE_HI) {
    uint64_t off = uint32_t(addr);
    if (off + n > w.psize) beyond(what, "private", off, std::to_string(w.psize) + " private bytes per lane");
    return w.scratch.data() + size_t(lane) * w.psize + off;
  }
  return m.mem->ptr(addr, n, what);
}

// Per-lane addresses. Operand layout (as printed): loads [vaddr, saddr], stores and atomics
// [vaddr, vdata, saddr].
static void addresses(Machine& m, Wave& w, const Inst& in, Space sp, int saddr_idx, Addrs& a) {
  const Opnd& va = in.s[0];
  const Opnd& sa = in.s[saddr_idx];
  int n = w.wsize;
  uint32_t v32[LANES];
  uint64_t v64[LANES];
  if (sp == S_SCRATCH) {
    uint32_t base = sa.kind == K_SGPR ? sget(m, w, in, sa) : 0;
    if (va.kind == K_VGPR) fetch32(m, w, in, 0, v32);
    for (int l = 0; l < n; ++l) a[l] = uint32_t((va.kind == K_VGPR ? v32[l] : 0) + base + uint32_t(in.offset));
    return;
  }
  if (sa.kind == K_SGPR) {
    uint64_t base = sget64(m, w, in, sa);
    if (va.kind == K_VGPR) fetch32(m, w, in, 0, v32);
    for (int l = 0; l < n; ++l) a[l] = base + (va.kind == K_VGPR ? v32[l] : 0) + int64_t(in.offset);
    return;
  }
  fetch64(m, w, in, 0, v64, 'u');
  for (int l = 0; l < n; ++l) a[l] = v64[l] + int64_t(in.offset);
}

// Buffer addressing: [vaddr(off | voffset | vindex | {vindex, voffset}), srsrc, soffset].
static void buffer_addresses(Machine& m, Wave& w, const Inst& in, int base_idx, Addrs& a, uint64_t& inrange) {
  uint32_t rs[4];
  for (int i = 0; i < 4; ++i) rs[i] = w.s[in.s[base_idx].reg + i];
  if (w.npend) check_sread(m, w, in, in.s[base_idx].reg, 4);
  uint64_t base = rs[0] | (uint64_t(rs[1] & 0xffff) << 32);
  uint32_t stride = (rs[1] >> 16) & 0x3fff, records = rs[2];
  uint32_t soff = sget(m, w, in, in.s[base_idx + 1]);
  uint32_t vi[LANES] = {}, vo[LANES] = {};
  const Opnd& va = in.s[0];
  bool idxen = in.flags & F_IDXEN, offen = in.flags & F_OFFEN;
  if (va.kind == K_VGPR) {
    if (w.npend) check_vread(m, w, in, va.reg, va.n);
    const uint32_t* r0 = w.vr(va.reg);
    const uint32_t* r1 = w.vr(va.reg + 1);
    for (int l = 0; l < w.wsize; ++l) {
      if (idxen && offen) { vi[l] = r0[l]; vo[l] = r1[l]; }
      else if (idxen) vi[l] = r0[l];
      else if (offen) vo[l] = r0[l];
    }
  }
  inrange = 0;
  for (int l = 0; l < w.wsize; ++l) {
    uint64_t off = uint64_t(vo[l]) + uint32_t(in.offset);
    a[l] = base + soff + off + uint64_t(vi[l]) * stride;
    bool ok = stride == 0 ? off < records : vi[l] < records;
    if (ok) inrange |= 1ull << l;
  }
}

// Load `bytes` per lane into the destination VGPRs. d16 modes: 1 low half, 2 high half (others
// kept); sext: sign-extend a sub-dword value.
struct LoadKind { uint32_t bytes; bool sext; int d16; };

static void do_load(Machine& m, Wave& w, const Inst& in, Space sp, const Addrs& a, uint64_t mask,
                    uint64_t inrange, LoadKind k, int dst) {
  uint32_t nreg = (k.bytes + 3) / 4;
  for (int l = 0; l < w.wsize; ++l) {
    if (!((mask >> l) & 1)) continue;
    const bool inr = (inrange >> l) & 1;
    const uint8_t* src = inr ? locate(m, w, a[l], l, k.bytes, sp == S_SCRATCH, "a load") : nullptr;
    if (k.bytes < 4) {
      uint32_t x = inr ? sub_dword(src, k.bytes, k.sext) : 0;
      uint32_t& d = w.vr(dst)[l];
      if (k.d16 == 1) d = (d & 0xffff0000u) | (x & 0xffff);
      else if (k.d16 == 2) d = (d & 0xffff) | (x << 16);
      else d = x;
    } else {
      uint32_t v[4] = {0, 0, 0, 0};
      if (inr) std::memcpy(v, src, k.bytes);
      for (uint32_t i = 0; i < nreg; ++i) w.vr(dst + int(i))[l] = v[i];
    }
  }
}

static void load(Machine& m, Wave& w, const Inst& in, Space sp, LoadKind k) {
  Addrs a;
  uint64_t inrange = ~0ull;
  if (sp == S_BUFFER) buffer_addresses(m, w, in, 1, a, inrange);
  else addresses(m, w, in, sp, 1, a);
  uint64_t mask = w.exec();
  if (m.prof && sp != S_SCRATCH) profile_vmem(m, a.data(), mask & inrange, k.bytes, false, w.wsize);
  int dst = in.d[0].reg, nreg = int((k.bytes + 3) / 4);
  if (!m.opt.hazards) { do_load(m, w, in, sp, a, mask, inrange, k, dst); return; }
  // A d16 load keeps the other half of its destination: issue() checks that no load on another
  // counter still writes it (loads on vmcnt return in order, so those are safe).
  Pending& p = issue(m, w, in, C_VMLOAD, P_VMEM, 1, dst, nreg);
  p.lgkm_too = sp == S_FLAT;
  Machine* mp = &m; Wave* wp = &w; const Inst* ip = &in;
  auto effect = [=]() { do_load(*mp, *wp, *ip, sp, a, mask, inrange, k, dst); };
  if (m.deferred()) p.effect = effect; else effect();
  finish_issue(m, w, p);
}

static void store(Machine& m, Wave& w, const Inst& in, Space sp, uint32_t bytes, bool hi16) {
  Addrs a;
  uint64_t inrange = ~0ull;
  int data_idx = sp == S_BUFFER ? 0 : 1;
  if (sp == S_BUFFER) {
    // buffer stores print [vdata, vaddr, srsrc, soffset]: shift to the load layout
    Inst t = in;
    t.s[0] = in.s[1]; t.s[1] = in.s[2]; t.s[2] = in.s[3];
    buffer_addresses(m, w, t, 1, a, inrange);
  } else {
    addresses(m, w, in, sp, 2, a);
  }
  const Opnd& d = in.s[data_idx];
  uint32_t nreg = (bytes + 3) / 4;
  if (w.npend) check_vread(m, w, in, d.reg, int(nreg));
  std::array<uint32_t, 4 * LANES> data;
  for (uint32_t i = 0; i < nreg; ++i) std::memcpy(&data[i * LANES], w.vr(d.reg + int(i)), LANES * 4);
  uint64_t mask = w.exec() & inrange;
  if (m.prof && sp != S_SCRATCH) profile_vmem(m, a.data(), mask, bytes, true, w.wsize);
  Machine* mp = &m; Wave* wp = &w;
  auto effect = [=]() {
    for (int l = 0; l < wp->wsize; ++l) {
      if (!((mask >> l) & 1)) continue;
      uint32_t v[4];
      for (uint32_t i = 0; i < nreg; ++i) v[i] = data[i * LANES + l];
      if (hi16) v[0] >>= 16;
      std::memcpy(locate(*mp, *wp, a[l], l, bytes, sp == S_SCRATCH, "a store"), v, bytes);
    }
  };
  if (!m.opt.hazards) { effect(); return; }
  Pending& p = issue(m, w, in, is_gfx9(m.family) ? C_VMLOAD : C_VMSTORE, P_VMEM, 0, 0, 0);
  p.lgkm_too = sp == S_FLAT;
  if (m.deferred()) p.effect = effect; else effect();
  finish_issue(m, w, p);
}

// Global -> LDS (gfx9 `lds` modifier and global_load_lds_*): lane l's data lands at
// M0 + instruction offset + l * bytes. It counts on vmcnt, like any load.
static void load_lds(Machine& m, Wave& w, const Inst& in, Space sp, uint32_t bytes) {
  Addrs a;
  uint64_t inrange = ~0ull;
  if (sp == S_BUFFER) buffer_addresses(m, w, in, 1, a, inrange);
  else addresses(m, w, in, sp, 1, a);
  uint64_t mask = w.exec();
  if (m.prof) profile_vmem(m, a.data(), mask & inrange, bytes, false, w.wsize);
  uint32_t base = (w.s[R_M0] & 0x3ffff) + (sp == S_BUFFER ? uint32_t(in.offset) : 0);
  Machine* mp = &m; Wave* wp = &w;
  auto effect = [=]() {
    for (int l = 0; l < wp->wsize; ++l) {
      if (!((mask >> l) & 1)) continue;
      uint32_t off = base + uint32_t(l) * bytes;
      if (off + bytes > mp->lds.size()) throw MemFault("an LDS write by a load-to-LDS is beyond LDS");
      uint8_t v[16] = {};
      if ((inrange >> l) & 1) std::memcpy(v, locate(*mp, *wp, a[l], l, bytes, false, "a load"), bytes);
      std::memcpy(mp->lds.data() + off, v, bytes);
    }
  };
  if (!m.opt.hazards) { effect(); return; }
  Pending& p = issue(m, w, in, C_VMLOAD, P_VMEM, 0, 0, 0);
  p.dma = true;
  if (mask) {                                 // the bytes it writes, for dma_check
    uint32_t first = uint32_t(__builtin_ctzll(mask)), last = 63u - uint32_t(__builtin_clzll(mask));
    m.dma.push_back(DmaWrite{p.seq, w.id, base + first * bytes, base + (last + 1) * bytes, in.pc});
  }
  if (m.deferred()) p.effect = effect; else effect();
  finish_issue(m, w, p);
}

// ---- atomics ----
enum AOp { A_ADD, A_SUB, A_SWAP, A_CMPSWAP, A_SMIN, A_UMIN, A_SMAX, A_UMAX, A_AND, A_OR, A_XOR, A_INC,
           A_DEC, A_FADD, A_FMIN, A_FMAX, A_PK_FADD16, A_PK_BFADD16 };

template <class T>
static T atomic_apply(int op, T old, T src, T cmp) {
  using S = typename std::make_signed<T>::type;
  switch (op) {
    case A_ADD: return old + src;
    case A_SUB: return old - src;
    case A_SWAP: return src;
    case A_CMPSWAP: return old == cmp ? src : old;
    case A_SMIN: return S(old) < S(src) ? old : src;
    case A_UMIN: return old < src ? old : src;
    case A_SMAX: return S(old) > S(src) ? old : src;
    case A_UMAX: return old > src ? old : src;
    case A_AND: return old & src;
    case A_OR: return old | src;
    case A_XOR: return old ^ src;
    case A_INC: return old >= src ? 0 : old + 1;
    case A_DEC: return (old == 0 || old > src) ? src : old - 1;
  }
  if (sizeof(T) == 4) {
    uint32_t o = uint32_t(old), s = uint32_t(src);
    switch (op) {
      case A_FADD: return T(fb(bf(o) + bf(s)));
      case A_FMIN: return T(fb(std::fmin(bf(o), bf(s))));
      case A_FMAX: return T(fb(std::fmax(bf(o), bf(s))));
      case A_PK_FADD16: return T(f2h(h2f(uint16_t(o)) + h2f(uint16_t(s))) |
                                 (uint32_t(f2h(h2f(uint16_t(o >> 16)) + h2f(uint16_t(s >> 16)))) << 16));
      case A_PK_BFADD16: return T(f2bf(bf2f(uint16_t(o)) + bf2f(uint16_t(s))) |
                                  (uint32_t(f2bf(bf2f(uint16_t(o >> 16)) + bf2f(uint16_t(s >> 16)))) << 16));
    }
  } else {
    uint64_t o = uint64_t(old), s = uint64_t(src);
    switch (op) {
      case A_FADD: return T(db(bd(o) + bd(s)));
      case A_FMIN: return T(db(std::fmin(bd(o), bd(s))));
      case A_FMAX: return T(db(std::fmax(bd(o), bd(s))));
    }
  }
  return old;
}

// Atomics execute at issue (also under randomised order); a returning atomic's result is still
// tracked as outstanding until its wait. Layout: [vdst]? [vaddr, vdata, saddr].
template <int OP, bool WIDE>
static void atomic(Machine& m, Wave& w, const Inst& in, Space sp) {
  using T = typename std::conditional<WIDE, uint64_t, uint32_t>::type;
  Addrs a;
  uint64_t inrange = ~0ull;
  int data_idx = 1;
  if (sp == S_BUFFER) {
    Inst t = in;
    t.s[0] = in.s[1]; t.s[1] = in.s[2]; t.s[2] = in.s[3];
    buffer_addresses(m, w, t, 1, a, inrange);
    data_idx = 0;
  } else {
    addresses(m, w, in, sp, 2, a);
  }
  bool rtn = in.nd > 0;
  int nr = WIDE ? 2 : 1;
  const Opnd& d = in.s[data_idx];
  if (w.npend) check_vread(m, w, in, d.reg, OP == A_CMPSWAP ? 2 * nr : nr);
  if (rtn && w.npend) check_vread(m, w, in, in.d[0].reg, nr);
  uint64_t mask = w.exec() & inrange;
  if (m.prof && sp != S_SCRATCH) profile_vmem(m, a.data(), mask, sizeof(T), true, w.wsize);
  for (int l = 0; l < w.wsize; ++l) {
    if (!((mask >> l) & 1)) continue;
    T src, cmp = 0, old;
    if (WIDE) src = T(w.vr(d.reg)[l] | (uint64_t(w.vr(d.reg + 1)[l]) << 32));
    else src = T(w.vr(d.reg)[l]);
    if (OP == A_CMPSWAP) {
      if (WIDE) cmp = T(w.vr(d.reg + 2)[l] | (uint64_t(w.vr(d.reg + 3)[l]) << 32));
      else cmp = T(w.vr(d.reg + 1)[l]);
    }
    uint8_t* p = locate(m, w, a[l], l, sizeof(T), sp == S_SCRATCH, "an atomic");
    std::memcpy(&old, p, sizeof(T));
    T nv = atomic_apply<T>(OP, old, src, cmp);
    std::memcpy(p, &nv, sizeof(T));
    if (rtn) {
      w.vr(in.d[0].reg)[l] = uint32_t(old);
      if (WIDE) w.vr(in.d[0].reg + 1)[l] = uint32_t(uint64_t(old) >> 32);
    }
  }
  if (!m.opt.hazards) return;
  Pending& p = issue(m, w, in, rtn || is_gfx9(m.family) ? C_VMLOAD : C_VMSTORE, P_VMEM, rtn ? 1 : 0,
                     rtn ? in.d[0].reg : 0, rtn ? nr : 0);
  p.lgkm_too = sp == S_FLAT;
  finish_issue(m, w, p);
}

// ---- SMEM: [sbase, soffset?]; `offset` adds ----
static uint64_t smem_address(Machine& m, Wave& w, const Inst& in, bool buffer) {
  uint64_t base;
  if (buffer) {
    if (w.npend) check_sread(m, w, in, in.s[0].reg, 4);
    base = w.s[in.s[0].reg] | (uint64_t(w.s[in.s[0].reg + 1] & 0xffff) << 32);
  } else {
    base = sget64(m, w, in, in.s[0]);
  }
  uint64_t off = in.ns > 1 && in.s[1].kind != K_NONE ? sget(m, w, in, in.s[1]) : 0;
  return base + off + int64_t(in.offset);
}

static void smem_write(Machine& m, Wave& w, const Inst& in, const uint32_t* vals, int ndw) {
  int dst = in.d[0].reg;
  if (m.opt.hazards) {
    Pending& p = issue(m, w, in, C_SMEM, P_SMEM, 2, dst, ndw);
    finish_issue(m, w, p);
  }
  for (int i = 0; i < ndw; ++i) if (dst + i != R_NULL) w.s[dst + i] = vals[i];
}

static void smem_load(Machine& m, Wave& w, const Inst& in, int ndw, bool buffer) {
  uint64_t addr = smem_address(m, w, in, buffer) & ~3ull;
  uint32_t vals[16];
  std::memcpy(vals, m.mem->ptr(addr, uint64_t(ndw) * 4, "a scalar load"), size_t(ndw) * 4);
  smem_write(m, w, in, vals, ndw);
}

// gfx12's byte and short loads: one value, zero- or sign-extended to the 32-bit register.
static void smem_load_small(Machine& m, Wave& w, const Inst& in, int bytes, bool sext, bool buffer) {
  uint64_t addr = smem_address(m, w, in, buffer) & ~uint64_t(bytes - 1);
  const uint8_t* p = m.mem->ptr(addr, uint64_t(bytes), "a scalar load");
  uint32_t v = bytes == 1 ? p[0] : uint32_t(p[0] | (p[1] << 8));
  if (sext) v = uint32_t(bytes == 1 ? int32_t(int8_t(v)) : int32_t(int16_t(v)));
  smem_write(m, w, in, &v, 1);
}

#define LD(NAME, SP, BYTES, SEXT, D16) H(NAME) { load(m, w, in, SP, LoadKind{BYTES, SEXT, D16}); }
#define ST(NAME, SP, BYTES, HI) H(NAME) { store(m, w, in, SP, BYTES, HI); }
#define FAMILY(P, SP) \
  LD(P##_load_u8, SP, 1, false, 0) LD(P##_load_i8, SP, 1, true, 0) LD(P##_load_u16, SP, 2, false, 0) \
  LD(P##_load_i16, SP, 2, true, 0) LD(P##_load_b32, SP, 4, false, 0) LD(P##_load_b64, SP, 8, false, 0) \
  LD(P##_load_b96, SP, 12, false, 0) LD(P##_load_b128, SP, 16, false, 0) \
  LD(P##_load_d16_b16, SP, 2, false, 1) LD(P##_load_d16_hi_b16, SP, 2, false, 2) \
  LD(P##_load_d16_u8, SP, 1, false, 1) LD(P##_load_d16_i8, SP, 1, true, 1) \
  LD(P##_load_d16_hi_u8, SP, 1, false, 2) LD(P##_load_d16_hi_i8, SP, 1, true, 2) \
  ST(P##_store_b8, SP, 1, false) ST(P##_store_b16, SP, 2, false) ST(P##_store_b32, SP, 4, false) \
  ST(P##_store_b64, SP, 8, false) ST(P##_store_b96, SP, 12, false) ST(P##_store_b128, SP, 16, false) \
  ST(P##_store_d16_hi_b8, SP, 1, true) ST(P##_store_d16_hi_b16, SP, 2, true)
FAMILY(global, S_GLOBAL)
FAMILY(flat, S_FLAT)
FAMILY(scratch, S_SCRATCH)
FAMILY(buffer, S_BUFFER)

H(global_load_lds_b32) { load_lds(m, w, in, S_GLOBAL, 4); }
H(global_load_lds_b128) { load_lds(m, w, in, S_GLOBAL, 16); }
H(global_load_lds_b96) { load_lds(m, w, in, S_GLOBAL, 12); }
H(global_load_lds_u8) { load_lds(m, w, in, S_GLOBAL, 1); }
H(global_load_lds_u16) { load_lds(m, w, in, S_GLOBAL, 2); }
H(buffer_load_lds_b32) { load_lds(m, w, in, S_BUFFER, 4); }
H(buffer_load_lds_b128) { load_lds(m, w, in, S_BUFFER, 16); }
H(buffer_load_lds_b96) { load_lds(m, w, in, S_BUFFER, 12); }
H(buffer_load_lds_u8) { load_lds(m, w, in, S_BUFFER, 1); }
H(buffer_load_lds_u16) { load_lds(m, w, in, S_BUFFER, 2); }

#define SM(NAME, N, BUF) H(NAME) { smem_load(m, w, in, N, BUF); }
SM(s_load_b32, 1, false) SM(s_load_b64, 2, false) SM(s_load_b96, 3, false) SM(s_load_b128, 4, false)
SM(s_load_b256, 8, false) SM(s_load_b512, 16, false)
SM(s_buffer_load_b32, 1, true) SM(s_buffer_load_b64, 2, true) SM(s_buffer_load_b96, 3, true)
SM(s_buffer_load_b128, 4, true) SM(s_buffer_load_b256, 8, true) SM(s_buffer_load_b512, 16, true)
#define SMS(NAME, BYTES, SEXT, BUF) H(NAME) { smem_load_small(m, w, in, BYTES, SEXT, BUF); }
SMS(s_load_u8, 1, false, false) SMS(s_load_i8, 1, true, false) SMS(s_load_u16, 2, false, false)
SMS(s_load_i16, 2, true, false) SMS(s_buffer_load_u8, 1, false, true) SMS(s_buffer_load_i8, 1, true, true)
SMS(s_buffer_load_u16, 2, false, true) SMS(s_buffer_load_i16, 2, true, true)

template <int OP, bool WIDE, int SP> static void atomic_h(Machine& m, Wave& w, const Inst& in) {
  atomic<OP, WIDE>(m, w, in, Space(SP));
}

void register_vmem(Registry& r) {
#define R(name) r.add(#name, name);
#define RF(P) R(P##_load_u8) R(P##_load_i8) R(P##_load_u16) R(P##_load_i16) R(P##_load_b32) \
  R(P##_load_b64) R(P##_load_b96) R(P##_load_b128) R(P##_load_d16_b16) R(P##_load_d16_hi_b16) \
  R(P##_load_d16_u8) R(P##_load_d16_i8) R(P##_load_d16_hi_u8) R(P##_load_d16_hi_i8) R(P##_store_b8) \
  R(P##_store_b16) R(P##_store_b32) R(P##_store_b64) R(P##_store_b96) R(P##_store_b128) \
  R(P##_store_d16_hi_b8) R(P##_store_d16_hi_b16)
  RF(global) RF(flat) RF(scratch) RF(buffer)
  R(global_load_lds_b32) R(global_load_lds_b128) R(global_load_lds_b96) R(global_load_lds_u8)
  R(global_load_lds_u16) R(buffer_load_lds_b32) R(buffer_load_lds_b128) R(buffer_load_lds_b96)
  R(buffer_load_lds_u8) R(buffer_load_lds_u16)
  R(s_load_b32) R(s_load_b64) R(s_load_b96) R(s_load_b128) R(s_load_b256) R(s_load_b512)
  R(s_buffer_load_b32) R(s_buffer_load_b64) R(s_buffer_load_b96) R(s_buffer_load_b128)
  R(s_buffer_load_b256) R(s_buffer_load_b512)
  R(s_load_u8) R(s_load_i8) R(s_load_u16) R(s_load_i16)
  R(s_buffer_load_u8) R(s_buffer_load_i8) R(s_buffer_load_u16) R(s_buffer_load_i16)
#undef RF
#undef R
  struct A { const char* name; int op; bool wide; Handler h[4]; };
#define AT(NAME, OP, WIDE) {NAME, OP, WIDE, {atomic_h<OP, WIDE, S_GLOBAL>, atomic_h<OP, WIDE, S_FLAT>, \
  atomic_h<OP, WIDE, S_SCRATCH>, atomic_h<OP, WIDE, S_BUFFER>}}
  static const A atomics[] = {
      AT("add_u32", A_ADD, false), AT("sub_u32", A_SUB, false), AT("swap_b32", A_SWAP, false),
      AT("cmpswap_b32", A_CMPSWAP, false), AT("min_i32", A_SMIN, false), AT("min_u32", A_UMIN, false),
      AT("max_i32", A_SMAX, false), AT("max_u32", A_UMAX, false), AT("and_b32", A_AND, false),
      AT("or_b32", A_OR, false), AT("xor_b32", A_XOR, false), AT("inc_u32", A_INC, false),
      AT("dec_u32", A_DEC, false), AT("add_f32", A_FADD, false), AT("min_f32", A_FMIN, false),
      AT("max_f32", A_FMAX, false), AT("pk_add_f16", A_PK_FADD16, false), AT("pk_add_bf16", A_PK_BFADD16, false),
      AT("add_u64", A_ADD, true), AT("sub_u64", A_SUB, true), AT("swap_b64", A_SWAP, true),
      AT("cmpswap_b64", A_CMPSWAP, true), AT("min_i64", A_SMIN, true), AT("min_u64", A_UMIN, true),
      AT("max_i64", A_SMAX, true), AT("max_u64", A_UMAX, true), AT("and_b64", A_AND, true),
      AT("or_b64", A_OR, true), AT("xor_b64", A_XOR, true), AT("inc_u64", A_INC, true),
      AT("dec_u64", A_DEC, true), AT("add_f64", A_FADD, true), AT("min_f64", A_FMIN, true),
      AT("max_f64", A_FMAX, true)};
#undef AT
  const char* pre[] = {"global_atomic_", "flat_atomic_", "scratch_atomic_", "buffer_atomic_"};
  for (const A& a : atomics)
    for (int s = 0; s < 4; ++s) r.add((std::string(pre[s]) + a.name).c_str(), a.h[s]);
}

}  // namespace emu
