// Compile test: hk::copy between element types and layouts, hk::transpose, vector relayouts, and
// the float8 conversions.
#include "hk/hk.cuh"

using namespace hk;

// The flash-attention step: an fp32 accumulator (row_l) into a bf16 A operand (row_l; the
// transposing path) and into a bf16 B operand (col_l; same major dimension).
extern "C" __global__ void __launch_bounds__(WAVE) hk_acc_to_operand(gl<float> in, gl<bf16> a_out, gl<bf16> b_out) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<float, 16, 64> s;
  rt<bf16, 16, 64, row_l> p;
  rt<bf16, 16, 64, col_l> q;
  load(s, in, idx);
  copy(p, s);
  copy(q, s);
  store(a_out, p, idx);
  store(b_out, q, idx);
}

// Between 16-bit layouts, back to fp32, and transposes.
extern "C" __global__ void __launch_bounds__(WAVE) hk_layouts(gl<bf16> in, gl<fp16> out, gl<float> fout, gl<bf16> tout) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<bf16, 32, 32, row_l> a;
  rt<fp16, 32, 32, col_l> b;
  rt<float, 32, 32, col_l> c;
  rt<float, 32, 32, row_l> d;
  rt<bf16, 32, 32, row_l> t;
  load(a, in, idx);
  copy(b, a);
  copy(c, b);
  copy(d, c);
  transpose(t, a);
  store(out, b, idx);
  store(fout, d, idx);
  store(tout, t, idx);
}

// fp32 transposes: same layout (the in-register block transpose) and into the other layout
// (free: the registers are reinterpreted).
extern "C" __global__ void __launch_bounds__(WAVE) hk_transpose_fp32(gl<float> in, gl<float> out) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<float, 32, 48> x;
  rt<float, 48, 32> t;
  rt<float, 48, 32, col_l> u;
  load(x, in, idx);
  transpose(t, x);
  transpose(u, x);
  store(out, t, idx);
  store(out, u, {0, 0, idx.r + 1, idx.c});
}

// Vectors: a reduction of the accumulator layout broadcast onto an operand-layout tile.
extern "C" __global__ void __launch_bounds__(WAVE) hk_vectors(gl<float> in, gl<bf16> bin, gl<bf16> out) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<float, 32, 64> s;
  rt<bf16, 32, 64> b;
  rt<float, 32, 64>::col_vec m;
  rt<float, 32, 64>::row_vec cs;
  col_vec<rt<bf16, 32, 64>, float> mb;
  row_vec<rt<bf16, 32, 64>, float> csb;
  col_vec<rt<float, 32, 64>, float> back;
  load(s, in, idx);
  load(b, bin, idx);
  row_max(m, s);
  col_sum(cs, s);
  copy(mb, m);
  copy(csb, cs);
  copy(back, mb);
  add(m, m, back);
  copy(mb, m);
  sub_row(b, b, mb);
  add_col(b, b, csb);
  store(out, b, idx);
}

// Float8 (OCP and FNUZ) and int8 tiles: quantize an fp32 tile and read it back.
extern "C" __global__ void __launch_bounds__(WAVE) hk_fp8(gl<float> in, gl<fp8e4m3> q4, gl<fp8e5m2> q5, gl<int8_t> q8,
                                                          gl<fp8e4m3fnuz> z4, gl<fp8e5m2fnuz> z5, gl<float> out) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<float, 16, 64> x, y;
  rt<fp8e4m3, 16, 64> a;
  rt<fp8e5m2, 16, 64> b;
  rt<int8_t, 16, 64> c;
  rt<fp8e4m3fnuz, 16, 64> d;
  rt<fp8e5m2fnuz, 16, 64> e;
  load(x, in, idx);
  copy(a, x);
  copy(b, x);
  copy(c, x);
  copy(d, x);
  copy(e, x);
  store(q4, a, idx);
  store(q5, b, idx);
  store(q8, c, idx);
  store(z4, d, idx);
  store(z5, e, idx);
  copy(y, a);
  add(x, x, y);
  copy(y, b);
  add(x, x, y);
  copy(y, d);
  add(x, x, y);
  copy(y, e);
  add(x, x, y);
  store(out, x, idx);
}
