#pragma once
#include "global_to_register.cuh"
#include "shared_to_register.cuh"
