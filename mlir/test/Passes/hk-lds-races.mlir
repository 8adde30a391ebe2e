// RUN: hk-opt %s -split-input-file -verify-diagnostics --hk-lds-races="arch=gfx1100"

// A workgroup copy, then each wave reads rows another wave copied: no barrier orders them.
func.func @copy_then_read_other_rows(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 1>
  // expected-note @+1 {{the workgroup copy, whose share every wave moves}}
  hk.copy_to_lds %a[%c], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 1>
  %w = hk.warp_id
  %other = arith.subi %c3, %w : index
  %v = hk.subtile %s[%c0, %other, %c0] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 16x64, 1>
  // expected-error @+1 {{'hk.lds_load' reads LDS that another wave writes, with no barrier between them; waves are ordered only by barriers: add hk.arch.barrier() between the write and this read}}
  %t = hk.lds_load %v[%c0] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
  hk.store %t, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// Each wave's share of a copy is not its own rows: reading even the wave's "own" rows races.
func.func @copy_then_read_own_rows(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 1>
  // expected-note @+1 {{the workgroup copy}}
  hk.copy_to_lds %a[%c], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 1>
  %w = hk.warp_id
  %v = hk.subtile %s[%c0, %w, %c0] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 16x64, 1>
  // expected-error @+1 {{'hk.lds_load' reads LDS that another wave writes}}
  %t = hk.lds_load %v[%c0] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
  hk.store %t, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// The same with the barrier: clean.
func.func @copy_barrier_read(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 1>
  hk.copy_to_lds %a[%c], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 1>
  hk.barrier
  %w = hk.warp_id
  %other = arith.subi %c3, %w : index
  %v = hk.subtile %s[%c0, %other, %c0] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 16x64, 1>
  %t = hk.lds_load %v[%c0] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
  hk.store %t, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// One wave: nothing to race with.
func.func @one_wave(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel, hk.warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc : !hk.st<bf16, 16x64, 1>
  hk.copy_to_lds %a[%c], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 16x64, 1>
  %t = hk.lds_load %s[%c0] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
  hk.store %t, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// Each wave stores its own rows and reads them back: ordered within the wave.
func.func @own_rows(%a: !hk.gl<bf16>, %c: !hk.coord, %t: !hk.rt<bf16, 16x64, row>) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 1>
  %w = hk.warp_id
  %v = hk.subtile %s[%c0, %w, %c0] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 16x64, 1>
  hk.lds_store %t, %v[%c0] : !hk.rt<bf16, 16x64, row>, !hk.st<bf16, 16x64, 1>
  %u = hk.lds_load %v[%c0] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
  hk.store %u, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// Each wave stores its rows, then reads another wave's.
func.func @stores_then_other_rows(%a: !hk.gl<bf16>, %c: !hk.coord, %t: !hk.rt<bf16, 16x64, row>) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 1>
  %w = hk.warp_id
  %mine = hk.subtile %s[%c0, %w, %c0] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 16x64, 1>
  // expected-note @+1 {{the write by another wave}}
  hk.lds_store %t, %mine[%c0] : !hk.rt<bf16, 16x64, row>, !hk.st<bf16, 16x64, 1>
  %n = arith.addi %w, %c1 : index
  %next = arith.remsi %n, %c4 : index
  %theirs = hk.subtile %s[%c0, %next, %c0] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 16x64, 1>
  // expected-error @+1 {{'hk.lds_load' reads LDS that another wave writes}}
  %u = hk.lds_load %theirs[%c0] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
  hk.store %u, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// A write over rows another wave still reads (write after read).
func.func @write_over_read(%a: !hk.gl<bf16>, %c: !hk.coord, %t: !hk.rt<bf16, 16x64, row>) attributes {hk.kernel, hk.warps = 2 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc : !hk.st<bf16, 16x64, 1>
  hk.copy_to_lds %a[%c], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 16x64, 1>
  hk.barrier
  // expected-note @+1 {{the read by another wave}}
  %u = hk.lds_load %s[%c0] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
  hk.store %u, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  %w = hk.warp_id
  %c1 = arith.constant 1 : index
  %first = arith.cmpi eq, %w, %c0 : index
  scf.if %first {
    // expected-error @+1 {{'hk.lds_store' writes LDS that another wave reads, with no barrier between them; waves are ordered only by barriers: add hk.arch.barrier() between the read and this write}}
    hk.lds_store %t, %s[%c0] : !hk.rt<bf16, 16x64, row>, !hk.st<bf16, 16x64, 1>
  }
  return
}

// -----

// One wave writes (a branch on the wave's id), every wave reads after the barrier: clean.
func.func @leader_writes(%a: !hk.gl<bf16>, %c: !hk.coord, %t: !hk.rt<bf16, 16x64, row>) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc : !hk.st<bf16, 16x64, 1>
  %w = hk.warp_id
  %first = arith.cmpi eq, %w, %c0 : index
  scf.if %first {
    hk.lds_store %t, %s[%c0] : !hk.rt<bf16, 16x64, row>, !hk.st<bf16, 16x64, 1>
  }
  hk.barrier
  %u = hk.lds_load %s[%c0] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
  hk.store %u, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// Every wave stores the same rows.
func.func @every_wave_stores(%t: !hk.rt<bf16, 16x64, row>) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc : !hk.st<bf16, 16x64, 1>
  // expected-error @+1 {{'hk.lds_store' writes the same LDS from several waves with no barrier between them; give each wave its own part (index it by hk.arch.warp_id()) or let one wave write it}}
  hk.lds_store %t, %s[%c0] : !hk.rt<bf16, 16x64, row>, !hk.st<bf16, 16x64, 1>
  return
}

// -----

// A double buffer: the loop reads buffer k % 2 while the next tile is committed into
// buffer (k + 1) % 2, and a barrier ends each step. Clean.
func.func @double_buffer(%a: !hk.gl<bf16>, %c: !hk.coord, %n: index) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x32, 2>
  %first = hk.copy_issue %a[%c] : !hk.gl<bf16> -> !hk.staged<bf16, 64x32>
  hk.copy_commit %first, %s[%c0] : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x32, 2>
  hk.barrier
  %w = hk.warp_id
  scf.for %k = %c0 to %n step %c1 {
    %buf = arith.remsi %k, %c2 : index
    %nxt = hk.copy_issue %a[%c] : !hk.gl<bf16> -> !hk.staged<bf16, 64x32>
    %v = hk.subtile %s[%buf, %w, %c0] : !hk.st<bf16, 64x32, 2> -> !hk.st<bf16, 16x32, 1>
    %t = hk.lds_load %v[%c0] : !hk.st<bf16, 16x32, 1> -> !hk.rt<bf16, 16x32, row>
    hk.store %t, %a[%c] : !hk.rt<bf16, 16x32, row>, !hk.gl<bf16>
    %k1 = arith.addi %k, %c1 : index
    %other = arith.remsi %k1, %c2 : index
    hk.copy_commit %nxt, %s[%other] : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x32, 2>
    hk.barrier
  }
  return
}

// -----

// The same loop without its barrier: waves may be in different steps between barriers, so a
// wave's commit may fill the buffer another wave reads. The indices cannot tell how far apart
// the waves are: warnings.
func.func @double_buffer_no_barrier(%a: !hk.gl<bf16>, %c: !hk.coord, %n: index) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x32, 2>
  %w = hk.warp_id
  scf.for %k = %c0 to %n step %c1 {
    %buf = arith.remsi %k, %c2 : index
    %nxt = hk.copy_issue %a[%c] : !hk.gl<bf16> -> !hk.staged<bf16, 64x32>
    %v = hk.subtile %s[%buf, %w, %c0] : !hk.st<bf16, 64x32, 2> -> !hk.st<bf16, 16x32, 1>
    // expected-note @+2 {{the read by another wave}}
    // expected-warning @+1 {{'hk.lds_load' may read LDS that another wave writes}}
    %t = hk.lds_load %v[%c0] : !hk.st<bf16, 16x32, 1> -> !hk.rt<bf16, 16x32, row>
    hk.store %t, %a[%c] : !hk.rt<bf16, 16x32, row>, !hk.gl<bf16>
    %k1 = arith.addi %k, %c1 : index
    %other = arith.remsi %k1, %c2 : index
    // expected-note @+3 {{the workgroup copy}}
    // expected-warning @+2 {{'hk.copy_commit' may write LDS that another wave reads}}
    // expected-warning @+1 {{'hk.copy_commit' may write LDS that another wave writes}}
    hk.copy_commit %nxt, %s[%other] : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x32, 2>
  }
  return
}

// -----

// With one barrier per step, the commit after the barrier races with the next step's reads of
// the buffer it fills: exactly, because the loop variable is one step back across the edge.
func.func @commit_after_barrier(%a: !hk.gl<bf16>, %c: !hk.coord, %n: index) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x32, 2>
  %w = hk.warp_id
  scf.for %k = %c0 to %n step %c1 {
    %buf = arith.remsi %k, %c2 : index
    %v = hk.subtile %s[%buf, %w, %c0] : !hk.st<bf16, 64x32, 2> -> !hk.st<bf16, 16x32, 1>
    // expected-error @+1 {{'hk.lds_load' reads LDS that another wave writes}}
    %t = hk.lds_load %v[%c0] : !hk.st<bf16, 16x32, 1> -> !hk.rt<bf16, 16x32, row>
    hk.store %t, %a[%c] : !hk.rt<bf16, 16x32, row>, !hk.gl<bf16>
    hk.barrier
    %nxt = hk.copy_issue %a[%c] : !hk.gl<bf16> -> !hk.staged<bf16, 64x32>
    %k1 = arith.addi %k, %c1 : index
    %other = arith.remsi %k1, %c2 : index
    // expected-note @+1 {{the workgroup copy}}
    hk.copy_commit %nxt, %s[%other] : !hk.staged<bf16, 64x32>, !hk.st<bf16, 64x32, 2>
  }
  return
}

// -----

// Indices the pass cannot see through (a loaded value) may or may not meet: a warning.
func.func @unknown_rows(%a: !hk.gl<bf16>, %c: !hk.coord, %r: index, %t: !hk.rt<bf16, 16x64, row>) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 1>
  %w = hk.warp_id
  %mine = hk.subtile %s[%c0, %w, %c0] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 16x64, 1>
  // expected-note @+1 {{the write by another wave}}
  hk.lds_store %t, %mine[%c0] : !hk.rt<bf16, 16x64, row>, !hk.st<bf16, 16x64, 1>
  %some = hk.subtile %s[%c0, %r, %c0] : !hk.st<bf16, 64x64, 1> -> !hk.st<bf16, 16x64, 1>
  // expected-warning @+1 {{'hk.lds_load' may read LDS that another wave writes, with no barrier between them (the indices do not tell whether the waves touch the same elements); waves are ordered only by barriers: add hk.arch.barrier() between the write and this read if they can (HK_DEVICE=interp checks it on a run)}}
  %u = hk.lds_load %some[%c0] : !hk.st<bf16, 16x64, 1> -> !hk.rt<bf16, 16x64, row>
  hk.store %u, %a[%c] : !hk.rt<bf16, 16x64, row>, !hk.gl<bf16>
  return
}

// -----

// Different buffers and different allocations never race.
func.func @disjoint(%a: !hk.gl<bf16>, %c: !hk.coord) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = hk.lds_alloc : !hk.st<bf16, 64x64, 2>
  %p = hk.lds_alloc : !hk.st<bf16, 64x64, 1>
  hk.copy_to_lds %a[%c], %s[%c0] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 2>
  hk.copy_to_lds %a[%c], %p[%c0] : !hk.gl<bf16>, !hk.st<bf16, 64x64, 1>
  %t = hk.lds_load %s[%c1] : !hk.st<bf16, 64x64, 2> -> !hk.rt<bf16, 64x64, row>
  hk.store %t, %a[%c] : !hk.rt<bf16, 64x64, row>, !hk.gl<bf16>
  return
}

// -----

// A shared vector per wave, combined after the barrier (the norms' cross-wave sum): clean.
func.func @per_wave_partials(%v: !hk.rv<f32, 16, col>) attributes {hk.kernel, hk.warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %p = hk.lds_alloc : !hk.sv<f32, 16, 4>
  %w = hk.warp_id
  hk.lds_store %v, %p[%w] : !hk.rv<f32, 16, col>, !hk.sv<f32, 16, 4>
  hk.barrier
  %x = hk.lds_load %p[%c3] : !hk.sv<f32, 16, 4> -> !hk.rv<f32, 16, col>
  hk.barrier
  hk.lds_store %x, %p[%w] : !hk.rv<f32, 16, col>, !hk.sv<f32, 16, 4>
  return
}
