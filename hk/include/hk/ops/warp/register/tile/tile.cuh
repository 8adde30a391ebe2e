#pragma once
#include "maps.cuh"
#include "masks.cuh"
#include "broadcast.cuh"
#include "reductions.cuh"
#include "conversions.cuh"
#include "rand.cuh"
