// Register operations. The elementwise maps, fills, comparisons, select, copy and rand in tile/
// take register vectors (rv) as well as tiles.
#pragma once
#include "tile/tile.cuh"
