// LDS instructions: loads and stores of 8 to 128 bits (and the d16 half-register forms), the
// two-address forms, atomics, and the cross-lane ones that go through the LDS unit without
// touching memory (ds_bpermute, ds_permute, ds_swizzle). All count on LGKM (gfx12: DS).
#include <array>
#include <cmath>

#include "operands.h"

namespace emu {

using Offs = std::array<uint32_t, LANES>;

[[noreturn]] __attribute__((noinline, cold)) static void lds_beyond(const Machine& m, uint32_t addr, uint32_t n,
                                                                     const char* what) {
  throw MemFault(std::string(what) + " at LDS offset " + std::to_string(addr) + " (+" + std::to_string(n) +
                 ") is beyond the " + std::to_string(m.lds.size()) + " bytes of LDS");
}

// Called per lane: the check stays inline, the message out of line.
static inline uint8_t* lds_at(Machine& m, uint32_t addr, uint32_t n, const char* what) {
  if (uint64_t(addr) + n > m.lds.size()) lds_beyond(m, addr, n, what);
  return m.lds.data() + addr;
}

static void lane_addrs(Machine& m, Wave& w, const Inst& in, Offs& a) {
  uint32_t v[LANES];
  fetch32(m, w, in, 0, v);
  for (int l = 0; l < w.wsize; ++l) a[l] = v[l];
}

// d16: 1 low half, 2 high half of the destination, the other half kept. A template, so that
// each form's lane loop is compiled for its size.
template <uint32_t BYTES, bool SEXT, int D16>
static void ds_load(Machine& m, Wave& w, const Inst& in) {
  Offs a;
  lane_addrs(m, w, in, a);
  uint64_t mask = w.exec();
  if (!m.dma.empty()) dma_check(m, w, in, a.data(), mask, uint32_t(in.offset), BYTES);
  lds_race(m, w, in, a.data(), mask, uint32_t(in.offset), BYTES, LDS_READ);
  if (m.prof) profile_lds(m, w, a.data(), mask, uint32_t(in.offset), BYTES);
  constexpr int nreg = int((BYTES + 3) / 4);
  int dst = in.d[0].reg;
  uint32_t off = uint32_t(in.offset);
  Machine* mp = &m; Wave* wp = &w;
  auto effect = [=]() {
    uint32_t* d = wp->vr(dst);
    const int n = wp->wsize;
    for (int l = 0; l < n; ++l) {
      if (!((mask >> l) & 1)) continue;
      const uint8_t* src = lds_at(*mp, a[l] + off, BYTES, "an LDS load");
      if (BYTES < 4) {
        uint32_t x = sub_dword(src, BYTES, SEXT);
        if (D16 == 1) d[l] = (d[l] & 0xffff0000u) | (x & 0xffff);
        else if (D16 == 2) d[l] = (d[l] & 0xffff) | (x << 16);
        else d[l] = x;
      } else {
        uint32_t v[4];
        std::memcpy(v, src, BYTES);
        for (int i = 0; i < nreg; ++i) d[size_t(i) * LANES + size_t(l)] = v[i];
      }
    }
  };
  if (!m.opt.hazards) { effect(); return; }
  if (D16) check_vread(m, w, in, dst, 1);
  Pending& p = issue(m, w, in, C_DS, P_LDS, 1, dst, nreg);
  if (m.deferred()) p.effect = effect; else effect();
  finish_issue(m, w, p);
}

// gfx950 ds_read_b64_tr_b16: each lane reads four 16-bit elements (4 consecutive M or N of one
// K), and each group of 16 lanes transposes them so that a lane holds 4 consecutive K of one M:
// lane l's element k is element l % 4 of what lane (l & ~15) + 4k + (l % 16) / 4 read. Triton
// uses it for column-major MFMA operands; its matmuls check the layout against numpy.
H(ds_load_b64_tr_b16) {
  Offs a;
  lane_addrs(m, w, in, a);
  uint64_t mask = w.exec();
  if (!m.dma.empty()) dma_check(m, w, in, a.data(), mask, uint32_t(in.offset), 8);
  lds_race(m, w, in, a.data(), mask, uint32_t(in.offset), 8, LDS_READ);
  if (m.prof) profile_lds(m, w, a.data(), mask, uint32_t(in.offset), 8);
  int dst = in.d[0].reg;
  uint32_t off = uint32_t(in.offset);
  Machine* mp = &m; Wave* wp = &w;
  auto effect = [=]() {
    uint16_t raw[LANES][4] = {};
    for (int l = 0; l < wp->wsize; ++l)
      if ((mask >> l) & 1) std::memcpy(raw[l], lds_at(*mp, a[l] + off, 8, "an LDS load"), 8);
    for (int l = 0; l < wp->wsize; ++l) {
      if (!((mask >> l) & 1)) continue;
      uint16_t e[4];
      for (int k = 0; k < 4; ++k) e[k] = raw[(l & ~15) + 4 * k + ((l & 15) >> 2)][l & 3];
      wp->vr(dst)[l] = e[0] | (uint32_t(e[1]) << 16);
      wp->vr(dst + 1)[l] = e[2] | (uint32_t(e[3]) << 16);
    }
  };
  if (!m.opt.hazards) { effect(); return; }
  Pending& p = issue(m, w, in, C_DS, P_LDS, 1, dst, 2);
  if (m.deferred()) p.effect = effect; else effect();
  finish_issue(m, w, p);
}

static void ds_store(Machine& m, Wave& w, const Inst& in, uint32_t bytes, bool hi16) {
  Offs a;
  lane_addrs(m, w, in, a);
  int nreg = int((bytes + 3) / 4);
  const Opnd& d = in.s[1];
  if (w.npend) check_vread(m, w, in, d.reg, nreg);
  std::array<uint32_t, 4 * LANES> data;
  for (int i = 0; i < nreg; ++i) std::memcpy(&data[size_t(i) * LANES], w.vr(d.reg + i), LANES * 4);
  uint64_t mask = w.exec();
  uint32_t off = uint32_t(in.offset);
  if (!m.dma.empty()) dma_check(m, w, in, a.data(), mask, off, bytes);
  if (m.prof) profile_lds(m, w, a.data(), mask, off, bytes);
  if (m.opt.hazards && m.waves.size() > 1) {
    std::array<uint8_t, 16 * LANES> stored;
    for (int l = 0; l < w.wsize; ++l) {
      uint32_t v[4];
      for (int i = 0; i < nreg; ++i) v[i] = data[size_t(i) * LANES + l];
      if (hi16) v[0] >>= 16;
      std::memcpy(&stored[size_t(l) * 16], v, bytes);
    }
    lds_race(m, w, in, a.data(), mask, off, bytes, LDS_WRITE, stored.data());
  }
  Machine* mp = &m; Wave* wp = &w;
  auto effect = [=]() {
    for (int l = 0; l < wp->wsize; ++l) {
      if (!((mask >> l) & 1)) continue;
      uint32_t v[4];
      for (int i = 0; i < nreg; ++i) v[i] = data[size_t(i) * LANES + l];
      if (hi16) v[0] >>= 16;
      std::memcpy(lds_at(*mp, a[l] + off, bytes, "an LDS store"), v, bytes);
    }
  };
  if (!m.opt.hazards) { effect(); return; }
  Pending& p = issue(m, w, in, C_DS, P_LDS, 0, 0, 0);
  if (m.deferred()) p.effect = effect; else effect();
  finish_issue(m, w, p);
}

// Two addresses: offset0/offset1 in units of the element size (times 64 for stride64).
static void ds_load2(Machine& m, Wave& w, const Inst& in, uint32_t bytes, uint32_t stride) {
  Offs a;
  lane_addrs(m, w, in, a);
  uint64_t mask = w.exec();
  int dst = in.d[0].reg, per = int(bytes / 4);
  uint32_t o0 = uint32_t(in.offset) * bytes * stride, o1 = uint32_t(in.offset1) * bytes * stride;
  if (!m.dma.empty()) {
    dma_check(m, w, in, a.data(), mask, o0, bytes);
    dma_check(m, w, in, a.data(), mask, o1, bytes);
  }
  lds_race(m, w, in, a.data(), mask, o0, bytes, LDS_READ);
  lds_race(m, w, in, a.data(), mask, o1, bytes, LDS_READ);
  if (m.prof) {
    profile_lds(m, w, a.data(), mask, o0, bytes);
    profile_lds(m, w, a.data(), mask, o1, bytes);
  }
  Machine* mp = &m; Wave* wp = &w;
  auto effect = [=]() {
    for (int l = 0; l < wp->wsize; ++l) {
      if (!((mask >> l) & 1)) continue;
      uint32_t v[4];
      std::memcpy(v, lds_at(*mp, a[l] + o0, bytes, "an LDS load"), bytes);
      std::memcpy(v + per, lds_at(*mp, a[l] + o1, bytes, "an LDS load"), bytes);
      for (int i = 0; i < 2 * per; ++i) wp->vr(dst + i)[l] = v[i];
    }
  };
  if (!m.opt.hazards) { effect(); return; }
  Pending& p = issue(m, w, in, C_DS, P_LDS, 1, dst, 2 * per);
  if (m.deferred()) p.effect = effect; else effect();
  finish_issue(m, w, p);
}

static void ds_store2(Machine& m, Wave& w, const Inst& in, uint32_t bytes, uint32_t stride) {
  Offs a;
  lane_addrs(m, w, in, a);
  int per = int(bytes / 4);
  if (w.npend) { check_vread(m, w, in, in.s[1].reg, per); check_vread(m, w, in, in.s[2].reg, per); }
  std::array<uint32_t, 4 * LANES> data;
  for (int i = 0; i < per; ++i) {
    std::memcpy(&data[size_t(i) * LANES], w.vr(in.s[1].reg + i), LANES * 4);
    std::memcpy(&data[size_t(per + i) * LANES], w.vr(in.s[2].reg + i), LANES * 4);
  }
  uint64_t mask = w.exec();
  uint32_t o0 = uint32_t(in.offset) * bytes * stride, o1 = uint32_t(in.offset1) * bytes * stride;
  if (!m.dma.empty()) {
    dma_check(m, w, in, a.data(), mask, o0, bytes);
    dma_check(m, w, in, a.data(), mask, o1, bytes);
  }
  if (m.opt.hazards && m.waves.size() > 1) {
    std::array<uint8_t, 16 * LANES> first, second;
    for (int l = 0; l < w.wsize; ++l)
      for (int i = 0; i < per; ++i) {
        std::memcpy(&first[size_t(l) * 16 + 4 * i], &data[size_t(i) * LANES + l], 4);
        std::memcpy(&second[size_t(l) * 16 + 4 * i], &data[size_t(per + i) * LANES + l], 4);
      }
    lds_race(m, w, in, a.data(), mask, o0, bytes, LDS_WRITE, first.data());
    lds_race(m, w, in, a.data(), mask, o1, bytes, LDS_WRITE, second.data());
  }
  if (m.prof) {
    profile_lds(m, w, a.data(), mask, o0, bytes);
    profile_lds(m, w, a.data(), mask, o1, bytes);
  }
  Machine* mp = &m; Wave* wp = &w;
  auto effect = [=]() {
    for (int l = 0; l < wp->wsize; ++l) {
      if (!((mask >> l) & 1)) continue;
      uint32_t v[4];
      for (int i = 0; i < 2 * per; ++i) v[i] = data[size_t(i) * LANES + l];
      std::memcpy(lds_at(*mp, a[l] + o0, bytes, "an LDS store"), v, bytes);
      std::memcpy(lds_at(*mp, a[l] + o1, bytes, "an LDS store"), v + per, bytes);
    }
  };
  if (!m.opt.hazards) { effect(); return; }
  Pending& p = issue(m, w, in, C_DS, P_LDS, 0, 0, 0);
  if (m.deferred()) p.effect = effect; else effect();
  finish_issue(m, w, p);
}

// ---- atomics: [vdst]? addr, data0, data1? ----
enum { DA_ADD, DA_SUB, DA_RSUB, DA_INC, DA_DEC, DA_MIN_I, DA_MAX_I, DA_MIN_U, DA_MAX_U, DA_AND, DA_OR,
       DA_XOR, DA_XCHG, DA_CMPST, DA_FADD, DA_FMIN, DA_FMAX, DA_PK_FADD, DA_PK_BFADD };
template <int OP, bool RTN, bool WIDE>
static void ds_atomic(Machine& m, Wave& w, const Inst& in) {
  Offs a;
  lane_addrs(m, w, in, a);
  uint64_t mask = w.exec();
  int nr = WIDE ? 2 : 1;
  if (!m.dma.empty()) dma_check(m, w, in, a.data(), mask, uint32_t(in.offset), WIDE ? 8 : 4);
  lds_race(m, w, in, a.data(), mask, uint32_t(in.offset), WIDE ? 8 : 4, LDS_ATOMIC);
  if (m.prof) profile_lds(m, w, a.data(), mask, uint32_t(in.offset), WIDE ? 8 : 4);
  const Opnd& d0 = in.s[1];
  const Opnd* d1 = in.ns > 2 ? &in.s[2] : nullptr;
  if (w.npend) { check_vread(m, w, in, d0.reg, nr); if (d1) check_vread(m, w, in, d1->reg, nr); }
  for (int l = 0; l < w.wsize; ++l) {
    if (!((mask >> l) & 1)) continue;
    uint64_t s0 = w.vr(d0.reg)[l], s1 = d1 ? w.vr(d1->reg)[l] : 0;
    if (WIDE) {
      s0 |= uint64_t(w.vr(d0.reg + 1)[l]) << 32;
      if (d1) s1 |= uint64_t(w.vr(d1->reg + 1)[l]) << 32;
    }
    uint8_t* p = lds_at(m, a[l] + uint32_t(in.offset), WIDE ? 8 : 4, "an LDS atomic");
    uint64_t old = 0, r;
    std::memcpy(&old, p, WIDE ? 8 : 4);
    int64_t so = WIDE ? int64_t(old) : int64_t(int32_t(old)), ss = WIDE ? int64_t(s0) : int64_t(int32_t(s0));
    switch (OP) {
      case DA_ADD: r = old + s0; break;
      case DA_SUB: r = old - s0; break;
      case DA_RSUB: r = s0 - old; break;
      case DA_INC: r = old >= s0 ? 0 : old + 1; break;
      case DA_DEC: r = (old == 0 || old > s0) ? s0 : old - 1; break;
      case DA_MIN_I: r = so < ss ? old : s0; break;
      case DA_MAX_I: r = so > ss ? old : s0; break;
      case DA_MIN_U: r = old < s0 ? old : s0; break;
      case DA_MAX_U: r = old > s0 ? old : s0; break;
      case DA_AND: r = old & s0; break;
      case DA_OR: r = old | s0; break;
      case DA_XOR: r = old ^ s0; break;
      case DA_XCHG: r = s0; break;
      // gfx11 ds_cmpstore: data0 is the new value, data1 the comparand
      case DA_CMPST: r = old == s1 ? s0 : old; break;
      case DA_FADD: r = WIDE ? db(bd(old) + bd(s0)) : fb(bf(uint32_t(old)) + bf(uint32_t(s0))); break;
      case DA_FMIN: r = WIDE ? db(std::fmin(bd(old), bd(s0))) : fb(std::fmin(bf(uint32_t(old)), bf(uint32_t(s0)))); break;
      case DA_FMAX: r = WIDE ? db(std::fmax(bd(old), bd(s0))) : fb(std::fmax(bf(uint32_t(old)), bf(uint32_t(s0)))); break;
      case DA_PK_FADD:
        r = f2h(h2f(uint16_t(old)) + h2f(uint16_t(s0))) |
            (uint32_t(f2h(h2f(uint16_t(old >> 16)) + h2f(uint16_t(s0 >> 16)))) << 16);
        break;
      case DA_PK_BFADD:
        r = f2bf(bf2f(uint16_t(old)) + bf2f(uint16_t(s0))) |
            (uint32_t(f2bf(bf2f(uint16_t(old >> 16)) + bf2f(uint16_t(s0 >> 16)))) << 16);
        break;
      default: r = old;
    }
    std::memcpy(p, &r, WIDE ? 8 : 4);
    if (RTN) {
      w.vr(in.d[0].reg)[l] = uint32_t(old);
      if (WIDE) w.vr(in.d[0].reg + 1)[l] = uint32_t(old >> 32);
    }
  }
  if (!m.opt.hazards) return;
  Pending& p = issue(m, w, in, C_DS, P_LDS, RTN ? 1 : 0, RTN ? in.d[0].reg : 0, RTN ? nr : 0);
  finish_issue(m, w, p);
}

// ---- cross-lane through the LDS unit ----
static void lane_result(Machine& m, Wave& w, const Inst& in, const uint32_t* r) {
  write32_reg(m, w, in, in.d[0].reg, r, w.exec());
  if (m.opt.hazards) {
    Pending& p = issue(m, w, in, C_DS, P_NONE, 1, in.d[0].reg, 1);
    finish_issue(m, w, p);
  }
}
H(ds_bpermute_b32) {
  uint32_t A[LANES], D[LANES], R[LANES];
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, D);
  uint64_t e = w.exec();
  for (int l = 0; l < w.wsize; ++l) {
    int s = int(((A[l] + uint32_t(in.offset)) >> 2) % uint32_t(w.wsize));
    R[l] = ((e >> s) & 1) ? D[s] : 0;
  }
  lane_result(m, w, in, R);
}
H(ds_permute_b32) {
  uint32_t A[LANES], D[LANES], R[LANES] = {};
  fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, D);
  uint64_t e = w.exec();
  for (int l = 0; l < w.wsize; ++l)
    if ((e >> l) & 1) R[((A[l] + uint32_t(in.offset)) >> 2) % uint32_t(w.wsize)] = D[l];
  lane_result(m, w, in, R);
}
// offset[15] = 1: quad permute by offset[7:0]; else and/or/xor masks on the lane id within 32.
H(ds_swizzle_b32) {
  uint32_t D[LANES], R[LANES];
  fetch32(m, w, in, 0, D);
  uint32_t off = uint32_t(in.offset) & 0xffff;
  uint64_t e = w.exec();
  for (int l = 0; l < w.wsize; ++l) {
    int s;
    if (off & 0x8000) s = (l & ~3) | int((off >> (2 * (l & 3))) & 3);
    else {
      uint32_t andm = off & 31, orm = (off >> 5) & 31, xorm = (off >> 10) & 31;
      s = (l & ~31) | int((((uint32_t(l) & andm) | orm) ^ xorm) & 31);
    }
    R[l] = ((e >> s) & 1) ? D[s] : 0;
  }
  lane_result(m, w, in, R);
}

#define DL(NAME, B, SX, D16) H(NAME) { ds_load<B, SX, D16>(m, w, in); }
#define DS(NAME, B, HI) H(NAME) { ds_store(m, w, in, B, HI); }
DL(ds_load_u8, 1, false, 0) DL(ds_load_i8, 1, true, 0) DL(ds_load_u16, 2, false, 0)
DL(ds_load_i16, 2, true, 0) DL(ds_load_b32, 4, false, 0) DL(ds_load_b64, 8, false, 0)
DL(ds_load_b96, 12, false, 0) DL(ds_load_b128, 16, false, 0)
DL(ds_load_u8_d16, 1, false, 1) DL(ds_load_u8_d16_hi, 1, false, 2) DL(ds_load_i8_d16, 1, true, 1)
DL(ds_load_i8_d16_hi, 1, true, 2) DL(ds_load_u16_d16, 2, false, 1) DL(ds_load_u16_d16_hi, 2, false, 2)
DS(ds_store_b8, 1, false) DS(ds_store_b16, 2, false) DS(ds_store_b32, 4, false) DS(ds_store_b64, 8, false)
DS(ds_store_b96, 12, false) DS(ds_store_b128, 16, false) DS(ds_store_b8_d16_hi, 1, true)
DS(ds_store_b16_d16_hi, 2, true)
H(ds_load_2addr_b32) { ds_load2(m, w, in, 4, 1); }
H(ds_load_2addr_b64) { ds_load2(m, w, in, 8, 1); }
H(ds_load_2addr_stride64_b32) { ds_load2(m, w, in, 4, 64); }
H(ds_load_2addr_stride64_b64) { ds_load2(m, w, in, 8, 64); }
H(ds_store_2addr_b32) { ds_store2(m, w, in, 4, 1); }
H(ds_store_2addr_b64) { ds_store2(m, w, in, 8, 1); }
H(ds_store_2addr_stride64_b32) { ds_store2(m, w, in, 4, 64); }
H(ds_store_2addr_stride64_b64) { ds_store2(m, w, in, 8, 64); }
H(ds_nop) { (void)m; (void)w; (void)in; }

void register_ds(Registry& r) {
#define R(name) r.add(#name, name);
  R(ds_load_u8) R(ds_load_i8) R(ds_load_u16) R(ds_load_i16) R(ds_load_b32) R(ds_load_b64) R(ds_load_b96)
  R(ds_load_b128) R(ds_load_u8_d16) R(ds_load_u8_d16_hi) R(ds_load_i8_d16) R(ds_load_i8_d16_hi)
  R(ds_load_u16_d16) R(ds_load_u16_d16_hi) R(ds_store_b8) R(ds_store_b16) R(ds_store_b32) R(ds_store_b64)
  R(ds_store_b96) R(ds_store_b128) R(ds_store_b8_d16_hi) R(ds_store_b16_d16_hi) R(ds_load_2addr_b32)
  R(ds_load_2addr_b64) R(ds_load_2addr_stride64_b32) R(ds_load_2addr_stride64_b64) R(ds_store_2addr_b32)
  R(ds_store_2addr_b64) R(ds_store_2addr_stride64_b32) R(ds_store_2addr_stride64_b64)
  R(ds_bpermute_b32) R(ds_permute_b32) R(ds_swizzle_b32) R(ds_nop) R(ds_load_b64_tr_b16)
#undef R
  struct A { const char* name; Handler plain, rtn; };
#define AT(N, OP, WIDE) {N, ds_atomic<OP, false, WIDE>, ds_atomic<OP, true, WIDE>}
  static const A atomics[] = {
      AT("add_u32", DA_ADD, false), AT("sub_u32", DA_SUB, false), AT("rsub_u32", DA_RSUB, false),
      AT("inc_u32", DA_INC, false), AT("dec_u32", DA_DEC, false), AT("min_i32", DA_MIN_I, false),
      AT("max_i32", DA_MAX_I, false), AT("min_u32", DA_MIN_U, false), AT("max_u32", DA_MAX_U, false),
      AT("and_b32", DA_AND, false), AT("or_b32", DA_OR, false), AT("xor_b32", DA_XOR, false),
      AT("storexchg_b32", DA_XCHG, false), AT("cmpstore_b32", DA_CMPST, false), AT("add_f32", DA_FADD, false),
      AT("min_f32", DA_FMIN, false), AT("max_f32", DA_FMAX, false), AT("pk_add_f16", DA_PK_FADD, false),
      AT("pk_add_bf16", DA_PK_BFADD, false),
      AT("add_u64", DA_ADD, true), AT("sub_u64", DA_SUB, true), AT("min_i64", DA_MIN_I, true),
      AT("max_i64", DA_MAX_I, true), AT("min_u64", DA_MIN_U, true), AT("max_u64", DA_MAX_U, true),
      AT("and_b64", DA_AND, true), AT("or_b64", DA_OR, true), AT("xor_b64", DA_XOR, true),
      AT("storexchg_b64", DA_XCHG, true), AT("cmpstore_b64", DA_CMPST, true), AT("add_f64", DA_FADD, true),
      AT("min_f64", DA_FMIN, true), AT("max_f64", DA_FMAX, true)};
#undef AT
  for (const A& a : atomics) {
    r.add((std::string("ds_") + a.name).c_str(), a.plain);
    std::string n(a.name);
    size_t us = n.rfind('_');
    r.add(("ds_" + n.substr(0, us) + "_rtn" + n.substr(us)).c_str(), a.rtn);
  }
}

}  // namespace emu
