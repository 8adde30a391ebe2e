// Raw memory words of 1 to 16 bytes: what loads and stores move, whatever the elements.
#pragma once

#include "util.cuh"

namespace hk::detail {

// Raw memory words. may_alias: the same bytes are also read and written as elements (bf16, ...),
// and type-based alias analysis must not reorder one kind of access across the other.
typedef uint8_t u8_raw __attribute__((may_alias));
typedef uint16_t u16_raw __attribute__((may_alias));
typedef uint32_t u32_raw __attribute__((may_alias));
typedef uint32_t u32x2 __attribute__((ext_vector_type(2), may_alias));
typedef uint32_t u32x4 __attribute__((ext_vector_type(4), may_alias));

template <int B> struct bytes_t;
template <> struct bytes_t<1> { using type = u8_raw; };
template <> struct bytes_t<2> { using type = u16_raw; };
template <> struct bytes_t<4> { using type = u32_raw; };
template <> struct bytes_t<8> { using type = u32x2; };
template <> struct bytes_t<16> { using type = u32x4; };

}  // namespace hk::detail
