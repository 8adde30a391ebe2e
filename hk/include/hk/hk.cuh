// hk: the tile library. Include this one header and compile with -I <hk package>/include.
//
//   hk::rt<T, R, C, L>   register tile of one wave        hk::st<T, R, C>  shared (LDS) tile
//   hk::rv<T, N, D>      register vector                  hk::sv<T, N>     shared vector
//   hk::gl<T>            global tensor view               hk::coord        tile coordinate
//
// Operations are free functions, destination first: hk::load, hk::store, hk::mma_AB, hk::add,
// hk::row_max, hk::copy, ...; hk::group<N>::load/store for the whole workgroup. See docs/tiles.md.
#pragma once

#include "common/common.cuh"
#include "arch/arch.cuh"
#include "types/types.cuh"
#include "ops/ops.cuh"
