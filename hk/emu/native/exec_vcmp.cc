// VOPC: comparisons of f16/f32/f64 and 16/32/64-bit integers, and v_cmp_class. The result is a
// lane mask in VCC or an SGPR (pair); v_cmpx writes EXEC (and, on gfx9, the mask as well).
#include <cmath>
#include <string>

#include "operands.h"

namespace emu {

enum Ty { T_F16, T_F32, T_F64, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64 };
// Float conditions in encoding order; the integer ones use a subset with the same meaning.
enum Cond { C_F, C_LT, C_EQ, C_LE, C_GT, C_LG, C_GE, C_O, C_U, C_NGE, C_NLG, C_NGT, C_NLE, C_NEQ,
            C_NLT, C_TRU, C_NE };

template <class T> static inline bool cond(int c, T a, T b) {
  bool un = std::isnan(double(a)) || std::isnan(double(b));
  switch (c) {
    case C_F: return false;
    case C_LT: return a < b;
    case C_EQ: return a == b;
    case C_LE: return a <= b;
    case C_GT: return a > b;
    case C_LG: return !un && a != b;
    case C_GE: return a >= b;
    case C_O: return !un;
    case C_U: return un;
    case C_NGE: return !(a >= b);
    case C_NLG: return un || a == b;
    case C_NGT: return !(a > b);
    case C_NLE: return !(a <= b);
    case C_NEQ: return !(a == b);
    case C_NLT: return !(a < b);
    case C_TRU: return true;
    case C_NE: return a != b;
  }
  return false;
}

static void finish(Machine& m, Wave& w, const Inst& in, uint64_t res, bool x) {
  if (x) {
    w.set_exec(res);
    if (in.nd > 0 && in.d[0].kind == K_SGPR) mset(m, w, in, in.d[0], res);
  } else {
    mset(m, w, in, in.d[0], res);
  }
}

template <int T, int C, bool X>
static void cmp(Machine& m, Wave& w, const Inst& in) {
  uint64_t ex = w.exec(), res = 0;
  if (in.flags & (F_DPP | F_DPP8)) { uint32_t t[LANES]; fetch32(m, w, in, 0, t); ex &= w.dpp_mask; }
  int n = w.wsize;
  if (T == T_F64 || T == T_I64 || T == T_U64) {
    uint64_t A[LANES], B[LANES];
    if (T == T_F64) { f64src(m, w, in, 0, A); f64src(m, w, in, 1, B); }
    else { fetch64(m, w, in, 0, A, T == T_I64 ? 'i' : 'u'); fetch64(m, w, in, 1, B, T == T_I64 ? 'i' : 'u'); }
    for (int l = 0; l < n; ++l) {
      bool r = T == T_F64 ? cond<double>(C, bd(A[l]), bd(B[l]))
             : T == T_I64 ? cond<int64_t>(C, int64_t(A[l]), int64_t(B[l])) : cond<uint64_t>(C, A[l], B[l]);
      if (r) res |= 1ull << l;
    }
  } else if (T == T_F16 || T == T_I16 || T == T_U16) {
    uint32_t A[LANES], B[LANES];
    fetch16(m, w, in, 0, A, T == T_F16); fetch16(m, w, in, 1, B, T == T_F16);
    for (int l = 0; l < n; ++l) {
      bool r = T == T_F16 ? cond<float>(C, h2f(uint16_t(A[l])), h2f(uint16_t(B[l])))
             : T == T_I16 ? cond<int32_t>(C, int16_t(A[l]), int16_t(B[l])) : cond<uint32_t>(C, A[l] & 0xffff, B[l] & 0xffff);
      if (r) res |= 1ull << l;
    }
  } else {
    uint32_t A[LANES], B[LANES];
    if (T == T_F32) { f32src(m, w, in, 0, A); f32src(m, w, in, 1, B); }
    else { fetch32(m, w, in, 0, A); fetch32(m, w, in, 1, B); }
    for (int l = 0; l < n; ++l) {
      bool r = T == T_F32 ? cond<float>(C, bf(A[l]), bf(B[l]))
             : T == T_I32 ? cond<int32_t>(C, int32_t(A[l]), int32_t(B[l])) : cond<uint32_t>(C, A[l], B[l]);
      if (r) res |= 1ull << l;
    }
  }
  finish(m, w, in, res & ex, X);
}

static inline int fclass(double v, bool denorm, bool snan) {
  if (std::isnan(v)) return snan ? 0 : 1;
  bool neg = std::signbit(v);
  if (std::isinf(v)) return neg ? 2 : 9;
  if (v == 0) return neg ? 5 : 6;
  if (denorm) return neg ? 4 : 7;
  return neg ? 3 : 8;
}
template <int T, bool X>
static void cmp_class(Machine& m, Wave& w, const Inst& in) {
  uint32_t B[LANES];
  fetch32(m, w, in, 1, B);
  uint64_t ex = w.exec(), res = 0;
  int n = w.wsize;
  if (T == T_F64) {
    uint64_t A[LANES];
    f64src(m, w, in, 0, A);
    for (int l = 0; l < n; ++l) {
      double v = bd(A[l]);
      bool den = std::fpclassify(v) == FP_SUBNORMAL, sn = std::isnan(v) && !((A[l] >> 51) & 1);
      if ((B[l] >> fclass(v, den, sn)) & 1) res |= 1ull << l;
    }
  } else if (T == T_F16) {
    uint32_t A[LANES];
    fetch16(m, w, in, 0, A, true);
    for (int l = 0; l < n; ++l) {
      uint32_t h = A[l] & 0xffff;
      double v = h2f(uint16_t(h));
      bool den = (h & 0x7c00) == 0 && (h & 0x3ff), sn = std::isnan(v) && !((h >> 9) & 1);
      if ((B[l] >> fclass(v, den, sn)) & 1) res |= 1ull << l;
    }
  } else {
    uint32_t A[LANES];
    f32src(m, w, in, 0, A);
    for (int l = 0; l < n; ++l) {
      double v = bf(A[l]);
      bool den = (A[l] & 0x7f800000u) == 0 && (A[l] & 0x7fffff), sn = std::isnan(v) && !((A[l] >> 22) & 1);
      if ((B[l] >> fclass(v, den, sn)) & 1) res |= 1ull << l;
    }
  }
  finish(m, w, in, res & ex, X);
}

template <int T, bool X>
static void add_type(Registry& r, const char* ty, bool flt) {
  static const char* fnames[] = {"f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg",
                                 "ngt", "nle", "neq", "nlt", "tru"};
  std::string pre = X ? "v_cmpx_" : "v_cmp_";
  Handler fh[] = {cmp<T, C_F, X>, cmp<T, C_LT, X>, cmp<T, C_EQ, X>, cmp<T, C_LE, X>, cmp<T, C_GT, X>,
                  cmp<T, C_LG, X>, cmp<T, C_GE, X>, cmp<T, C_O, X>, cmp<T, C_U, X>, cmp<T, C_NGE, X>,
                  cmp<T, C_NLG, X>, cmp<T, C_NGT, X>, cmp<T, C_NLE, X>, cmp<T, C_NEQ, X>, cmp<T, C_NLT, X>,
                  cmp<T, C_TRU, X>};
  if (flt) {
    for (int c = 0; c < 16; ++c) r.add((pre + fnames[c] + "_" + ty).c_str(), fh[c]);
    r.add((pre + "t_" + ty).c_str(), cmp<T, C_TRU, X>);
  } else {
    const char* inames[] = {"f", "lt", "eq", "le", "gt", "ne", "ge", "t", "lg"};
    Handler ih[] = {cmp<T, C_F, X>, cmp<T, C_LT, X>, cmp<T, C_EQ, X>, cmp<T, C_LE, X>, cmp<T, C_GT, X>,
                    cmp<T, C_NE, X>, cmp<T, C_GE, X>, cmp<T, C_TRU, X>, cmp<T, C_NE, X>};
    for (int c = 0; c < 9; ++c) r.add((pre + inames[c] + "_" + ty).c_str(), ih[c]);
  }
}

void register_vcmp(Registry& r) {
  add_type<T_F16, false>(r, "f16", true);  add_type<T_F16, true>(r, "f16", true);
  add_type<T_F32, false>(r, "f32", true);  add_type<T_F32, true>(r, "f32", true);
  add_type<T_F64, false>(r, "f64", true);  add_type<T_F64, true>(r, "f64", true);
  add_type<T_I16, false>(r, "i16", false); add_type<T_I16, true>(r, "i16", false);
  add_type<T_U16, false>(r, "u16", false); add_type<T_U16, true>(r, "u16", false);
  add_type<T_I32, false>(r, "i32", false); add_type<T_I32, true>(r, "i32", false);
  add_type<T_U32, false>(r, "u32", false); add_type<T_U32, true>(r, "u32", false);
  add_type<T_I64, false>(r, "i64", false); add_type<T_I64, true>(r, "i64", false);
  add_type<T_U64, false>(r, "u64", false); add_type<T_U64, true>(r, "u64", false);
  r.add("v_cmp_class_f32", cmp_class<T_F32, false>);
  r.add("v_cmpx_class_f32", cmp_class<T_F32, true>);
  r.add("v_cmp_class_f16", cmp_class<T_F16, false>);
  r.add("v_cmpx_class_f16", cmp_class<T_F16, true>);
  r.add("v_cmp_class_f64", cmp_class<T_F64, false>);
  r.add("v_cmpx_class_f64", cmp_class<T_F64, true>);
}

}  // namespace emu
