#pragma once
#include "shared_to_register.cuh"
#include "global_to_register.cuh"
#include "rows_by_index.cuh"
