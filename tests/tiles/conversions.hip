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

// Float8 (OCP and FNUZ) and int8 tiles: quantize an fp32 tile, store it, and read it back
// (from the accumulator's row_l to an operand-laid-out 8-bit row_l: a transpose each way).
template <class Q>
__device__ void round_trip(const gl<float>& in, const gl<Q>& q, const gl<float>& out) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<float, 16, 64> x, y;
  rt<Q, 16, 64> t;
  load(x, in, idx);
  copy(t, x);
  store(q, t, idx);
  copy(y, t);
  add(x, x, y);
  store(out, x, idx);
}

extern "C" __global__ void __launch_bounds__(WAVE) hk_fp8e4m3(gl<float> in, gl<fp8e4m3> q, gl<float> out) { round_trip(in, q, out); }
extern "C" __global__ void __launch_bounds__(WAVE) hk_fp8e5m2(gl<float> in, gl<fp8e5m2> q, gl<float> out) { round_trip(in, q, out); }
extern "C" __global__ void __launch_bounds__(WAVE) hk_int8(gl<float> in, gl<int8_t> q, gl<float> out) { round_trip(in, q, out); }
extern "C" __global__ void __launch_bounds__(WAVE) hk_fp8e4m3fnuz(gl<float> in, gl<fp8e4m3fnuz> q, gl<float> out) { round_trip(in, q, out); }
extern "C" __global__ void __launch_bounds__(WAVE) hk_fp8e5m2fnuz(gl<float> in, gl<fp8e5m2fnuz> q, gl<float> out) { round_trip(in, q, out); }
