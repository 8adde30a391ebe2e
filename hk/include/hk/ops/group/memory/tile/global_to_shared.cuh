// Workgroup-level global <-> LDS for shared tiles: hk::group<NUM_WARPS>::load(st&, const gl&,
// coord) and ::store(const gl&, const st&, coord). All NUM_WARPS waves (threadIdx.x in
// [0, NUM_WARPS*WAVE), a 1-d block) call it; each thread moves 16-byte chunks.
//
// Rows and columns past the tensor's edge are zero in the shared tile, and are not written on
// store.
//
// On CDNA (gfx94x, gfx950) a load whose chunks are whole (the tile's columns end inside the
// tensor, or the tensor's width is a multiple of 16 bytes) and 16-byte aligned is an
// asynchronous DMA: buffer_load_dword ... lds (gfx94x, 4 bytes per lane) or
// buffer_load_dwordx4 ... lds (gfx950, 16 bytes per lane). The data lands in LDS later, and the
// copy counts on vmcnt, not lgkmcnt, so before other waves read the tile:
//     hk::wait_vm<0>();  hk::barrier();
// (a barrier alone does not wait for it). Out-of-range chunks are read at an offset past the
// buffer's range, which the hardware returns as zeros. The tile's rows must span less than
// 2 GiB of the tensor (32-bit buffer offsets). Every other case, and RDNA, copies through
// registers (global load, then ds_write_b128): then a barrier suffices. The barrier is the
// kernel's own; the translation adds the wait_vm<0>() before it on CDNA.
#pragma once

#include "../../../warp/memory/tile/global_to_register.cuh"
#include "../../../../types/global/gl.cuh"
#include "../../../../types/shared/st.cuh"

namespace hk {
namespace detail {

// A tile with no element inside the tensor: zeros, 16 bytes per thread (LDS writes, like the
// synchronous copy).
template <class ST, int THREADS>
HK_DEV void group_zero(ST& dst, int tid) {
  constexpr int total = ST::bytes / 16;
  unroll<(total + THREADS - 1) / THREADS>([&](auto it) {
    const int q = tid + it * THREADS;
    if (total % THREADS == 0 || q < total) *reinterpret_cast<u32x4*>(reinterpret_cast<unsigned char*>(dst.data) + q * 16) = u32x4{0, 0, 0, 0};
  });
}

template <class ST, int THREADS, class T>
HK_DEV void group_load_sync(ST& dst, const gl<T>& src, coord idx, int tid) {
  constexpr int CE = ST::chunk_elems, K = ST::chunks, total = ST::rows * K;
  const int row0 = idx.r * ST::rows, col0 = idx.c * ST::cols;
  const T* base = src.ptr(idx.b, idx.d, row0, col0);
  const int sr = static_cast<int>(src.stride_row);  // offsets inside one tile fit in 32 bits
  const int rows = src.rows - row0, cols = src.cols - col0;
  const bool aligned = ((reinterpret_cast<uintptr_t>(base) | static_cast<uintptr_t>(sr * sizeof(T))) & 15) == 0;
  unroll<(total + THREADS - 1) / THREADS>([&](auto it) {
    const int q = tid + it * THREADS;
    if (total % THREADS == 0 || q < total) {
      const int r = q / K, c = (q % K) * CE;
      T v[CE];
      if (aligned && r < rows && c + CE <= cols) {
        load_bytes<16>(v, base + r * sr + c);
      } else {
        unroll<CE>([&](auto i) { v[i] = load_or_zero(r < rows && c + i < cols, base + r * sr + c + i, src.data); });
      }
      store_bytes<16>(&dst.data[ST::index(r, c)], v);
    }
  });
}

#if defined(HK_CDNA)
// Bytes one lane moves per DMA instruction.
#if defined(HK_CDNA4)
inline constexpr int dma_bytes = 16;
#else
inline constexpr int dma_bytes = 4;
#endif

template <class ST, int NUM_WARPS, class T>
HK_DEV void group_load_dma(ST& dst, const gl<T>& src, coord idx, int tid) {
  constexpr int B = dma_bytes, per_inst = WAVE * B, row_bytes = ST::cols * static_cast<int>(sizeof(T));
  constexpr int insts = (ST::bytes + NUM_WARPS * per_inst - 1) / (NUM_WARPS * per_inst);
  const int row0 = idx.r * ST::rows, col0 = idx.c * ST::cols;
  const T* base = src.ptr(idx.b, idx.d, row0, col0);
  const int sr = static_cast<int>(src.stride_row);  // offsets inside one tile fit in 32 bits
  const int rows = src.rows - row0, cols = src.cols - col0;
  // Raw buffer over the tile's rows; offsets at or past num_records read as zero.
  const __amdgpu_buffer_rsrc_t rsrc = __builtin_amdgcn_make_buffer_rsrc(const_cast<T*>(base), 0, 0x7FFFFFFF, 0x00020000);
  const int w = tid / WAVE, lane = tid % WAVE;
  unroll<insts>([&](auto i) {
    const int first = (i * NUM_WARPS + w) * per_inst;  // this wave's first LDS byte, uniform
    const int p = first + lane * B;                    // this lane's LDS byte
    if (ST::bytes % (NUM_WARPS * per_inst) == 0 || first < ST::bytes) {
      const int r = p / row_bytes, in_row = p % row_bytes;
      const int chunk = (in_row / 16) ^ ST::swizzle(r);  // the logical chunk stored at this spot
      const int c = chunk * ST::chunk_elems + (in_row % 16) / static_cast<int>(sizeof(T));
      const bool in = r < rows && c < cols;
      const uint32_t voff = in ? static_cast<uint32_t>((r * sr + c) * static_cast<int>(sizeof(T))) : 0x80000000u;
      typedef __attribute__((address_space(3))) unsigned char* lds_ptr;
      typedef __attribute__((address_space(3))) void* lds_void;
      const lds_ptr lds = (lds_ptr)(unsigned char*)dst.data + first;  // generic -> LDS pointer
      // Lanes past the tile's end must not run: the DMA writes every active lane's bytes
      // (zeros when out of range), which would land in the next LDS allocation.
      if (ST::bytes % per_inst == 0 || p < ST::bytes) __builtin_amdgcn_raw_ptr_buffer_load_lds(rsrc, (lds_void)lds, B, voff, 0, 0, 0);
    }
  });
}
#endif

template <class ST, int THREADS, class T>
HK_DEV void group_store_sync(const gl<T>& dst, const ST& src, coord idx, int tid) {
  constexpr int CE = ST::chunk_elems, K = ST::chunks, total = ST::rows * K;
  const int row0 = idx.r * ST::rows, col0 = idx.c * ST::cols;
  T* base = dst.ptr(idx.b, idx.d, row0, col0);
  const int sr = static_cast<int>(dst.stride_row);  // offsets inside one tile fit in 32 bits
  const int rows = dst.rows - row0, cols = dst.cols - col0;
  const bool aligned = ((reinterpret_cast<uintptr_t>(base) | static_cast<uintptr_t>(sr * sizeof(T))) & 15) == 0;
  unroll<(total + THREADS - 1) / THREADS>([&](auto it) {
    const int q = tid + it * THREADS;
    if (total % THREADS == 0 || q < total) {
      const int r = q / K, c = (q % K) * CE;
      T v[CE];
      load_bytes<16>(v, &src.data[ST::index(r, c)]);
      if (aligned && r < rows && c + CE <= cols) {
        store_bytes<16>(base + r * sr + c, v);
      } else if (r < rows) {
        unroll<CE>([&](auto i) { if (c + i < cols) base[r * sr + c + i] = v[i]; });
      }
    }
  });
}

}  // namespace detail

template <int NUM_WARPS>
struct group {
  static_assert(NUM_WARPS >= 1 && NUM_WARPS * WAVE <= 1024, "hk::group: 1 to 1024/WAVE warps");
  static constexpr int threads = NUM_WARPS * WAVE;
  HK_DEV static int thread() { return static_cast<int>(threadIdx.x) % threads; }

  template <class ST, class T>
  HK_DEV static void load(ST& dst, const gl<T>& src, coord idx) {
    static_assert(is_st<ST> && __is_same(typename ST::dtype, T), "hk::group::load: shared tile and tensor must have the same element type");
    if (!src.template touches<ST::rows, ST::cols>(idx.b, idx.d, idx.r, idx.c)) return detail::group_zero<ST, threads>(dst, thread());
#if defined(HK_CDNA)
    const int col0 = idx.c * ST::cols;
    const T* base = src.ptr(idx.b, idx.d, idx.r * ST::rows, col0);
    const bool aligned = ((reinterpret_cast<uintptr_t>(base) | static_cast<uintptr_t>(src.stride_row * sizeof(T))) & 15) == 0;
    const bool whole_chunks = col0 + ST::cols <= src.cols || src.cols % ST::chunk_elems == 0;
    if (aligned && whole_chunks) {
      detail::group_load_dma<ST, NUM_WARPS>(dst, src, idx, thread());
      return;
    }
#endif
    detail::group_load_sync<ST, threads>(dst, src, idx, thread());
  }

  template <class ST, class T>
  HK_DEV static void store(const gl<T>& dst, const ST& src, coord idx) {
    static_assert(is_st<ST> && __is_same(typename ST::dtype, T), "hk::group::store: shared tile and tensor must have the same element type");
    if (!dst.template touches<ST::rows, ST::cols>(idx.b, idx.d, idx.r, idx.c)) return;
    detail::group_store_sync<ST, threads>(dst, src, idx, thread());
  }

  // Split copies through registers (memory/tile/staged.cuh).
  template <int DIV, class S, class T>
  HK_DEV static void issue(S& s, const gl<T>& src, coord idx);
  template <class ST, class S>
  HK_DEV static void commit(ST& dst, const S& s);
  template <class ST, class S>
  HK_DEV static void commit_transposed(ST& dst, const S& s);

  // Shared vectors (memory/vec/global_to_shared.cuh).
  template <class SV, class T>
  HK_DEV static void load_vec(SV& dst, const gl<T>& src, coord idx);
  template <class SV, class T>
  HK_DEV static void store_vec(const gl<T>& dst, const SV& src, coord idx);
};

}  // namespace hk
