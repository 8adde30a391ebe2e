// Matrix instructions: WMMA (gfx11, gfx12; wave32) and MFMA (gfx942, gfx950; wave64, sources and
// accumulators in VGPRs or AGPRs). The decoder gives the shape and element types in aux[]:
// aux[0] = M, aux[1] = N, aux[2] = K | blocks << 16, aux[3] = A type | B type << 5 | C type << 10
// | unsupported-modifier flag << 15 (gfx950's f8f6f4 MFMAs get A's and B's types from cbsz and
// blgp). Products are summed in double and rounded once.
#include <cmath>

#include "operands.h"

namespace emu {

enum ElemType { E_F32, E_F16, E_BF16, E_I8, E_U8, E_FP8, E_BF8, E_I4, E_U4, E_IU8, E_IU4, E_XF32, E_F64,
                E_I32, E_FP6, E_BF6, E_FP4 };

static int ebits(int t) {
  switch (t) {
    case E_F16: case E_BF16: return 16;
    case E_I8: case E_U8: case E_FP8: case E_BF8: case E_IU8: return 8;
    case E_I4: case E_U4: case E_IU4: case E_FP4: return 4;
    case E_FP6: case E_BF6: return 6;
    case E_F64: return 64;
    default: return 32;
  }
}

// Element e (in register order) of one lane of a source operand starting at register `reg`.
template <int T>
static inline double elem(Machine& m, Wave& w, const Opnd& o, int lane, int e, bool sgn, bool neg_lo, bool neg_hi) {
  constexpr int bits = T == E_F16 || T == E_BF16 ? 16 : T == E_I8 || T == E_U8 || T == E_FP8 || T == E_BF8 || T == E_IU8 ? 8
                       : T == E_I4 || T == E_U4 || T == E_IU4 || T == E_FP4 ? 4 : T == E_FP6 || T == E_BF6 ? 6
                       : T == E_F64 ? 64 : 32;
  uint64_t raw;
  if (o.kind == K_VGPR) {
    int bit = e * bits, word = bit / 32;
    if (bits == 64) raw = w.vr(o.reg + word)[lane] | (uint64_t(w.vr(o.reg + word + 1)[lane]) << 32);
    else if (bits == 6 && bit % 32 > 26)       // packed 6-bit elements straddle register words
      raw = ((w.vr(o.reg + word)[lane] | (uint64_t(w.vr(o.reg + word + 1)[lane]) << 32)) >> (bit % 32)) & 63;
    else raw = (w.vr(o.reg + word)[lane] >> (bit % 32)) & ((1ull << bits) - 1);
  } else {
    raw = o.imm32;
  }
  double v;
  switch (T) {
    case E_F16: v = h2f(uint16_t(raw)); break;
    case E_BF16: v = bf2f(uint16_t(raw)); break;
    case E_I8: v = int8_t(raw); break;
    case E_U8: v = uint8_t(raw); break;
    case E_IU8: v = sgn ? double(int8_t(raw)) : double(uint8_t(raw)); break;
    case E_I4: v = int32_t(uint32_t(raw) << 28) >> 28; break;
    case E_U4: v = double(raw & 15); break;
    case E_IU4: v = sgn ? double(int32_t(uint32_t(raw) << 28) >> 28) : double(raw & 15); break;
    case E_FP8: v = f8_to_f32(uint8_t(raw), m.family == CDNA3 ? E4M3_FNUZ : E4M3_OCP); break;
    case E_BF8: v = f8_to_f32(uint8_t(raw), m.family == CDNA3 ? E5M2_FNUZ : E5M2_OCP); break;
    case E_FP6: v = mx_to_f32(uint32_t(raw), 2, 3, 1); break;
    case E_BF6: v = mx_to_f32(uint32_t(raw), 3, 2, 3); break;
    case E_FP4: v = mx_to_f32(uint32_t(raw), 2, 1, 1); break;
    case E_F64: v = bd(raw); break;
    case E_I32: v = int32_t(raw); break;
    default: v = bf(uint32_t(raw)); break;
  }
  // 16-bit elements: neg_lo negates the low halves, neg_hi the high ones; wider floats (the
  // f64 MFMA's neg:[...]) negate whole elements with neg_lo.
  if (bits == 16 ? (((e & 1) && neg_hi) || (!(e & 1) && neg_lo)) : (bits >= 32 && neg_lo)) v = -v;
  return v;
}

// Fills dst[r * K + k] with element k of row (or column) r; lane r + rows * (k / kpl) holds it.
template <int T>
static void load_operand(Machine& m, Wave& w, const Opnd& o, int rows, int K, int kpl, double* dst, bool sgn,
                         bool nlo, bool nhi) {
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < K; ++k) dst[r * K + k] = elem<T>(m, w, o, r + rows * (k / kpl), k % kpl, sgn, nlo, nhi);
}
// The common operand, 16-bit floats in VGPRs: two elements per register word, converted a word
// at a time (a lane's kpl elements are its registers' halves in order).
template <int T>
static void load_halves(Wave& w, const Opnd& o, int rows, int K, int kpl, double* dst, bool nlo, bool nhi) {
  const int groups = K / kpl;
  const double slo = nlo ? -1.0 : 1.0, shi = nhi ? -1.0 : 1.0;
  for (int q = 0; q < kpl / 2; ++q) {
    const uint32_t* reg = w.vr(o.reg + q);
    for (int g = 0; g < groups; ++g)
      for (int r = 0; r < rows; ++r) {
        uint32_t word = reg[r + rows * g];
        double* d = dst + r * K + g * kpl + 2 * q;
        d[0] = slo * (T == E_F16 ? h2f(uint16_t(word)) : bf2f(uint16_t(word)));
        d[1] = shi * (T == E_F16 ? h2f(uint16_t(word >> 16)) : bf2f(uint16_t(word >> 16)));
      }
  }
}

static void load_any(int t, Machine& m, Wave& w, const Opnd& o, int rows, int K, int kpl, double* dst, bool sgn,
                     bool nlo, bool nhi) {
  if (o.kind == K_VGPR && kpl % 2 == 0 && (t == E_F16 || t == E_BF16)) {
    if (t == E_F16) load_halves<E_F16>(w, o, rows, K, kpl, dst, nlo, nhi);
    else load_halves<E_BF16>(w, o, rows, K, kpl, dst, nlo, nhi);
    return;
  }
  switch (t) {
#define CASE(X) case X: load_operand<X>(m, w, o, rows, K, kpl, dst, sgn, nlo, nhi); break;
    CASE(E_F32) CASE(E_F16) CASE(E_BF16) CASE(E_I8) CASE(E_U8) CASE(E_FP8) CASE(E_BF8) CASE(E_I4) CASE(E_U4)
    CASE(E_IU8) CASE(E_IU4) CASE(E_XF32) CASE(E_F64) CASE(E_I32) CASE(E_FP6) CASE(E_BF6) CASE(E_FP4)
#undef CASE
    default: m.fail(w, w.pc > 0 ? m.prog->insts[size_t(w.pc - 1)] : m.prog->insts[0], "unknown matrix element type");
  }
}

// Where element (i, j) of the M x N accumulator lives: register index and lane.
struct Slot { int reg, lane; };
static inline Slot acc_slot(Machine& m, int M, int N, int i, int j, bool wmma, int cbits) {
  if (wmma) {
    if (m.family == RDNA3) return {i / 2, j + 16 * (i % 2)};          // row 2v + lane/16
    return {i % 8, j + 16 * (i / 8)};                                 // row 8*(lane/16) + v
  }
  (void)cbits;
  if (M == 16 && N == 16) return {i % 4, j + 16 * (i / 4)};
  if (M == 32 && N == 32) return {4 * (i / 8) + (i % 4), j + 32 * ((i / 4) % 2)};
  return {-1, -1};
}

// The dot products of row `ar` with the four rows of `b` (K apart), K a multiple of 4: p[j][u]
// sums the products of the k = u (mod 4), in order. Written with two-double vectors so that
// the sixteen sums stay in registers; each lane is the same IEEE arithmetic as scalar code.
typedef double v2d __attribute__((vector_size(16)));
static inline v2d ld2(const double* p) { v2d v; std::memcpy(&v, p, sizeof v); return v; }
static void dot4(const double* ar, const double* b, int K, double (*p)[4]) {
  v2d lo[4] = {}, hi[4] = {};
  for (int k = 0; k < K; k += 4) {
    v2d al = ld2(ar + k), ah = ld2(ar + k + 2);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      lo[j] += al * ld2(b + j * K + k);
      hi[j] += ah * ld2(b + j * K + k + 2);
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    p[j][0] = lo[j][0]; p[j][1] = lo[j][1];
    p[j][2] = hi[j][0]; p[j][3] = hi[j][1];
  }
}

static void matrix(Machine& m, Wave& w, const Inst& in, bool wmma) {
  int M = in.aux[0], N = in.aux[1], K = in.aux[2] & 0xffff, blocks = in.aux[2] >> 16;
  int ta = in.aux[3] & 31, tb = (in.aux[3] >> 5) & 31, tc = (in.aux[3] >> 10) & 31;
  if ((in.aux[3] >> 15) & 1) m.fail(w, in, "broadcast or format modifiers (cbsz/abid/blgp) are not supported");
  if (blocks != 1 || !((M == 16 && N == 16) || (M == 32 && N == 32)))
    m.fail(w, in, "only single-block 16x16 and 32x32 matrix shapes are supported");
  const Opnd &A = in.s[0], &B = in.s[1], &C = in.s[2], &D = in.d[0];
  int ws = w.wsize;
  int cbits = ebits(tc);
  bool c16 = cbits == 16;
  // accumulator registers: gfx11 keeps one 16-bit value per register, gfx12 packs two
  int cw = c16 ? (wmma && m.family == RDNA3 ? 32 : 16) : cbits;
  int creg = (M * N * cw) / (32 * ws);
  if (w.npend) {
    if (A.kind == K_VGPR) check_vread(m, w, in, A.reg, A.n);
    if (B.kind == K_VGPR) check_vread(m, w, in, B.reg, B.n);
    if (C.kind == K_VGPR) check_vread(m, w, in, C.reg, C.n);
    check_vread(m, w, in, D.reg, D.n);
  }
  // Which lanes hold row i of A (column j of B), and which element of the lane is k.
  int lanes_per_k = wmma ? (m.family == RDNA3 ? 1 : 2) : ws / M;       // lane groups splitting K
  int kpl = K / lanes_per_k;                                           // K elements per lane
  // An f8f6f4 MFMA's register ranges follow its formats: 32 elements per lane of 8, 6 or 4 bits.
  if (!wmma && (K == 128 || (M == 32 && K == 64))) {
    static const char* fmt[] = {"fp8", "bf8", "fp6", "bf6", "fp4"};
    const int types[2] = {ta, tb};
    const Opnd* ops[2] = {&A, &B};
    for (int i = 0; i < 2; ++i) {
      int want = kpl * ebits(types[i]) / 32;
      if (ops[i]->kind == K_VGPR && ops[i]->n != want)
        m.fail(w, in, std::string(i ? "B" : "A") + " in " + fmt[types[i] >= E_FP6 ? types[i] - E_FP6 + 2 : types[i] - E_FP8] +
                          " takes " + std::to_string(want) + " registers, not " + std::to_string(ops[i]->n));
    }
  }
  bool sa = in.neg_lo & 1, sb = (in.neg_lo >> 1) & 1;                  // iu8/iu4 signedness
  bool intmode = ta == E_I8 || ta == E_U8 || ta == E_IU8 || ta == E_I4 || ta == E_U4 || ta == E_IU4;
  bool fneg = !intmode;
  // A as a[i][k] and B transposed as bt[j][k], so each dot product walks memory in order. On the
  // stack: a thread_local costs a call to find it in a dynamically loaded module.
  double a[32 * 64], bt[32 * 64];
  if (M * K > 32 * 64 || N * K > 32 * 64) m.fail(w, in, "matrix shape too large");
  load_any(ta, m, w, A, M, K, kpl, a, sa, fneg && (in.neg_lo & 1), fneg && (in.neg_hi & 1));
  load_any(tb, m, w, B, N, K, kpl, bt, sb, fneg && (in.neg_lo & 2), fneg && (in.neg_hi & 2));
  bool c_hi = c16 && wmma && m.family == RDNA3 && ((in.opsel >> 2) & 1);
  bool c64 = tc == E_F64;
  uint32_t out[16 * LANES];
  if (creg > 16) m.fail(w, in, "matrix accumulator too large");
  for (int r = 0; r < creg; ++r) std::memcpy(&out[r * LANES], w.vr(D.reg + r), LANES * 4);
  // The common case, float products into an f32 accumulator in VGPRs with no modifier on C.
  if (!intmode && tc == E_F32 && C.kind == K_VGPR && !((in.neg_hi >> 2) & 1) && !((in.neg_lo >> 2) & 1)) {
    if (K % 4 == 0) {
      // Four outputs at a time: their sums are independent, so they overlap instead of waiting
      // on one another's additions; each is summed in the same order as below.
      for (int i = 0; i < M; ++i)
        for (int j0 = 0; j0 < N; j0 += 4) {
          double p[4][4];
          dot4(a + i * K, bt + j0 * K, K, p);
          for (int jj = 0; jj < 4; ++jj) {
            Slot sl = acc_slot(m, M, N, i, j0 + jj, wmma, cbits);
            double acc = (p[jj][0] + p[jj][1]) + (p[jj][2] + p[jj][3]) + double(bf(w.vr(C.reg + sl.reg)[sl.lane]));
            out[size_t(sl.reg) * LANES + sl.lane] = fb(float(acc));
          }
        }
    } else {
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          Slot sl = acc_slot(m, M, N, i, j, wmma, cbits);
          const double* ar = a + i * K;
          const double* br = bt + j * K;
          double p[4] = {0, 0, 0, 0};
          int k = 0;
          for (; k + 4 <= K; k += 4)
            for (int u = 0; u < 4; ++u) p[u] += ar[k + u] * br[k + u];
          for (; k < K; ++k) p[0] += ar[k] * br[k];
          double acc = (p[0] + p[1]) + (p[2] + p[3]) + double(bf(w.vr(C.reg + sl.reg)[sl.lane]));
          out[size_t(sl.reg) * LANES + sl.lane] = fb(float(acc));
        }
    }
  } else {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      Slot s = acc_slot(m, M, N, i, j, wmma, cbits);
      int reg = c64 ? 2 * s.reg : s.reg, half = 0;        // f64: register pairs
      if (c16) {
        if (m.family == RDNA3) half = c_hi ? 1 : 0;
        else { half = reg & 1; reg /= 2; }
      }
      double c;
      if (c64) {
        c = C.kind == K_VGPR ? bd(w.vr(C.reg + reg)[s.lane] | (uint64_t(w.vr(C.reg + reg + 1)[s.lane]) << 32))
                             : bd(C.imm64);
      } else if (C.kind == K_VGPR) {
        uint32_t raw = w.vr(C.reg + reg)[s.lane];
        if (c16) raw = half ? raw >> 16 : raw & 0xffff;
        c = tc == E_F16 ? h2f(uint16_t(raw)) : tc == E_BF16 ? bf2f(uint16_t(raw))
            : tc == E_I32 ? double(int32_t(raw)) : double(bf(raw));
      } else {
        c = tc == E_I32 ? double(int32_t(C.imm32)) : c16 ? double(h2f(uint16_t(C.imm16))) : double(bf(C.imm32));
      }
      if (!intmode) {
        if ((in.neg_hi >> 2) & 1) c = std::fabs(c);
        if ((in.neg_lo >> 2) & 1) c = -c;
      }
      uint32_t res;
      if (intmode) {
        int64_t acc = int64_t(c);
        for (int k = 0; k < K; ++k) acc += int64_t(a[i * K + k]) * int64_t(bt[j * K + k]);
        if (in.flags & F_CLAMP) acc = std::max<int64_t>(INT32_MIN, std::min<int64_t>(INT32_MAX, acc));
        res = uint32_t(acc);
      } else {
        const double* ar = a + i * K;
        const double* br = bt + j * K;
        double p[4] = {0, 0, 0, 0};                 // four partial sums: the loop vectorises
        int k = 0;
        for (; k + 4 <= K; k += 4)
          for (int u = 0; u < 4; ++u) p[u] += ar[k + u] * br[k + u];
        for (; k < K; ++k) p[0] += ar[k] * br[k];
        double acc = (p[0] + p[1]) + (p[2] + p[3]) + c;
        if (c64) {
          out[size_t(reg) * LANES + s.lane] = uint32_t(db(acc));
          out[size_t(reg + 1) * LANES + s.lane] = uint32_t(db(acc) >> 32);
          continue;
        }
        res = tc == E_F16 ? f2h(float(acc)) : tc == E_BF16 ? f2bf(float(acc)) : fb(float(acc));
      }
      uint32_t& d = out[size_t(reg) * LANES + s.lane];
      if (c16) d = half ? ((d & 0xffff) | (res << 16)) : ((d & 0xffff0000u) | (res & 0xffff));
      else d = res;
    }
  }
  uint64_t e = w.exec();
  for (int r = 0; r < creg; ++r)
    for (int l = 0; l < ws; ++l)
      if ((e >> l) & 1) w.vr(D.reg + r)[l] = out[size_t(r) * LANES + l];
}

H(v_wmma) { matrix(m, w, in, true); }
H(v_mfma) { matrix(m, w, in, false); }
// v_accvgpr_read/write/mov: copies between VGPRs and AGPRs (the decoder maps aN to 256+N).
H(v_accvgpr_mov_b32) {
  uint32_t A[LANES];
  fetch32(m, w, in, 0, A);
  write32(m, w, in, A);
}

void register_matrix(Registry& r) {
  r.add("v_wmma", v_wmma);
  r.add("v_mfma", v_mfma);
  r.add("v_accvgpr_read_b32", v_accvgpr_mov_b32);
  r.add("v_accvgpr_write_b32", v_accvgpr_mov_b32);
  r.add("v_accvgpr_mov_b32", v_accvgpr_mov_b32);
}

}  // namespace emu
