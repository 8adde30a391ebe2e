// hk::copy(dst, src): converts element type and layout of register tiles (and vectors), and
// hk::transpose(dst, src).
//
// When the two layouts put the same element in the same slot of the same lane, copy is a
// conversion per slot. Otherwise elements move between lanes with ds_bpermute (an LDS-unit
// lane shuffle that uses no LDS memory), or v_permlanex16 between the halves of a wave32:
//
//  - same major dimension (e.g. an fp32 accumulator row_l -> a 16-bit col_l B operand): an
//    element keeps its lane%16 and only changes lane group and slot; each destination slot pulls
//    from at most one slot per lane group: <= GROUPS bpermutes per slot, fewer when groups agree.
//  - different major dimension (e.g. an fp32 accumulator row_l -> a 16-bit row_l A operand, the
//    flash-attention P): each 16x16 block is transposed. The source is first brought to the
//    canonical pattern (lane group g holds minor indices K*g .. K*g+K-1, K = 16/GROUPS), then
//    transposed in K rounds of one bpermute per slot: in round r the lane holding row a reads
//    the lane holding column (b + r) mod K of its block, which must supply its slot (a - r) mod K;
//    both sides rotate their K slots by a lane-dependent amount (log2 K select steps) so that
//    every round reads one register. Then the canonical pattern is brought to the destination's.
//
// Values travel as 32-bit words of the destination's compute type (float or int), so every
// element conversion happens once, rounding to nearest even.
#pragma once

#include "maps.cuh"

namespace hk {
namespace detail {

inline constexpr int CANON_K = 16 / GROUPS;

// Canonical pattern: slot e of block e/K holds minor index 16*(e/K) + K*g + e%K.
struct canon_pattern {
  static constexpr bool dup = false;
  template <int N> static constexpr int slots() { return N / GROUPS; }
  template <int N> static constexpr int minor_of(int e, int g) { return 16 * (e / CANON_K) + CANON_K * g + e % CANON_K; }
};

// Where a destination slot's element comes from, for each destination lane group: the source
// slot es[k] of the distinct sources k = pick[g], read from lane group src_group[g] (same lane%16).
struct pull_plan {
  int n = 0;
  int es[4] = {};
  bool own[4] = {};     // every group using source k reads its own lane
  int pick[4] = {};
  int src_group[4] = {};
};

template <class PS, int N>
constexpr pull_plan plan_pull(int m_of_group[4]) {
  pull_plan p;
  for (int g = 0; g < GROUPS; ++g) {
    const int m = m_of_group[g];
    int es = -1, gs = -1;
    // Prefer this lane's own group (free), then any group holding m.
    for (int e = 0; e < PS::template slots<N>() && es < 0; ++e)
      if (PS::template minor_of<N>(e, g) == m) { es = e; gs = g; }
    for (int h = 0; h < GROUPS && es < 0; ++h)
      for (int e = 0; e < PS::template slots<N>() && es < 0; ++e)
        if (PS::template minor_of<N>(e, h) == m) { es = e; gs = h; }
    int k = 0;
    while (k < p.n && p.es[k] != es) ++k;
    if (k == p.n) { p.es[k] = es; p.own[k] = true; ++p.n; }
    p.own[k] = p.own[k] && gs == g;
    p.pick[g] = k;
    p.src_group[g] = gs;
  }
  return p;
}

template <int SD>
struct pull_plans { pull_plan p[SD]; };

template <class PD, class PS, int N>
constexpr pull_plans<PD::template slots<N>()> make_pull_plans() {
  pull_plans<PD::template slots<N>()> r;
  for (int e = 0; e < PD::template slots<N>(); ++e) {
    int m[4] = {};
    for (int g = 0; g < GROUPS; ++g) m[g] = PD::template minor_of<N>(e, g);
    r.p[e] = plan_pull<PS, N>(m);
  }
  return r;
}

// An opaque copy of a register value. Selecting between two values loaded from one array gets
// folded into a single load with a computed index, which then keeps the array out of registers
// (scratch); selecting between laundered values cannot be.
HK_DEV uint32_t launder(uint32_t x) {
  asm("" : "+v"(x));
  return x;
}

// x[i] for a runtime i < N (a chain of v_cndmask).
template <int N>
HK_DEV uint32_t pick(const uint32_t (&x)[N], int i) {
  uint32_t r = launder(x[0]);
  unroll<N - 1>([&](auto k) {
    const uint32_t v = launder(x[k + 1]);
    if (i == k + 1) r = v;
  });
  return r;
}

// TABLE[i] for a runtime i < GROUPS and a compile-time table given as a constexpr lambda.
template <class F>
HK_DEV int pick_const(F table, int i) {
  int r = table(ic<0>{});
  unroll<GROUPS - 1>([&](auto k) { if (i == k + 1) r = table(ic<k + 1>{}); });
  return r;
}

// One strip with the same major index: dst (pattern PD) from src (pattern PS), minor length N.
template <class PD, class PS, int N>
HK_DEV void pull_strip(uint32_t* dst, const uint32_t* src, int a, int g) {
  constexpr auto plans = make_pull_plans<PD, PS, N>();
  unroll<PD::template slots<N>()>([&](auto e) {
    constexpr pull_plan p = plans.p[decltype(e)::value];
    uint32_t v[p.n];
    unroll<p.n>([&](auto k) {
      constexpr int K = decltype(k)::value;
      if constexpr (p.own[K]) {
        v[K] = src[p.es[K]];
      } else if constexpr (GROUPS == 2) {
        // Wave32: the element is in this lane or in its twin of the other half; v_permlanex16
        // fetches the twin without a trip through the LDS unit.
        const uint32_t x = src[p.es[K]], twin = shfl_xor<16>(x);
        if constexpr (p.src_group[0] == 1 && p.src_group[1] == 0) v[K] = twin;
        else v[K] = pick_const([&](auto h) { return p.src_group[decltype(h)::value]; }, g) == g ? x : twin;
      } else {
        const int sg = pick_const([&](auto h) { return p.src_group[decltype(h)::value]; }, g);
        v[K] = bpermute(src[p.es[K]], a + 16 * sg);
      }
    });
    if constexpr (p.n == 1) {
      dst[e] = v[0];
    } else {
      dst[e] = pick(v, pick_const([&](auto h) { return p.pick[decltype(h)::value]; }, g));
    }
  });
}

// y[r] = x[(r - c) mod K] for a runtime 0 <= c < K: log2(K) conditional rotations.
template <int K>
HK_DEV void rotate(uint32_t (&x)[K], int c) {
  unroll<(K == 8 ? 3 : K == 4 ? 2 : 1)>([&](auto bit) {
    constexpr int step = 1 << decltype(bit)::value;
    uint32_t y[K];
    const bool on = (c >> bit) & 1;
    unroll<K>([&](auto r) {
      const uint32_t moved = launder(x[(r - step + K) % K]), kept = launder(x[r]);  // see launder()
      y[r] = on ? moved : kept;
    });
    unroll<K>([&](auto r) { x[r] = y[r]; });
  });
}

// Transposes one 16x16 block held in the canonical pattern: in[s] = X[a][K*g + s] becomes
// out[t] = X[K*g + t][a] (lane a = lane%16, group g).
HK_DEV void transpose_block(uint32_t* out, const uint32_t* in, int a, int g) {
  constexpr int K = CANON_K;
  uint32_t p[K], recv[K];
  unroll<K>([&](auto u) { p[u] = in[(K - u) % K]; });
  rotate<K>(p, a % K);  // p[r] = in[(a - r) mod K]
  unroll<K>([&](auto r) { recv[r] = bpermute(p[r], K * g + (a + r) % K + 16 * (a / K)); });
  rotate<K>(recv, a % K);  // out[t] = recv[(t - a) mod K]
  unroll<K>([&](auto t) { out[t] = recv[t]; });
}

template <class C, class T>
HK_DEV uint32_t to_word(T x) { return bit_cast<uint32_t>(to_compute_as<C>(to_compute(x))); }

template <class U, class C>
HK_DEV U from_word(uint32_t w) { return from_compute<U>(bit_cast<C>(w)); }

// A word of the element `x` moves in, and the destination element it becomes. Narrowing to a
// 16-bit float converts where the element is, before the move: each lane converts only its own
// elements, where a destination that holds elements twice (gfx11's operands) would convert each
// of them twice.
template <class U, class T>
inline constexpr bool narrow_first = is_16bit<U> && __is_same(T, float);

#if !defined(HK_CDNA4)
// x rounded to bf16 (to nearest even) in the upper half of a word, the lower half rounding
// residue, a NaN as the quiet NaN 0x7FC0 (what torch gives). Targets without a conversion
// instruction (all but gfx950) round in integer arithmetic: where a converted element moves
// between lanes, this costs one instruction less than the compiler's own conversion (which
// keeps NaN payloads) and lets v_perm_b32 pack two of them. FINITE (hk::copy_finite) skips the
// NaN test, two instructions of four: a NaN then rounds as its bits do (a quiet NaN stays one
// unless its top eight fraction bits are all set, which carry into a zero).
template <bool FINITE = false>
HK_DEV uint32_t bf16_in_high_half(float x) {
  const uint32_t b = bit_cast<uint32_t>(x);
  const uint32_t rounded = b + 0x7FFFu + ((b >> 16) & 1u);
  if constexpr (FINITE) return rounded;
  else return x != x ? 0x7FC00000u : rounded;
}
// Two floats as packed bf16, a in the low half: one v_perm_b32 packs the two rounded words.
template <bool FINITE = false>
HK_DEV uint32_t pack_bf16(float a, float b) {
  return __builtin_amdgcn_perm(bf16_in_high_half<FINITE>(b), bf16_in_high_half<FINITE>(a), 0x07060302u);
}
#endif

// x as the element U (what convert<U> gives; FINITE as above).
template <class U, bool FINITE, class T>
HK_DEV U narrow(T x) {
#if !defined(HK_CDNA4)
  if constexpr (FINITE && __is_same(U, bf16) && __is_same(T, float))
    return bit_cast<bf16>(static_cast<uint16_t>(bf16_in_high_half<true>(x) >> 16));
#endif
  return convert<U>(x);
}

template <class U, bool FINITE, class T>
HK_DEV uint32_t move_word(T x) {
#if !defined(HK_CDNA4)
  if constexpr (narrow_first<U, T> && __is_same(U, bf16)) return bf16_in_high_half<FINITE>(x) >> 16;
#endif
  if constexpr (narrow_first<U, T>) return bit_cast<uint16_t>(convert<U>(x));
  else return to_word<compute_t<U>>(x);
}

template <class U, class T>
HK_DEV U moved_element(uint32_t w) {
  if constexpr (narrow_first<U, T>) return bit_cast<U>(static_cast<uint16_t>(w));
  else return from_word<U, compute_t<U>>(w);
}

#if defined(HK_RDNA3)
// gfx11's fp32 accumulator to a 16-bit operand with the same major dimension (the P of
// attention as the B of P V): lane group g holds minor indices 2v + g of each 16, the operand
// all 16 in both groups. Each lane converts its own eight, packs them in pairs, takes its twin's
// four pairs across the halves of the wave (v_permlanex16), and interleaves the halves with
// v_perm_b32 (the byte order depends on the group): four exchanges and eight permutes per 16
// elements, where the general path moves and selects every element.
template <class D, class A>
inline constexpr bool acc_to_operand = __is_same(typename A::pattern, arch::acc_pattern) &&
                                       __is_same(typename D::pattern, arch::opnd_pattern) &&
                                       A::rows_major == D::rows_major && is_16bit<typename D::dtype> &&
                                       __is_same(typename A::dtype, float);

template <bool FINITE, class D, class A>
HK_DEV void acc_to_operand_strips(D& d, const A& a) {
  using U = typename D::dtype;
  const bool g1 = (laneid() >> 4) != 0;
  // v_perm_b32(src0 = twin, src1 = own): bytes 0-3 select the own word, 4-7 the twin's.
  const uint32_t sel_lo = g1 ? 0x01000504u : 0x05040100u, sel_hi = g1 ? 0x03020706u : 0x07060302u;
  unroll<A::strips>([&](auto s) {
    unroll<A::minor / 16>([&](auto b) {
      unroll<4>([&](auto u) {
        constexpr int e = 8 * decltype(b)::value + 2 * decltype(u)::value;  // own minors 16b + 4u + {0, 2} + g
        uint32_t own;
        if constexpr (__is_same(U, bf16)) own = pack_bf16<FINITE>(a.data[s][e], a.data[s][e + 1]);
        else own = static_cast<uint32_t>(bit_cast<uint16_t>(convert<U>(a.data[s][e]))) |
                   (static_cast<uint32_t>(bit_cast<uint16_t>(convert<U>(a.data[s][e + 1]))) << 16);
        const uint32_t twin = shfl_xor<16>(own);
        struct pair { U x[2]; };
        const pair lo = bit_cast<pair>(__builtin_amdgcn_perm(twin, own, sel_lo));
        const pair hi = bit_cast<pair>(__builtin_amdgcn_perm(twin, own, sel_hi));
        constexpr int m = 16 * decltype(b)::value + 4 * decltype(u)::value;
        d.data[s][m] = lo.x[0];
        d.data[s][m + 1] = lo.x[1];
        d.data[s][m + 2] = hi.x[0];
        d.data[s][m + 3] = hi.x[1];
      });
    });
  });
}
#endif

template <bool FINITE, class D, class A>
HK_DEV void relayout(D& d, const A& a) {
#if defined(HK_RDNA3)
  if constexpr (acc_to_operand<D, A>) {
    acc_to_operand_strips<FINITE>(d, a);
    return;
  }
#endif
  using U = typename D::dtype;
  using T = typename A::dtype;
  const int lane = laneid(), la = lane & 15, g = lane >> 4;
  uint32_t src[A::strips][A::slots];
  unroll<A::strips>([&](auto s) { unroll<A::slots>([&](auto e) { src[s][e] = move_word<U, FINITE>(a.data[s][e]); }); });
  uint32_t dst[D::strips][D::slots];
  if constexpr (A::rows_major == D::rows_major) {
    unroll<A::strips>([&](auto s) {
      pull_strip<typename D::pattern, typename A::pattern, A::minor>(dst[s], src[s], la, g);
    });
  } else {
    constexpr int K = CANON_K;
    // Canonical with the source's major dimension, then blockwise transpose, then the
    // destination's pattern.
    uint32_t cs[A::strips][A::minor / GROUPS];
    unroll<A::strips>([&](auto s) { pull_strip<canon_pattern, typename A::pattern, A::minor>(cs[s], src[s], la, g); });
    uint32_t cd[D::strips][D::minor / GROUPS];
    unroll<A::strips>([&](auto s) {
      unroll<A::minor / 16>([&](auto b) { transpose_block(&cd[b][K * s], &cs[s][K * b], la, g); });
    });
    unroll<D::strips>([&](auto s) { pull_strip<typename D::pattern, canon_pattern, D::minor>(dst[s], cd[s], la, g); });
  }
  unroll<D::strips>([&](auto s) { unroll<D::slots>([&](auto e) { d.data[s][e] = moved_element<U, T>(dst[s][e]); }); });
}

// Vectors: between distributions.
template <class D, class A>
HK_DEV void relayout_vec(D& d, const A& a) {
  using U = typename D::dtype;
  using C = compute_t<U>;
  constexpr int N = D::length;
  const int lane = laneid(), la = lane & 15, g = lane >> 4;
  uint32_t src[A::slots], dst[D::slots];
  unroll<A::slots>([&](auto e) { src[e] = to_word<C>(a.data[e]); });
  if constexpr (!A::is_major && !D::is_major) {
    pull_strip<typename D::dist::pattern, typename A::dist::pattern, N>(dst, src, la, g);
  } else if constexpr (A::is_major) {
    // Element i of a major vector sits in slot i/16 of lane i%16 (any group).
    unroll<D::slots>([&](auto s) {
      const int i = pick_const([&](auto h) { return D::index(decltype(s)::value, decltype(h)::value, 0); }, g);
      uint32_t v[N / 16];
      unroll<N / 16>([&](auto k) { v[k] = bpermute(src[k], 16 * g + i % 16); });
      dst[s] = pick(v, i / 16);
    });
  } else {
    // Element 16*s + la of a minor vector: in the source slot e' and lane group g' with
    // minor_of(e', g') == 16*s + la; any lane of group g' holds it.
    unroll<D::slots>([&](auto s) {
      uint32_t r = 0;
      unroll<A::slots>([&](auto e) {
        int from = -1;
        unroll<GROUPS>([&](auto h) {
          constexpr int m = A::index(decltype(e)::value, decltype(h)::value, 0);
          if constexpr (m / 16 == decltype(s)::value) { if (la == m % 16) from = h; }
        });
        bool any = false;
        unroll<GROUPS>([&](auto h) { any = any || A::index(e, h, 0) / 16 == s; });
        if (any) {
          const uint32_t v = bpermute(src[e], 16 * (from < 0 ? 0 : from) + la);
          if (from >= 0) r = v;
        }
      });
      dst[s] = r;
    });
  }
  unroll<D::slots>([&](auto s) { d.data[s] = from_word<U, C>(dst[s]); });
}

// OCP fp8 to 16-bit, four elements of a word at once in bit operations (the per-element decode
// takes tens of instructions): each byte is moved to the high byte of a 16-bit half
// (v_perm_b32), which is then e5m2 as fp16 (the same bias); e4m3's magnitude is shifted into
// fp16's fields and scaled by 2^(15-7) (v_pk_mul_f16, exact, subnormals too), its S.1111.111
// given fp16's top exponent bit (NaN). bf16 comes from that fp16 through fp32 (every fp8 value
// is one of both). Exact, as the decode is.
// Not on gfx950: its VOP3 instructions take no literal, so the constants live in SGPRs, and paged
// attention's fp8 kernels there spill SGPRs with them.
template <class U, class T>
inline constexpr bool fast_f8_to_16 = is_16bit<U> && is_fp8<T> && !is_fnuz<T>
#if defined(HK_CDNA4)
                                      && false
#endif
    ;

typedef _Float16 f16x2_cvt __attribute__((ext_vector_type(2)));
typedef short i16x2_cvt __attribute__((ext_vector_type(2)));

template <class U, class T>
HK_DEV void f8x4_to_16(uint32_t x, uint32_t (&out)[2]) {
  // e4m3: a byte whose magnitude is 0x7F carries into its top bit; the permute puts that byte
  // below the element's (bit 7 of its half), the element's byte at bits 8..15 (e5m2: t is 0).
  const uint32_t t = is_e4m3<T> ? (x & 0x7F7F7F7Fu) + 0x01010101u : 0u;
  constexpr uint32_t SEL[2] = {0x05010400u, 0x07030602u};  // bytes 0, 1 (2, 3) of x, of t
  unroll<2>([&](auto i) {
    uint32_t h = __builtin_amdgcn_perm(x, t, SEL[i]);
    if constexpr (is_e4m3<T>) {
      // S.EEEE.MMM.F >> 1 (arithmetic): S.S.EEEE.MMM; fp16 wants S.F.EEEE.MMM (F: NaN).
      const i16x2_cvt shifted = bit_cast<i16x2_cvt>(h) >> (i16x2_cvt){1, 1};
      const uint32_t bits = (bit_cast<uint32_t>(shifted) & 0xBF80BF80u) | ((h & 0x00800080u) << 7);
      h = bit_cast<uint32_t>(bit_cast<f16x2_cvt>(bits) * (f16x2_cvt){256.0f16, 256.0f16});
    }
    if constexpr (__is_same(U, bf16)) {
      const f16x2_cvt v = bit_cast<f16x2_cvt>(h);
      const float lo = static_cast<float>(v[0]), hi = static_cast<float>(v[1]);
      h = __builtin_amdgcn_perm(bit_cast<uint32_t>(hi), bit_cast<uint32_t>(lo), 0x07060302u);
    }
    out[i] = h;
  });
}

}  // namespace detail

// dst = src with dst's element type and layout (see the top of this file).
template <bool FINITE = false, class D, class A>
HK_DEV void copy(D& d, const A& a) {
  if constexpr (is_rt<D>) {
    static_assert(is_rt<A> && D::rows == A::rows && D::cols == A::cols, "hk::copy: tiles must have the same shape");
    if constexpr (same_slots<D, A> && detail::fast_f8_to_16<typename D::dtype, typename A::dtype> && D::slots % 4 == 0) {
      unroll<D::strips>([&](auto s) {
        unroll<D::slots / 4>([&](auto q) {
          uint32_t x, w[2];
          __builtin_memcpy(&x, &a.data[s][4 * q], 4);
          detail::f8x4_to_16<typename D::dtype, typename A::dtype>(x, w);
          __builtin_memcpy(&d.data[s][4 * q], w, 8);
        });
      });
    } else if constexpr (same_slots<D, A>) {
      unroll<D::strips>([&](auto s) { unroll<D::slots>([&](auto e) { d.data[s][e] = detail::narrow<typename D::dtype, FINITE>(a.data[s][e]); }); });
    } else {
      detail::relayout<FINITE>(d, a);
    }
  } else {
    static_assert(is_rv<D> && is_rv<A> && D::length == A::length, "hk::copy: vectors must have the same length");
    if constexpr (__is_same(typename D::dist, typename A::dist)) {
      unroll<D::slots>([&](auto s) { d.data[s] = convert<typename D::dtype>(a.data[s]); });
    } else {
      detail::relayout_vec(d, a);
    }
  }
}

// copy for a source that holds no NaN (or whose NaNs need not survive): narrowing f32 to bf16
// skips the NaN test where bf16 rounds in integer arithmetic (the IR's hk.cast finite).
template <class D, class A>
HK_DEV void copy_finite(D& d, const A& a) { copy<true>(d, a); }

// d = a^T, d is CxR for an RxC a (any layouts and element types).
template <class D, class A>
HK_DEV void transpose(D& d, const A& a) {
  static_assert(is_rt<D> && is_rt<A> && D::rows == A::cols && D::cols == A::rows, "hk::transpose: d must be CxR for an RxC a");
  // a's registers, read as the transposed tile in the other layout, are a^T: rows and columns
  // swap roles while strips and slots stay.
  using AT = rt<typename A::dtype, A::cols, A::rows, flip_layout<typename A::layout>>;
  AT at;
  __builtin_memcpy(&at.data, &a.data, sizeof(a.data));
  copy(d, at);
}

}  // namespace hk
