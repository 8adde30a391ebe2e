// Compile test: moving tiles and vectors between global memory, LDS and registers, rows by
// index, scalars and atomics, and the workgroup-level copies.
#include "hk/hk.cuh"

using namespace hk;

// Global <-> registers in every layout family: 16-bit row_l (128-bit runs) and col_l,
// fp32 accumulator row_l and col_l, int8. Each tile is stored right after its load.
extern "C" __global__ void __launch_bounds__(WAVE) hk_global_tiles(gl<bf16> a, gl<fp16> h, gl<float> f, gl<int8_t> q) {
  const coord idx{static_cast<int>(blockIdx.z), 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  const coord next{idx.b, 0, idx.r + 1, idx.c};
  rt<bf16, 32, 64, row_l> x;
  load(x, a, idx);
  store(a, x, next);
  rt<fp16, 32, 64, col_l> y;
  load(y, h, idx);
  store(h, y, next);
  rt<float, 32, 64, row_l> z;
  load(z, f, idx);
  store(f, z, next);
  rt<float, 32, 64, col_l> w;
  load(w, f, next);
  store(f, w, idx);
  rt<int8_t, 32, 64> c;
  load(c, q, idx);
  store(q, c, next);
}

// LDS -> registers for a row-layout bf16 tile: must be 128-bit LDS reads.
extern "C" __global__ void __launch_bounds__(WAVE) hk_lds_row_b128(gl<bf16> a, gl<bf16> out) {
  __shared__ alignas(16) unsigned char smem[st<bf16, 32, 64>::bytes];
  auto& s = lds_at<st<bf16, 32, 64>>(smem, 0);
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  group<1>::load(s, a, idx);
  wait_vm<0>();
  barrier();
  rt<bf16, 32, 64, row_l> x;
  load(x, s);
  wait_lds<0>();
  bind(x);
  store(out, x, idx);
}

// LDS <-> registers for a column-layout bf16 tile (gfx950: transposing reads; elsewhere the slow
// path, 16-bit reads) and a row-layout sub-tile at an offset.
extern "C" __global__ void __launch_bounds__(WAVE) hk_lds_col(gl<bf16> a, gl<bf16> out) {
  __shared__ alignas(16) unsigned char smem[st<bf16, 64, 64>::bytes];
  auto& s = lds_at<st<bf16, 64, 64>>(smem, 0);
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  group<1>::load(s, a, idx);
  wait_vm<0>();
  barrier();
  rt<bf16, 32, 64, col_l> x;
  rt<bf16, 16, 32, row_l> sub;
  load(x, s);
  load(sub, s, 16, 32);
  barrier();
  store(s, x, 32, 0);
  store(s, sub, 0, 16);
  barrier();
  group<1>::store(out, s, idx);
}

// LDS <-> registers for fp32 tiles in both layouts, and shared vectors.
extern "C" __global__ void __launch_bounds__(WAVE) hk_lds_float(gl<float> f, gl<float> v, gl<float> fout) {
  __shared__ alignas(16) unsigned char smem[st<float, 32, 32>::bytes + sv<float, 64>::bytes];
  auto& sf = lds_at<st<float, 32, 32>>(smem, 0);
  auto& sv64 = lds_at<sv<float, 64>>(smem, st<float, 32, 32>::bytes);
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  group<1>::load(sf, f, idx);
  group<1>::load_vec(sv64, v, {0, 0, 0, 0});
  wait_vm<0>();
  barrier();
  rt<float, 32, 32, row_l> y;
  rt<float, 32, 32, col_l> z;
  rt<float, 32, 32, row_l> zr;
  rt<float, 32, 64>::row_vec r;
  load(y, sf);
  load(z, sf);
  load(r, sv64);
  copy(zr, z);
  add(y, y, zr);
  barrier();
  store(sf, y);
  store(sv64, r);
  barrier();
  group<1>::store(fout, sf, idx);
  group<1>::store_vec(v, sv64, {0, 0, 1, 0});
}

// Vectors in global memory.
extern "C" __global__ void __launch_bounds__(WAVE) hk_global_vec(gl<float> v, gl<bf16> bv) {
  rt<float, 32, 64>::col_vec c;
  rt<float, 32, 64>::row_vec r;
  rt<bf16, 32, 64>::col_vec bc;
  rt<bf16, 32, 64>::row_vec br;
  load(c, v, {0, 0, 0, static_cast<int>(blockIdx.x)});
  load(r, v, {0, 0, 1, static_cast<int>(blockIdx.x)});
  load(bc, bv, {0, 0, 0, 0});
  load(br, bv, {0, 0, 1, 0});
  add(c, c, 1.0f);
  store(v, c, {0, 0, 2, static_cast<int>(blockIdx.x)});
  store(v, r, {0, 0, 3, static_cast<int>(blockIdx.x)});
  store(bv, bc, {0, 0, 2, 0});
  store(bv, br, {0, 0, 3, 0});
}

// Scalars and atomics.
extern "C" __global__ void __launch_bounds__(WAVE) hk_scalar_atomic(gl<float> v, gl<bf16> bv, gl<int32_t> cnt) {
  const float x = load_scalar(v, 0, 0, 0, threadIdx.x);
  store_scalar(v, 0, 0, 1, threadIdx.x, x * 2.0f);
  atomic_add(v, 0, 0, 2, 0, x);
  atomic_add(bv, 0, 0, 0, threadIdx.x % 3, x);
  atomic_add(cnt, 0, 0, 0, 0, 1);
}

// Rows by index: an embedding gather and a KV-cache scatter with padding slots (id < 0).
extern "C" __global__ void __launch_bounds__(WAVE) hk_rows_by_index(gl<bf16> table, gl<int32_t> ids, gl<bf16> out,
                                                                    gl<float> ftable, gl<float> fout) {
  using tile = rt<bf16, 16, 64>;
  using ftile = rt<float, 32, 32>;
  col_vec<tile, int32_t> row_ids;
  col_vec<ftile, int32_t> frow_ids;
  load(row_ids, ids, {0, 0, 0, static_cast<int>(blockIdx.y)});
  load(frow_ids, ids, {0, 0, 1, static_cast<int>(blockIdx.y)});
  tile x;
  ftile y;
  gather_rows(x, table, row_ids, {0, 0, 0, static_cast<int>(blockIdx.x)});
  gather_rows(y, ftable, frow_ids, {0, 0, 0, static_cast<int>(blockIdx.x)});
  scatter_rows(out, x, row_ids, {0, 0, 0, static_cast<int>(blockIdx.x)});
  scatter_rows(fout, y, frow_ids, {0, 0, 0, static_cast<int>(blockIdx.x)});
}

// Workgroup copies with 4 waves into dynamic LDS (the asynchronous DMA on CDNA).
extern "C" __global__ void __launch_bounds__(4 * WAVE) hk_group_dynamic_lds(gl<bf16> a, gl<float> f, gl<bf16> out) {
  using sa = st<bf16, 64, 128>;
  using sf = st<float, 64, 32>;
  using small = st<bf16, 16, 16>;  // less than one DMA instruction of the workgroup
  auto& s = lds_at<sa>(0);
  auto& t = lds_at<sf>(sa::bytes);
  auto& u = lds_at<small>(sa::bytes + sf::bytes);
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  group<4>::load(s, a, idx);
  group<4>::load(t, f, idx);
  group<4>::load(u, a, idx);
  wait_vm<0>();
  barrier();
  rt<bf16, 16, 128> x;
  rt<float, 16, 32> y;
  load(x, s, 16 * warpid(), 0);
  load(y, t, 16 * warpid(), 0);
  mul(x, x, y.data[0][0]);
  rt<bf16, 16, 16> z;
  load(z, u);
  store(s, x, 16 * warpid(), 0);
  store(s, z, 0, 16 * warpid());
  barrier();
  group<4>::store(out, s, idx);
}

// Split workgroup copies in a two-buffer pipeline: issue (128-bit buffer loads) and commit
// (128-bit LDS writes), for whole tiles (DIV 64), 16-byte rows (DIV 8) and elements (DIV 1).
template <int DIV>
HK_DEV void staged_pipeline(gl<bf16> a, gl<bf16> out, int steps) {
  using sa = st<bf16, 64, 32>;
  __shared__ alignas(16) unsigned char smem[2 * sa::bytes];
  sa* s = reinterpret_cast<sa*>(smem);
  const int by = static_cast<int>(blockIdx.y);
  staging<sa, 4> next;
  group<4>::issue<DIV>(next, a, {0, 0, by, 0});
  wait_vm<0>();
  bind(next);
  group<4>::commit(s[0], next);
  wait_lds<0>();
  barrier();
  rt<bf16, 16, 32> acc;
  zero(acc);
  for (int k = 0; k < steps; ++k) {
    group<4>::issue<DIV>(next, a, {0, 0, by, k + 1});
    rt<bf16, 16, 32> t;
    load(t, s[k % 2], 16 * warpid(), 0);
    wait_lds<0>();
    bind(t);
    add(acc, acc, t);
    wait_vm<0>();
    bind(next);
    group<4>::commit(s[(k + 1) % 2], next);
    wait_lds<0>();
    barrier();
  }
  store(out, acc, {0, 0, 4 * by + warpid(), 0});
}

extern "C" __global__ void __launch_bounds__(4 * WAVE) hk_staged_whole(gl<bf16> a, gl<bf16> out, int steps) {
  staged_pipeline<64>(a, out, steps);
}
extern "C" __global__ void __launch_bounds__(4 * WAVE) hk_staged_chunks(gl<bf16> a, gl<bf16> out, int steps) {
  staged_pipeline<8>(a, out, steps);
}
extern "C" __global__ void __launch_bounds__(4 * WAVE) hk_staged_elements(gl<bf16> a, gl<bf16> out, int steps) {
  staged_pipeline<1>(a, out, steps);
}

// The instruction counts the translated waits add up (ops/insts.cuh).
static_assert(lds_insts<staging<st<bf16, 64, 32>, 4>>() == 64 * 4 / (4 * WAVE), "a 64x32 bf16 tile is 256 chunks");
static_assert(vm_insts<rt<float, 16, 16>>() == rt<float, 16, 16>::slots * rt<float, 16, 16>::strips,
              "an fp32 accumulator moves element by element");
// A 16x64 bf16 row tile in 16-byte pieces: 64 halves per lane on gfx11 (each lane group holds the
// whole strip), 32 on gfx12, 16 in wave64.
#if defined(HK_RDNA3)
static_assert(lds_insts<rt<bf16, 16, 64>>() == 8, "a 16x64 bf16 operand tile is 8 128-bit reads on gfx11");
#elif defined(HK_RDNA4)
static_assert(lds_insts<rt<bf16, 16, 64>>() == 4, "a 16x64 bf16 operand tile is 4 128-bit reads on gfx12");
#else
static_assert(lds_insts<rt<bf16, 16, 64>>() == 2, "a 16x64 bf16 operand tile is 2 128-bit reads on CDNA");
#endif
