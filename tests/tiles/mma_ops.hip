// Compile test: the four MMA forms for bf16 and fp16 operands, a GEMM step through LDS with the
// wait and bind the translation emits, and an attention-style chain (S = Q K^T, P = copy(S),
// O = P V).
#include "hk/hk.cuh"

using namespace hk;

template <class T>
__device__ void four_forms(const gl<T>& in, const gl<float>& out) {
  const coord idx{0, 0, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x)};
  rt<T, 16, 32, row_l> a_row;   // MxK
  rt<T, 32, 16, col_l> a_col;   // KxM
  rt<T, 32, 32, col_l> b_col;   // KxN
  rt<T, 32, 32, row_l> b_row;   // NxK
  rt<float, 16, 32> d;
  load(a_row, in, idx);
  load(a_col, in, idx);
  load(b_col, in, idx);
  load(b_row, in, idx);
  zero(d);
  mma_AB(d, a_row, b_col, d);
  mma_ABt(d, a_row, b_row, d);
  mma_AtB(d, a_col, b_col, d);
  mma_AtBt(d, a_col, b_row, d);
  store(out, d, idx);
}

extern "C" __global__ void __launch_bounds__(WAVE) hk_mma_bf16(gl<bf16> in, gl<float> out) { four_forms(in, out); }
extern "C" __global__ void __launch_bounds__(WAVE) hk_mma_fp16(gl<fp16> in, gl<float> out) { four_forms(in, out); }

// One 64x64 output tile per workgroup of 4 waves, K in steps of 64 through LDS: C = A B^T with
// A (MxK) and B (NxK) row-major. Each wave owns 16 rows of the output.
extern "C" __global__ void __launch_bounds__(4 * WAVE) hk_gemm_lds(gl<bf16> A, gl<bf16> B, gl<float> C, int k_tiles) {
  using tile = st<bf16, 64, 64>;
  __shared__ alignas(16) unsigned char smem[2 * tile::bytes];
  tile& sa = lds_at<tile>(smem, 0);
  tile& sb = lds_at<tile>(smem, tile::bytes);
  const int w = warpid();
  rt<float, 16, 64> acc;
  rt<bf16, 16, 64> a;
  rt<bf16, 64, 64> b;
  zero(acc);
  for (int k = 0; k < k_tiles; ++k) {
    group<4>::load(sa, A, {0, 0, static_cast<int>(blockIdx.y), k});
    group<4>::load(sb, B, {0, 0, static_cast<int>(blockIdx.x), k});
    wait_vm<0>();
    barrier();
    load(a, sa, 16 * w, 0);
    load(b, sb);
    wait_lds<0>();
    bind(a, b);
    set_prio<1>();
    mma_ABt(acc, a, b, acc);
    set_prio<0>();
    sched_barrier<0>();
    barrier();
  }
  store(C, acc, {0, 0, 4 * static_cast<int>(blockIdx.y) + w, static_cast<int>(blockIdx.x)});
}

// The bind trap in isolation: operands read from LDS, our wait, the bind, then the MMA. The
// disassembly must show the matrix instruction after the wait.
extern "C" __global__ void __launch_bounds__(WAVE) hk_bind_after_wait(gl<bf16> A, gl<float> C) {
  using tile = st<bf16, 32, 32>;
  __shared__ alignas(16) unsigned char smem[tile::bytes];
  tile& s = lds_at<tile>(smem, 0);
  group<1>::load(s, A, {0, 0, 0, 0});
  wait_vm<0>();
  barrier();
  rt<bf16, 32, 32> a;
  rt<bf16, 32, 32, col_l> b;
  rt<float, 32, 32> d;
  load(a, s);
  load(b, s);
  zero(d);
  wait_lds<0>();
  bind(a);
  bind(b);
  mma_AB(d, a, b, d);
  store(C, d, {0, 0, 0, 0});
}

// Attention-style chain on one wave: S = Q K^T (fp32), online-softmax pieces, P = bf16(S) as an
// A operand, O += P V.
extern "C" __global__ void __launch_bounds__(WAVE) hk_attention_chain(gl<bf16> Q, gl<bf16> K, gl<bf16> V, gl<float> O) {
  const int qi = static_cast<int>(blockIdx.x);
  rt<bf16, 16, 64> q;
  rt<bf16, 32, 64> k;
  rt<bf16, 32, 64, col_l> v;
  rt<float, 16, 32> s;
  rt<bf16, 16, 32> p;
  rt<float, 16, 64> o;
  rt<float, 16, 32>::col_vec m, l;
  load(q, Q, {0, 0, qi, 0});
  load(k, K, {0, 0, 0, 0});
  load(v, V, {0, 0, 0, 0});
  zero(s);
  zero(o);
  mma_ABt(s, q, k, s);
  causal(s, s, 16 * qi, 0, -__builtin_inff());
  row_max(m, s);
  sub_row(s, s, m);
  exp2(s, s);
  row_sum(l, s);
  copy(p, s);
  mma_AB(o, p, v, o);
  rt<float, 16, 64>::col_vec lo;
  copy(lo, l);
  div_row(o, o, lo);
  store(O, o, {0, 0, qi, 0});
}
