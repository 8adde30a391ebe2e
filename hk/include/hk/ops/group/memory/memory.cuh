#pragma once
#include "tile/tile.cuh"
#include "vec/vec.cuh"
