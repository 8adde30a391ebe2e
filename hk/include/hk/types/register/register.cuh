#pragma once
#include "layout.cuh"
#include "rv.cuh"
#include "rt.cuh"
#include "staging.cuh"
