// The target family's fragment patterns and matrix step: arch::opnd_pattern (16-bit operands),
// arch::acc_pattern (fp32 accumulators and every other 32/8-bit type), arch::acc_block_slots and
// arch::mma_block<T, K>(acc, a, b); and the 8-bit step arch::mma8_block<T, K>(acc, a, b).
#pragma once

#include "../common/arch.cuh"

#if defined(HK_RDNA3)
#include "rdna3/fragments.cuh"
#elif defined(HK_RDNA4)
#include "rdna4/fragments.cuh"
#elif defined(HK_CDNA3)
#include "cdna3/fragments.cuh"
#include "cdna3/mma.cuh"
#elif defined(HK_CDNA4)
#include "cdna4/fragments.cuh"
#endif

#include "mma8.cuh"
