// RUN: hk-translate --hk-to-cpp --hk-arch=gfx950 %s | FileCheck %s
// RUN: hk-translate --hk-to-cpp --hk-arch=gfx1100 %s | FileCheck %s --check-prefix=RDNA3

// The fourth trap: even without hk-waits having run, the translation follows a CDNA4
// global->LDS copy by its vmcnt wait before the next barrier. RDNA3's copies end in LDS
// writes that the barrier itself orders, so no vmcnt wait is added there.
// CHECK: hk::group<1>::load(
// CHECK-NEXT: hk::wait_vm<0>(); // asynchronous global->LDS copy before the barrier
// CHECK-NEXT: hk::barrier();
// RDNA3: hk::group<1>::load(
// RDNA3-NEXT: hk::barrier();
func.func @copy(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel, hk.lds_bytes = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc {offset = 0 : i64} : !hk.st<bf16, 32x32, 1>
  hk.copy_to_lds %a[%c], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 32x32, 1>
  hk.barrier
  return
}
