// Operand access shared by the instruction classes: scalar reads and writes, per-lane VGPR
// sources (with DPP, SDWA and the float input modifiers) and masked per-lane writes.
#pragma once

#include "emu.h"
#include "fp.h"

namespace emu {

#define H(name) static void name(Machine& m, Wave& w, const Inst& in)

// ---- scalar operands ----
inline uint32_t sget(Machine& m, Wave& w, const Inst& in, const Opnd& o) {
  switch (o.kind) {
    case K_SGPR:
      if (w.npend) check_sread(m, w, in, o.reg, 1);
      return o.reg == R_NULL ? 0 : w.s[o.reg];
    case K_INL: case K_LIT: return o.imm32;
    case K_SCC: return w.scc;
    case K_SHARED_BASE: return SHARED_HI;
    case K_PRIVATE_BASE: return PRIVATE_HI;
    case K_EXECZ: return w.exec() == 0;
    case K_VCCZ: return (w.wsize == 32 ? w.s[R_VCC_LO] : (w.s[R_VCC_LO] | w.s[R_VCC_HI])) == 0;
    default: m.fail(w, in, "this operand is not a scalar source");
  }
}

// `sext`: a 32-bit literal in a signed 64-bit operand is sign-extended, else zero-extended.
inline uint64_t sget64(Machine& m, Wave& w, const Inst& in, const Opnd& o, bool sext = false) {
  switch (o.kind) {
    case K_SGPR:
      if (w.npend) check_sread(m, w, in, o.reg, 2);
      return o.reg == R_NULL ? 0 : (w.s[o.reg] | (uint64_t(w.s[o.reg + 1]) << 32));
    case K_INL: return o.imm64;
    case K_LIT: return sext ? uint64_t(int64_t(int32_t(o.imm32))) : uint64_t(o.imm32);
    case K_SCC: return w.scc;
    case K_SHARED_BASE: return uint64_t(SHARED_HI) << 32;
    case K_PRIVATE_BASE: return uint64_t(PRIVATE_HI) << 32;
    default: return sget(m, w, in, o);
  }
}

inline void sset(Machine& m, Wave& w, const Inst& in, const Opnd& o, uint32_t v) {
  if (o.kind != K_SGPR) m.fail(w, in, "destination is not a scalar register");
  if (w.npend) check_sread(m, w, in, o.reg, 1);
  if (o.reg != R_NULL) w.s[o.reg] = v;
}
inline void sset64(Machine& m, Wave& w, const Inst& in, const Opnd& o, uint64_t v) {
  if (o.kind != K_SGPR) m.fail(w, in, "destination is not a scalar register");
  if (w.npend) check_sread(m, w, in, o.reg, 2);
  if (o.reg == R_NULL) return;
  w.s[o.reg] = uint32_t(v);
  w.s[o.reg + 1] = uint32_t(v >> 32);
}

// A lane mask: one SGPR in wave32, a pair in wave64.
inline uint64_t mget(Machine& m, Wave& w, const Inst& in, const Opnd& o) {
  if (w.wsize == 32) return sget(m, w, in, o);
  return sget64(m, w, in, o);
}
inline void mset(Machine& m, Wave& w, const Inst& in, const Opnd& o, uint64_t v) {
  if (w.wsize == 32) sset(m, w, in, o, uint32_t(v));
  else sset64(m, w, in, o, v);
}

// ---- vector sources ----
void fetch32(Machine& m, Wave& w, const Inst& in, int i, uint32_t* out);  // raw 32 bits per lane
void fetch64(Machine& m, Wave& w, const Inst& in, int i, uint64_t* out, char type);  // 'f','i','u'

inline void fmods32(const Inst& in, int i, uint32_t* x, int n) {
  uint8_t md = in.s[i].mods;
  if (!(md & (M_NEG | M_ABS))) return;
  uint32_t a = md & M_ABS ? 0x7fffffffu : 0xffffffffu, ng = md & M_NEG ? 0x80000000u : 0;
  for (int l = 0; l < n; ++l) x[l] = (x[l] & a) ^ ng;
}
inline void f32src(Machine& m, Wave& w, const Inst& in, int i, uint32_t* x) {
  fetch32(m, w, in, i, x);
  fmods32(in, i, x, w.wsize);
  if (m.ftz32_in)                               // the descriptor's f32 denormal mode flushes inputs
    for (int l = 0; l < w.wsize; ++l)
      if (!(x[l] & 0x7f800000u)) x[l] &= 0x80000000u;
}
// An f32 result, flushed to zero when the f32 denormal mode flushes outputs.
inline uint32_t fo(const Machine& m, float v) {
  uint32_t u = fb(v);
  if (m.ftz32_out && !(u & 0x7f800000u)) u &= 0x80000000u;
  return u;
}
// 16-bit source: the high half when the operand is `vN.h` or op_sel selects it.
inline void fetch16(Machine& m, Wave& w, const Inst& in, int i, uint32_t* x, bool fmods) {
  const Opnd& o = in.s[i];
  if (o.kind == K_INL || o.kind == K_LIT) {
    for (int l = 0; l < w.wsize; ++l) x[l] = o.imm16;
  } else {
    fetch32(m, w, in, i, x);
    bool hi = (o.mods & M_HI) || ((in.opsel >> i) & 1);
    for (int l = 0; l < w.wsize; ++l) x[l] = hi ? x[l] >> 16 : x[l] & 0xffff;
  }
  if (fmods && (o.mods & (M_NEG | M_ABS))) {
    uint32_t a = o.mods & M_ABS ? 0x7fffu : 0xffffu, ng = o.mods & M_NEG ? 0x8000u : 0;
    for (int l = 0; l < w.wsize; ++l) x[l] = (x[l] & a) ^ ng;
  }
}
// Packed (VOP3P) 16-bit sources. Half h of source i: op_sel (h=0) / op_sel_hi (h=1) picks which
// 16 bits; for an f16 (`fl`), neg_lo / neg_hi negate.
inline uint32_t pkh(const Inst& in, int i, uint32_t raw, int h, bool fl) {
  bool sel = h ? ((in.opsel_hi >> i) & 1) : ((in.opsel >> i) & 1);
  uint32_t x = sel ? raw >> 16 : raw & 0xffff;
  if (fl && (((h ? in.neg_hi : in.neg_lo) >> i) & 1)) x ^= 0x8000;
  return x;
}
// Packed inline constants: a float one is its f16 value in the low half and 0 in the high half;
// an integer one (-16..64) is its sign-extended 32-bit value, so -1 is -1 in both halves.
inline void pkraw(Machine& m, Wave& w, const Inst& in, int i, uint32_t* x) {
  const Opnd& o = in.s[i];
  if (o.kind != K_INL) { fetch32(m, w, in, i, x); return; }
  uint32_t c = (o.mods & M_FLT) ? o.imm16 : o.imm32;
  for (int l = 0; l < w.wsize; ++l) x[l] = c;
}
inline void f64src(Machine& m, Wave& w, const Inst& in, int i, uint64_t* x) {
  fetch64(m, w, in, i, x, 'f');
  uint8_t md = in.s[i].mods;
  if (!(md & (M_NEG | M_ABS))) return;
  uint64_t a = md & M_ABS ? ~(1ull << 63) : ~0ull, ng = md & M_NEG ? (1ull << 63) : 0;
  for (int l = 0; l < w.wsize; ++l) x[l] = (x[l] & a) ^ ng;
}

// A 1- or 2-byte value from memory, zero- or sign-extended. Read at its own width: copying it
// into a wider zeroed word and reading that back stalls on store-to-load forwarding.
inline uint32_t sub_dword(const uint8_t* p, uint32_t bytes, bool sext) {
  if (bytes == 1) return sext ? uint32_t(int32_t(int8_t(*p))) : *p;
  uint16_t h;
  std::memcpy(&h, p, 2);
  return sext ? uint32_t(int32_t(int16_t(h))) : h;
}

// ---- vector destinations ----
inline uint64_t wmask(const Wave& w, const Inst& in) {
  uint64_t e = w.exec();
  if (in.flags & (F_DPP | F_DPP8)) e &= w.dpp_mask;
  return e;
}
void write32(Machine& m, Wave& w, const Inst& in, const uint32_t* r);            // d[0], exec-masked
void write32_reg(Machine& m, Wave& w, const Inst& in, int reg, const uint32_t* r, uint64_t mask);
void write16(Machine& m, Wave& w, const Inst& in, const uint32_t* r);            // low 16 bits of r
void write64(Machine& m, Wave& w, const Inst& in, const uint64_t* r);

// Output modifiers of a float result.
inline float fpost(const Inst& in, float x) {
  switch (in.omod) { case 1: x *= 2.0f; break; case 2: x *= 4.0f; break; case 3: x *= 0.5f; break; }
  if (in.flags & F_CLAMP) x = std::isnan(x) ? 0.0f : std::fmin(std::fmax(x, 0.0f), 1.0f);
  return x;
}
inline double fpost64(const Inst& in, double x) {
  switch (in.omod) { case 1: x *= 2.0; break; case 2: x *= 4.0; break; case 3: x *= 0.5; break; }
  if (in.flags & F_CLAMP) x = std::isnan(x) ? 0.0 : std::fmin(std::fmax(x, 0.0), 1.0);
  return x;
}

}  // namespace emu
