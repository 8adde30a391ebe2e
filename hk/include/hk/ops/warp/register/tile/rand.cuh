// hk::rand(d, seed, offsets): uniform floats in [0, 1), bit-identical to Triton's
// tl.rand(seed, offsets) for int32 offsets.
//
// Triton draws Philox 4x32 with 10 rounds: counter (offset, 0, 0, 0) with the offset's bits read
// as uint32, key (low, high 32 bits of the seed as uint64; an int32 seed sign-extends, so pass it
// as int64_t(seed)); it keeps the first output word w and maps it to a float as
// float(w' ) * 4.6566127342e-10f, where w' is w read as int32 and folded to w' = -w' - 1 when
// negative (that is, ~w'). Each round, with multipliers A = 0xD2511F53 and B = 0xCD9E8D57:
//   (c0, c1, c2, c3) <- (hi(B*c2) ^ c1 ^ k0, lo(B*c2), hi(A*c0) ^ c3 ^ k1, lo(A*c0))
// then the key advances by (0x9E3779B9, 0xBB67AE85).
#pragma once

#include "maps.cuh"

namespace hk {
namespace detail {

HK_DEV uint32_t mulhi(uint32_t a, uint32_t b) { return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32); }

HK_DEV uint32_t philox_first_word(uint32_t offset, uint32_t k0, uint32_t k1) {
  constexpr uint32_t A = 0xD2511F53u, B = 0xCD9E8D57u, KA = 0x9E3779B9u, KB = 0xBB67AE85u;
  uint32_t c0 = offset, c1 = 0, c2 = 0, c3 = 0;
  unroll<10>([&](auto) {
    const uint32_t p0 = c0, p2 = c2;
    c0 = mulhi(B, p2) ^ c1 ^ k0;
    c2 = mulhi(A, p0) ^ c3 ^ k1;
    c1 = B * p2;
    c3 = A * p0;
    k0 += KA;
    k1 += KB;
  });
  return c0;
}

HK_DEV float uniform_from_word(uint32_t w) {
  // The draw is rounded here, as tl.rand's is: HIP contracts across statements, and would fuse
  // this product with an add of the caller's (rand(...) + c) into one fma, off by an ulp.
#pragma clang fp contract(off)
  int32_t x = static_cast<int32_t>(w);
  x = x < 0 ? ~x : x;  // -x - 1 without overflow
  return static_cast<float>(x) * 4.6566127342e-10f;
}

}  // namespace detail

template <class D, class O>
HK_DEV void rand(D& d, uint64_t seed, const O& offsets) {
  static_assert((is_rt<D> || is_rv<D>) && __is_same(typename D::dtype, float), "hk::rand: d is a float tile or vector");
  static_assert(__is_same(typename O::dtype, int32_t) && detail::congruent<D, O>, "hk::rand: offsets are an int32_t tile of d's shape and layout");
  const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  unroll<detail::reg_info<D>::n>([&](auto i) {
    detail::slot<i>(d) = detail::uniform_from_word(detail::philox_first_word(static_cast<uint32_t>(detail::slot<i>(offsets)), k0, k1));
  });
}

}  // namespace hk
