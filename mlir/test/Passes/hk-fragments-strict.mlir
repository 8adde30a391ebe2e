// RUN: hk-opt %s -verify-diagnostics --hk-fragments="arch=gfx1100 strict=true"

// The same slow read is an error under strict=true.
func.func @slow_col_layout(%s: !hk.st<f16, 32x16, 1>, %i: index) attributes {hk.kernel} {
  // expected-error @+1 {{16-bit register tile in col layout is read from LDS with 16-bit loads}}
  %b = hk.lds_load %s[%i] : !hk.st<f16, 32x16, 1> -> !hk.rt<f16, 32x16, col>
  return
}
