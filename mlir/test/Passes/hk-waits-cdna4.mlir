// RUN: hk-opt %s --hk-waits="arch=gfx950" | FileCheck %s
// RUN: not hk-opt %s --hk-waits="arch=gfx950 derive=false" 2>&1 | FileCheck %s --check-prefix=CHECKED

// The fourth trap: on CDNA4 a global->LDS copy counts on vmcnt, which a barrier does not wait
// for. The pass puts its vmcnt wait before the barrier.
// CHECK-LABEL: func.func @copy_then_barrier
// CHECK: hk.copy_to_lds
// CHECK-NEXT: hk.wait_vm 0{{$}}
// CHECK-NEXT: hk.barrier
// CHECKED: barrier reached while an LDS write is in flight on the vector-memory counter
func.func @copy_then_barrier(%a: !hk.gl<bf16>, %c: !hk.coord, %s: !hk.st<bf16, 64x64, 1>) attributes {hk.kernel} {
  %c0 = arith.constant 0 : index
  hk.copy_to_lds %a[%c], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 1>
  hk.barrier
  %t = hk.lds_load %s[%c0] : !hk.st<bf16, 64x64, 1> -> !hk.rt<bf16, 64x64, row>
  hk.store %t, %a[%c] : !hk.rt<bf16, 64x64, row>, !hk.gl<bf16>
  return
}
