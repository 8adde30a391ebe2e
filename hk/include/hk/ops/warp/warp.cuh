// Operations of one wave (warp).
#pragma once
#include "sync.cuh"
#include "memory/memory.cuh"
#include "register/register.cuh"
#include "mma/mma.cuh"
