#pragma once
#include "arch.cuh"
#include "dtypes.cuh"
#include "util.cuh"
