// RUN: hk-opt %s -verify-diagnostics --hk-fragments="arch=gfx950"

// gfx950 has 16x16x32 and 16x16x16 bf16 MFMAs; i8 comes in K multiples of 64.
func.func @k_units(%a: !hk.rt<i8, 16x32, row>, %c: !hk.rt<i32, 16x16, row>) attributes {hk.kernel} {
  // expected-error @+1 {{gfx950's i8 matrix instruction takes K in multiples of 64 but the operands have K = 32}}
  %0 = hk.mma ABt %a, %a, %c : !hk.rt<i8, 16x32, row>, !hk.rt<i8, 16x32, row>, !hk.rt<i32, 16x16, row>
  return
}
