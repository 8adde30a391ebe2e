// Matrix multiply-accumulate on register tiles, fp32 accumulate; d may alias c.
//
//   mma_AB  (d[MxN], a[MxK] row_l, b[KxN] col_l, c)   d = a   * b   + c
//   mma_ABt (d[MxN], a[MxK] row_l, b[NxK] row_l, c)   d = a   * b^T + c
//   mma_AtB (d[MxN], a[KxM] col_l, b[KxN] col_l, c)   d = a^T * b   + c
//   mma_AtBt(d[MxN], a[KxM] col_l, b[NxK] row_l, c)   d = a^T * b^T + c
//
// d and c are rt<float, M, N, row_l>; a and b are bf16 or fp16 (both the same). In all four
// forms the operand whose rows (or columns) are M sits with M across lanes and K along the
// slots, which is exactly the matrix cores' A fragment; likewise N for B. So each form is the
// same loop of arch::mma_block over the (M/16) x (N/16) output blocks, without data movement.
#pragma once

#include "../../../types/register/rt.cuh"

namespace hk {
namespace detail {

template <class D, class A, class B, class C>
HK_DEV void mma(D& d, const A& a, const B& b, const C& c) {
  using T = typename A::dtype;
  static_assert(__is_same(T, bf16) || __is_same(T, fp16), "hk::mma: operands must be bf16 or fp16");
  static_assert(__is_same(typename B::dtype, T), "hk::mma: both operands must have the same element type");
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
