// Operations of a workgroup of NUM_WARPS waves: hk::group<NUM_WARPS>.
#pragma once
#include "memory/memory.cuh"
