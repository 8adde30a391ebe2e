#pragma once
#include "arch.cuh"
#include "dtypes.cuh"
#include "ints.cuh"
#include "util.cuh"
