#pragma once
#include "warp/warp.cuh"
#include "group/group.cuh"
#include "insts.cuh"
