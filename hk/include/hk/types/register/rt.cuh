// Register tiles: hk::rt<T, R, C, L>, an RxC tile owned by one wave (see layout.cuh).
#pragma once

#include "rv.cuh"

namespace hk {

template <class T, int R, int C, class L = row_l>
struct rt {
  static_assert(is_element<T>, "hk::rt: element type must be float, bf16, fp16, int32_t, int8_t, fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz or bool");
  static_assert(R > 0 && C > 0 && R % 16 == 0 && C % 16 == 0, "hk::rt: R and C must be positive multiples of 16");
  static_assert(is_layout<L>, "hk::rt: layout must be hk::row_l or hk::col_l");

  using dtype = T;
  using layout = L;
  using pattern = pattern_for<T>;
  static constexpr int rows = R, cols = C;
  static constexpr bool rows_major = is_operand_type<T> == L::is_row;
  static constexpr int major = rows_major ? R : C;   // across lanes, strips of 16
  static constexpr int minor = rows_major ? C : R;   // along each lane's slots
  static constexpr int strips = major / 16;
  static constexpr int slots = pattern::template slots<minor>();

  storage_t<T> data[strips][slots];

  using major_vec_dist = vl_major;
  using minor_vec_dist = vl_minor<pattern>;
  // One element per row (what a row reduction produces) and one per column.
  using col_vec = rv<T, R, __type_pack_element<rows_major ? 0 : 1, vl_major, vl_minor<pattern>>>;
  using row_vec = rv<T, C, __type_pack_element<rows_major ? 1 : 0, vl_major, vl_minor<pattern>>>;

  // Tile coordinates of strip s, slot e, in lane group g with in-group lane a.
  static constexpr int minor_index(int e, int g) { return pattern::template minor_of<minor>(e, g); }
  static constexpr int row_of(int s, int e, int g, int a) { return rows_major ? 16 * s + a : minor_index(e, g); }
  static constexpr int col_of(int s, int e, int g, int a) { return rows_major ? minor_index(e, g) : 16 * s + a; }
};

template <class X> inline constexpr bool is_rt = false;
template <class T, int R, int C, class L> inline constexpr bool is_rt<rt<T, R, C, L>> = true;

template <class RT, class U = typename RT::dtype> using col_vec = rv_as<typename RT::col_vec, U>;
template <class RT, class U = typename RT::dtype> using row_vec = rv_as<typename RT::row_vec, U>;

// The same shape and layout with another element type (may change the pattern).
template <class RT, class U> using rt_as = rt<U, RT::rows, RT::cols, typename RT::layout>;

// Two tiles whose slots hold the same elements (elementwise ops need this).
template <class A, class B>
inline constexpr bool same_slots = A::rows == B::rows && A::cols == B::cols &&
                                   A::rows_major == B::rows_major &&
                                   __is_same(typename A::pattern, typename B::pattern);

// Aliases for the fp32 accumulator of an MMA, and a 16-bit operand.
template <int R, int C> using rt_fl = rt<float, R, C, row_l>;
template <int R, int C, class L = row_l> using rt_bf = rt<bf16, R, C, L>;
template <int R, int C, class L = row_l> using rt_hf = rt<fp16, R, C, L>;

}  // namespace hk
