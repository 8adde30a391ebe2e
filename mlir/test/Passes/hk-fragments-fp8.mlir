// RUN: hk-opt %s -split-input-file -verify-diagnostics --hk-fragments="arch=gfx942"
// RUN: not hk-opt %s -split-input-file --hk-fragments="arch=gfx942" 2>&1 | FileCheck %s --check-prefix=FNUZ
// RUN: not hk-opt %s -split-input-file --hk-fragments="arch=gfx950" 2>&1 | FileCheck %s --check-prefix=OCP
// RUN: not hk-opt %s -split-input-file --hk-fragments="arch=gfx1201" 2>&1 | FileCheck %s --check-prefix=OCP12

// gfx942's fp8 MFMAs read the FNUZ formats: the OCP types (hk.fp8e4m3, hk.fp8e5m2) are refused
// there, the FNUZ ones (hk.fp8e4m3fnuz, hk.fp8e5m2fnuz) taken; gfx950 and gfx12 read OCP and
// refuse FNUZ. Each refusal names the other format's type.
func.func @ocp_on_gfx942(%a: !hk.rt<f8E4M3FN, 16x32, row>, %c: !hk.rt<f32, 16x16, row>) attributes {hk.kernel} {
  // expected-error @+1 {{gfx942's fp8 matrix instructions read the FNUZ formats, not 'f8E4M3FN' (hk.fp8e4m3, OCP); use hk.fp8e4m3fnuz (FNUZ) or convert to bf16}}
  %0 = hk.mma ABt %a, %a, %c : !hk.rt<f8E4M3FN, 16x32, row>, !hk.rt<f8E4M3FN, 16x32, row>, !hk.rt<f32, 16x16, row>
  return
}

// -----

func.func @ocp_e5m2_on_gfx942(%a: !hk.rt<f8E5M2, 16x32, row>, %c: !hk.rt<f32, 16x16, row>) attributes {hk.kernel} {
  // expected-error @+1 {{gfx942's fp8 matrix instructions read the FNUZ formats, not 'f8E5M2' (hk.fp8e5m2, OCP); use hk.fp8e5m2fnuz (FNUZ) or convert to bf16}}
  %0 = hk.mma ABt %a, %a, %c : !hk.rt<f8E5M2, 16x32, row>, !hk.rt<f8E5M2, 16x32, row>, !hk.rt<f32, 16x16, row>
  return
}

// -----

// FNUZ-LABEL: func.func @fnuz
// FNUZ: hk.mma ABt
// OCP: error: gfx950's fp8 matrix instructions read the OCP formats, not 'f8E4M3FNUZ' (hk.fp8e4m3fnuz, FNUZ); use hk.fp8e4m3 (OCP) or convert to bf16
// OCP12: error: gfx1201's fp8 matrix instructions read the OCP formats, not 'f8E4M3FNUZ' (hk.fp8e4m3fnuz, FNUZ); use hk.fp8e4m3 (OCP) or convert to bf16
func.func @fnuz(%a: !hk.rt<f8E4M3FNUZ, 16x32, row>, %b: !hk.rt<f8E4M3FNUZ, 16x32, row>, %c: !hk.rt<f32, 16x16, row>) attributes {hk.kernel} {
  %0 = hk.mma ABt %a, %b, %c : !hk.rt<f8E4M3FNUZ, 16x32, row>, !hk.rt<f8E4M3FNUZ, 16x32, row>, !hk.rt<f32, 16x16, row>
  return
}
