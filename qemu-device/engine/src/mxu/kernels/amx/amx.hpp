// SPDX-License-Identifier: MIT
// Whether this process can run Intel AMX tile instructions: the CPU has amx-tile, amx-bf16 and
// amx-int8 (CPUID leaf 7), and the kernel grants the tile data state to the process
// (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, asked once). Only then is the AMX
// kernel set (mxu/kernels/amx/amx.cpp) offered for the start-up check, and only then do weight
// tiles carry its bf16 layout (WeightTile::bf16_amx_pairs()).
#pragma once

namespace tpu::engine {

bool amx_runnable();

} // namespace tpu::engine
