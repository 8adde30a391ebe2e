#pragma once
#include "st.cuh"
#include "sv.cuh"
#include "lds.cuh"
