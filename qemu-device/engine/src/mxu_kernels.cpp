// SPDX-License-Identifier: MIT
// Run-time selection of the MXU kernels from the host CPU's features. A vector kernel set is
// offered only if its bf16 kernel passes the start-up check against the scalar model
// (mxu_kernels_check.hpp): a CPU whose vdpbf16ps, or whose fma under FTZ/DAZ, rounds
// differently falls back to the next set, down to the portable scalar kernels.
#include "mxu_kernels.hpp"

#include "mxu_kernels_check.hpp"

namespace tpu::engine {

std::vector<const RowKernels *> supported_row_kernels() {
    std::vector<const RowKernels *> sets;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        if (__builtin_cpu_supports("avx512vnni")) {
            if (__builtin_cpu_supports("avx512bf16"))
                sets.push_back(&kAvx512Bf16RowKernels);
            sets.push_back(&kAvx512VnniRowKernels);
        }
        sets.push_back(&kAvx512RowKernels);
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        sets.push_back(&kAvx2RowKernels);
    std::erase_if(sets, [](const RowKernels *set) { return !bf16_kernel_matches_model(*set); });
#endif
    sets.push_back(&kScalarRowKernels);
    return sets;
}

const RowKernels &best_row_kernels() {
    static const RowKernels *const best = supported_row_kernels().front();
    return *best;
}

} // namespace tpu::engine
