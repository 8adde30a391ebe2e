#pragma once
#include "gl.cuh"
