#pragma once
#include "register/register.cuh"
#include "shared/shared.cuh"
#include "global/global.cuh"
