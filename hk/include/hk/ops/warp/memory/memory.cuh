#pragma once
#include "tile/shared_to_register.cuh"
#include "tile/global_to_register.cuh"
#include "tile/rows_by_index.cuh"
#include "vec/global_to_register.cuh"
#include "vec/shared_to_register.cuh"
#include "scalar.cuh"
