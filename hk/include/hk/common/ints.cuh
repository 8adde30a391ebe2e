// Integer scalar arithmetic as the DSL defines it (docs/semantics.md), defined for every input
// where C++ leaves some undefined: 32-bit two's complement that wraps; division truncates toward
// zero with x / 0 == 0 and x % 0 == x (so x == (x / y) * y + x % y still holds) and
// INT_MIN / -1 == INT_MIN; shifts use the amount's low five bits, as the hardware does.
// The checks are on uniform values, so they cost a scalar compare and select.
#pragma once

#include "arch.cuh"

namespace hk {

HK_DEV int wrap_add(int a, int b) { return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b)); }
HK_DEV int wrap_sub(int a, int b) { return static_cast<int>(static_cast<unsigned>(a) - static_cast<unsigned>(b)); }
HK_DEV int wrap_mul(int a, int b) { return static_cast<int>(static_cast<unsigned>(a) * static_cast<unsigned>(b)); }

HK_DEV int div_s(int a, int b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_sub(0, a);
  return a / b;
}

HK_DEV int rem_s(int a, int b) {
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b;
}

// Rounded up: one more than the truncated quotient when it was rounded down (a nonzero remainder
// of the quotient's sign).
HK_DEV int ceil_div_s(int a, int b) {
  const int q = div_s(a, b), r = rem_s(a, b);
  return b != 0 && r != 0 && ((r < 0) == (b < 0)) ? wrap_add(q, 1) : q;
}

HK_DEV int shl_s(int a, int b) { return static_cast<int>(static_cast<unsigned>(a) << (b & 31)); }
HK_DEV int shr_s(int a, int b) { return a >> (b & 31); }

}  // namespace hk
