// Matrix multiply-accumulate on register tiles; d may alias c.
//
//   mma_AB  (d[MxN], a[MxK] row_l, b[KxN] col_l, c)   d = a   * b   + c
//   mma_ABt (d[MxN], a[MxK] row_l, b[NxK] row_l, c)   d = a   * b^T + c
//   mma_AtB (d[MxN], a[KxM] col_l, b[KxN] col_l, c)   d = a^T * b   + c
//   mma_AtBt(d[MxN], a[KxM] col_l, b[NxK] row_l, c)   d = a^T * b^T + c
//
// a and b have one element type: bf16 or fp16 (d and c rt<float, M, N, row_l>), int8_t (d and c
// rt<int32_t, M, N, row_l>) or, in the format the target's matrix cores read, fp8e4m3 / fp8e5m2
// (OCP) or fp8e4m3fnuz / fp8e5m2fnuz (FNUZ) (rt<float, ...>).
// In all four forms the operand whose rows (or columns) are M sits with M across lanes and K
// along the slots, which is exactly the matrix cores' A fragment; likewise N for B (an 8-bit
// tile holds the same slots as a 16-bit one, a byte each: layout.cuh). So each form is the same
// loop of arch::mma_block (arch::mma8_block) over the (M/16) x (N/16) output blocks, without
// data movement.
#pragma once

#include "../../../types/register/rt.cuh"
#include "../register/tile/conversions.cuh"

namespace hk {
namespace detail {

template <class D, class A, class B, class C>
HK_DEV void mma(D& d, const A& a, const B& b, const C& c) {
  using T = typename A::dtype;
  static_assert(__is_same(T, bf16) || __is_same(T, fp16) || arch::is_mma8<T>,
                "hk::mma: operands must be bf16, fp16, int8_t or an fp8 type");
  static_assert(__is_same(typename B::dtype, T), "hk::mma: both operands must have the same element type");
  if constexpr (arch::is_mma8<T>) {
    using Acc = arch::mma8_acc_t<T>;
    static_assert(__is_same(D, rt<Acc, D::rows, D::cols, row_l>) && __is_same(C, D),
                  "hk::mma: d and c must be the same rt<int32_t, M, N, row_l> for int8_t operands, "
                  "rt<float, M, N, row_l> for fp8");
    static_assert(A::rows_major ? A::rows == D::rows : A::cols == D::rows, "hk::mma: a's M does not match d");
    static_assert(B::rows_major ? B::rows == D::cols : B::cols == D::cols, "hk::mma: b's N does not match d");
    static_assert(A::minor == B::minor, "hk::mma: a and b have different K");
    constexpr int K = A::minor;
    if (static_cast<const void*>(&d) != static_cast<const void*>(&c)) d = c;
    unroll<D::rows / 16>([&](auto m) {
      unroll<D::cols / 16>([&](auto n) {
        arch::mma8_block<T, K>(&d.data[n][arch::acc_block_slots * m],
                               reinterpret_cast<const uint8_t*>(a.data[m]),
                               reinterpret_cast<const uint8_t*>(b.data[n]));
      });
    });
  } else {
    static_assert(__is_same(D, rt<float, D::rows, D::cols, row_l>) && __is_same(C, D),
                  "hk::mma: d and c must be the same rt<float, M, N, row_l>");
    // Operands: M (resp. N) across lanes, K along the slots.
    static_assert(A::rows_major ? A::rows == D::rows : A::cols == D::rows, "hk::mma: a's M does not match d");
    static_assert(B::rows_major ? B::rows == D::cols : B::cols == D::cols, "hk::mma: b's N does not match d");
    static_assert(A::minor == B::minor, "hk::mma: a and b have different K");
    constexpr int K = A::minor;
    if (static_cast<const void*>(&d) != static_cast<const void*>(&c)) d = c;
    // d: columns across lanes (strip = output column block), rows along the slots
    // (arch::acc_block_slots per 16 rows).
    unroll<D::rows / 16>([&](auto m) {
      unroll<D::cols / 16>([&](auto n) {
        arch::mma_block<T, K>(&d.data[n][arch::acc_block_slots * m], a.data[m], b.data[n]);
      });
    });
  }
}

}  // namespace detail

template <class D, class A, class B, class C>
HK_DEV void mma_AB(D& d, const A& a, const B& b, const C& c) {
  static_assert(__is_same(typename A::layout, row_l) && __is_same(typename B::layout, col_l),
                "hk::mma_AB: a is MxK row_l, b is KxN col_l");
  static_assert(A::cols == B::rows, "hk::mma_AB: a is MxK, b is KxN");
  detail::mma(d, a, b, c);
}
template <class D, class A, class B, class C>
HK_DEV void mma_ABt(D& d, const A& a, const B& b, const C& c) {
  static_assert(__is_same(typename A::layout, row_l) && __is_same(typename B::layout, row_l),
                "hk::mma_ABt: a is MxK row_l, b is NxK row_l");
  static_assert(A::cols == B::cols, "hk::mma_ABt: a is MxK, b is NxK");
  detail::mma(d, a, b, c);
}
template <class D, class A, class B, class C>
HK_DEV void mma_AtB(D& d, const A& a, const B& b, const C& c) {
  static_assert(__is_same(typename A::layout, col_l) && __is_same(typename B::layout, col_l),
                "hk::mma_AtB: a is KxM col_l, b is KxN col_l");
  static_assert(A::rows == B::rows, "hk::mma_AtB: a is KxM, b is KxN");
  detail::mma(d, a, b, c);
}
template <class D, class A, class B, class C>
HK_DEV void mma_AtBt(D& d, const A& a, const B& b, const C& c) {
  static_assert(__is_same(typename A::layout, col_l) && __is_same(typename B::layout, row_l),
                "hk::mma_AtBt: a is KxM col_l, b is NxK row_l");
  static_assert(A::rows == B::cols, "hk::mma_AtBt: a is KxM, b is NxK");
  detail::mma(d, a, b, c);
}

}  // namespace hk
