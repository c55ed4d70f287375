// SPDX-License-Identifier: MIT
// Run-time selection of the MXU kernels from the host CPU's features.
#include "mxu_kernels.hpp"

namespace tpu::engine {

std::vector<const RowKernels *> supported_row_kernels() {
    std::vector<const RowKernels *> sets;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        if (__builtin_cpu_supports("avx512vnni"))
            sets.push_back(&kAvx512VnniRowKernels);
        sets.push_back(&kAvx512RowKernels);
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        sets.push_back(&kAvx2RowKernels);
#endif
    sets.push_back(&kScalarRowKernels);
    return sets;
}

const RowKernels &best_row_kernels() {
    static const RowKernels *const best = supported_row_kernels().front();
    return *best;
}

} // namespace tpu::engine
