// LDS <-> registers for vectors: load(rv&, const sv&) and store(sv&, const rv&).
#pragma once

#include "global_to_register.cuh"
#include "../../../../types/shared/sv.cuh"

namespace hk {

template <class V, class SV> requires(is_rv<V> && is_sv<SV>)
HK_DEV void load(V& dst, const SV& src) {
  static_assert(is_rv<V> && is_sv<SV>, "hk::load: expected (rv&, const sv&)");
  static_assert(__is_same(typename V::dtype, typename SV::dtype) && V::length == SV::length, "hk::load: vector types differ");
  const int lane = laneid(), a = lane & 15, g = lane >> 4;
  unroll<V::slots>([&](auto s) { dst.data[s] = src.data[V::index(s, g, a)]; });
}

template <class SV, class V> requires(is_rv<V> && is_sv<SV>)
HK_DEV void store(SV& dst, const V& src) {
  static_assert(is_rv<V> && is_sv<SV>, "hk::store: expected (sv&, const rv&)");
  static_assert(__is_same(typename V::dtype, typename SV::dtype) && V::length == SV::length, "hk::store: vector types differ");
  if (!detail::owns_vec_slot<V>()) return;
  const int lane = laneid(), a = lane & 15, g = lane >> 4;
  unroll<V::slots>([&](auto s) { dst.data[V::index(s, g, a)] = src.data[s]; });
}

}  // namespace hk
