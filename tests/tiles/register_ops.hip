// Compile test: register-tile operations (elementwise maps, fills, comparisons and select, row
// and column broadcasts and reductions, masks and iota, rand) on one wave.
#include "hk/hk.cuh"

using namespace hk;

// Unary and binary maps on a bf16 tile and on an fp32 tile, with scalars.
extern "C" __global__ void __launch_bounds__(WAVE) hk_maps(gl<bf16> in, gl<bf16> out, gl<float> fin, gl<float> fout) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<bf16, 16, 64> x, y;
  load(x, in, idx);
  exp(y, x); add(x, x, y);
  exp2(y, x); sub(x, x, y);
  log(y, x); mul(x, x, y);
  log2(y, x); div(x, x, y);
  abs(y, x); max(x, x, y);
  neg(y, x); min(x, x, y);
  relu(y, x); add(x, x, 1.5f);
  gelu(y, x); mul(x, y, 0.5f);
  silu(y, x); sub(x, y, 2.0f);
  sqrt(y, x); div(x, y, 3.0f);
  rsqrt(y, x); max(x, y, 0.0f);
  copy(y, x); min(x, y, 8.0f);
  round(y, x); add(x, x, y);
  floor(y, x); sub(x, x, y);
  sigmoid(y, x); mul(x, x, y);
  store(out, x, idx);

  rt<float, 32, 32> f, g;
  load(f, fin, idx);
  exp(g, f); add(f, f, g);
  silu(g, f); mul(f, f, g);
  gelu(g, f); max(f, f, g);
  sin(g, f); add(f, f, g);
  cos(g, f); sub(f, f, g);
  tanh(g, f); mul(f, f, g);
  pow(g, f, g); add(f, f, g);
  pow(g, f, 0.5f); max(f, f, g);
  store(fout, f, idx);
}

// Fills, comparisons and select on fp32 and int32 tiles.
extern "C" __global__ void __launch_bounds__(WAVE) hk_select(gl<float> in, gl<int32_t> iin, gl<float> out) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<float, 32, 64> x, y, z;
  rt<bool, 32, 64> m;
  rt<int32_t, 32, 64> n;
  load(x, in, idx);
  load(n, iin, idx);
  zero(y); fill(z, 3.0f);
  gt(m, x, y); select(z, m, x, z);
  ge(m, x, 1.0f); select(z, m, z, y);
  lt(m, x, z); select(z, m, x, -1.0f);
  le(m, x, 2.0f); select(z, m, z, x);
  eq(m, n, 7); select(z, m, y, z);
  ne(m, n, 0); select(z, m, z, 0.0f);
  neg_infty(y); max(z, z, y);
  pos_infty(y); min(z, z, y);
  store(out, z, idx);
}

// Row and column broadcasts and reductions: a softmax-like row pass on the fp32 accumulator
// layout, and on a bf16 operand-layout tile.
extern "C" __global__ void __launch_bounds__(WAVE) hk_rows(gl<float> in, gl<float> out, gl<bf16> bin, gl<bf16> bout,
                                                           gl<float> rows_out, gl<float> cols_out) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<float, 32, 64> x;
  rt<float, 32, 64>::col_vec mx, sm, prev;
  rt<float, 32, 64>::row_vec cs;
  load(x, in, idx);
  neg_infty(prev);
  row_max(mx, x, prev);
  sub_row(x, x, mx);
  exp(x, x);
  row_sum(sm, x);
  div_row(x, x, sm);
  col_sum(cs, x);
  col_max(cs, x, cs);
  add_col(x, x, cs);
  mul_col(x, x, cs);
  max_col(x, x, cs);
  min_row(x, x, mx);
  add_row(x, x, mx);
  mul_row(x, x, sm);
  max_row(x, x, sm);
  row_min(prev, x);
  sub_col(x, x, cs);
  div_col(x, x, cs);
  min_col(x, x, cs);
  col_min(cs, x);
  store(out, x, idx);
  store(rows_out, prev, {0, 0, static_cast<int>(blockIdx.y), 0});
  store(cols_out, cs, {0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)});

  rt<bf16, 16, 64> b;
  rt<bf16, 16, 64>::col_vec bm;
  rt<bf16, 16, 64>::row_vec bc;
  load(b, bin, idx);
  row_max(bm, b);
  sub_row(b, b, bm);
  col_sum(bc, b);
  add_col(b, b, bc);
  broadcast_row(b, bm);
  broadcast_col(b, bc);
  store(bout, b, idx);
}

// Masks from coordinates, iota, and dropout as in Triton's tutorial: keep x where
// rand(seed, offsets) > p, scaled by 1/(1-p).
extern "C" __global__ void __launch_bounds__(WAVE) hk_masks_rand(gl<float> in, gl<float> out, gl<bf16> bout, uint64_t seed, float p) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<float, 32, 64> x, r;
  rt<int32_t, 32, 64> offs;
  rt<bool, 32, 64> keep;
  load(x, in, idx);
  causal(x, x, 32 * idx.r, 64 * idx.c, -__builtin_inff());
  tril(x, x, 3, 0.0f);
  triu(x, x, -3, 0.0f);
  iota(offs, 32 * idx.r * in.cols + 64 * idx.c, in.cols, 1);
  rand(r, seed, offs);
  gt(keep, r, p);
  mul(x, x, 1.0f / (1.0f - p));
  select(x, keep, x, 0.0f);
  iota_rows(offs, 0);
  iota_cols(offs, 1);
  store(out, x, idx);

  rt<bf16, 16, 64> b;
  load(b, bout, idx);
  causal(b, b, 16 * idx.r, 64 * idx.c, 0.0f);
  store(bout, b, idx);
}
