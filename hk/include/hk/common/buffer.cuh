// Buffer resources: a base address and a byte range that the hardware checks on every load.
//
// A raw buffer load (buffer_load_b128 ... offen) reads base + soffset + voffset + imm; when
// voffset + imm is at or past the range it returns zeros without touching memory. soffset is not
// range checked, so a uniform advance (a K step) goes there and the per-lane part stays in
// voffset, where an out-of-range lane reads zero at no cost.
#pragma once

#include "words.cuh"

namespace hk::detail {

// The fourth word of a raw (unstructured, untyped) buffer resource: 32-bit data, range checked
// against num_records. Its encoding differs between GCN-style CDNA and RDNA3/RDNA4.
#if defined(HK_RDNA)
inline constexpr int buffer_rsrc_word3 = 0x31004000;
#else
inline constexpr int buffer_rsrc_word3 = 0x00020000;
#endif

// Rows of a tensor of divisor DIV (hk.types.divisor_of: columns and strides multiples of DIV
// elements, data aligned to DIV elements) are 16-byte multiples at 16-byte aligned addresses.
template <int DIV, class T>
inline constexpr bool rows_of_chunks = DIV * static_cast<int>(sizeof(T)) % 16 == 0;

// A voffset that every buffer load reads as zero (past any range).
inline constexpr uint32_t buffer_oob = 0x80000000u;

// `offset` (below 2^31) where `in`, else out of range: the top bit set arithmetically. A select
// would do the same, but the compiler may turn a select between addresses into a branch around
// each load, which diverges and splits every live range around it.
HK_DEV uint32_t offset_or_oob(bool in, int offset) {
  return static_cast<uint32_t>(offset) | (static_cast<uint32_t>(!in) << 31);
}

// `offset` where `flag` >= 0, else out of range: the flag's sign bit, in arithmetic. (A
// compare would make a lane mask per element, which the compiler keeps out of loops: scalar
// registers for every column of the tile.)
HK_DEV uint32_t offset_unless_negative(int flag, uint32_t offset) {
  return offset | (static_cast<uint32_t>(flag) & 0x80000000u);
}

typedef uint32_t u32x4_buf __attribute__((ext_vector_type(4)));

// A resource over `bytes` bytes from `base` (clamped to the 32-bit range the hardware checks).
HK_DEV __amdgpu_buffer_rsrc_t buffer_rsrc(const void* base, int64_t bytes) {
  const int64_t clamped = bytes < 0 ? 0 : bytes > 0x7fffffff ? 0x7fffffff : bytes;
  return __builtin_amdgcn_make_buffer_rsrc(const_cast<void*>(base), 0, static_cast<int>(clamped), buffer_rsrc_word3);
}
// The same over a 32-bit count (a negative one is empty): one compare instead of two 64-bit ones.
HK_DEV __amdgpu_buffer_rsrc_t buffer_rsrc(const void* base, int bytes) {
  return __builtin_amdgcn_make_buffer_rsrc(const_cast<void*>(base), 0, bytes < 0 ? 0 : bytes, buffer_rsrc_word3);
}

HK_DEV u32x4_buf buffer_load16(__amdgpu_buffer_rsrc_t r, uint32_t voffset, int soffset) {
  return __builtin_amdgcn_raw_buffer_load_b128(r, static_cast<int>(voffset), soffset, 0);
}

// A P-byte piece at voffset (+ soffset, which is not range checked): zeros where voffset is out
// of range.
template <int P>
HK_DEV typename bytes_t<P>::type buffer_load_piece(__amdgpu_buffer_rsrc_t r, uint32_t voffset, int soffset = 0) {
  const int v = static_cast<int>(voffset);
  if constexpr (P == 16) return __builtin_amdgcn_raw_buffer_load_b128(r, v, soffset, 0);
  else if constexpr (P == 8) return __builtin_amdgcn_raw_buffer_load_b64(r, v, soffset, 0);
  else if constexpr (P == 4) return __builtin_amdgcn_raw_buffer_load_b32(r, v, soffset, 0);
  else if constexpr (P == 2) return __builtin_amdgcn_raw_buffer_load_b16(r, v, soffset, 0);
  else return __builtin_amdgcn_raw_buffer_load_b8(r, v, soffset, 0);
}
// Stores a P-byte piece at voffset; an out-of-range voffset stores nothing.
template <int P>
HK_DEV void buffer_store_piece(typename bytes_t<P>::type x, __amdgpu_buffer_rsrc_t r, uint32_t voffset) {
  const int v = static_cast<int>(voffset);
  if constexpr (P == 16) __builtin_amdgcn_raw_buffer_store_b128(x, r, v, 0, 0);
  else if constexpr (P == 8) __builtin_amdgcn_raw_buffer_store_b64(x, r, v, 0, 0);
  else if constexpr (P == 4) __builtin_amdgcn_raw_buffer_store_b32(x, r, v, 0, 0);
  else if constexpr (P == 2) __builtin_amdgcn_raw_buffer_store_b16(x, r, v, 0, 0);
  else __builtin_amdgcn_raw_buffer_store_b8(x, r, v, 0, 0);
}

// One element of T (1, 2 or 4 bytes) at voffset.
template <class T>
HK_DEV T buffer_load_element(__amdgpu_buffer_rsrc_t r, uint32_t voffset) {
  if constexpr (sizeof(T) == 1) {
    return __builtin_bit_cast(T, __builtin_amdgcn_raw_buffer_load_b8(r, static_cast<int>(voffset), 0, 0));
  } else if constexpr (sizeof(T) == 2) {
    return __builtin_bit_cast(T, __builtin_amdgcn_raw_buffer_load_b16(r, static_cast<int>(voffset), 0, 0));
  } else {
    static_assert(sizeof(T) == 4, "hk: buffer elements are 1, 2 or 4 bytes");
    return __builtin_bit_cast(T, __builtin_amdgcn_raw_buffer_load_b32(r, static_cast<int>(voffset), 0, 0));
  }
}

// Stores one element of T at voffset; an out-of-range voffset stores nothing.
template <class T>
HK_DEV void buffer_store_element(__amdgpu_buffer_rsrc_t r, uint32_t voffset, T v) {
  if constexpr (sizeof(T) == 1) {
    __builtin_amdgcn_raw_buffer_store_b8(__builtin_bit_cast(unsigned char, v), r, static_cast<int>(voffset), 0, 0);
  } else if constexpr (sizeof(T) == 2) {
    __builtin_amdgcn_raw_buffer_store_b16(__builtin_bit_cast(unsigned short, v), r, static_cast<int>(voffset), 0, 0);
  } else {
    static_assert(sizeof(T) == 4, "hk: buffer elements are 1, 2 or 4 bytes");
    __builtin_amdgcn_raw_buffer_store_b32(__builtin_bit_cast(unsigned int, v), r, static_cast<int>(voffset), 0, 0);
  }
}

}  // namespace hk::detail
