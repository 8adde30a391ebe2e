// Operations of a workgroup of NUM_WARPS waves: hk::group<NUM_WARPS>.
#pragma once
#include "memory/tile/global_to_shared.cuh"
#include "memory/vec/global_to_shared.cuh"
