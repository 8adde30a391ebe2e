#pragma once
#include "global_to_shared.cuh"
#include "staged.cuh"
