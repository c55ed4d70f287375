// SPDX-License-Identifier: MIT
// Run-time selection of the MXU kernels from the host CPU's features. A vector kernel set is
// offered only if its kernels pass the start-up check against the scalar model and the
// embedded AMX golden cases (mxu/kernels/check.hpp): a CPU whose AMX tiles, vdpbf16ps, or fma
// under FTZ/DAZ rounds differently falls back to the next set, down to the portable scalar
// kernels. The AMX set is considered only where the process may use AMX (mxu/kernels/amx.hpp),
// and its check runs in a child process first (mxu/kernels/probe.hpp), so that code which never
// ran on this host cannot take the card down.
#include "mxu/kernels/kernels.hpp"

#include "mxu/kernels/amx.hpp"
#include "mxu/kernels/check.hpp"
#include "mxu/kernels/probe.hpp"

namespace tpu::engine {

std::vector<const RowKernels *> supported_row_kernels() {
    std::vector<const RowKernels *> sets;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (amx_runnable() && __builtin_cpu_supports("avx512f") &&
        passes_check_in_child(kAmxRowKernels))
        sets.push_back(&kAmxRowKernels);
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
    std::erase_if(sets, [](const RowKernels *set) { return !kernels_match_model(*set); });
#endif
    sets.push_back(&kScalarRowKernels);
    return sets;
}

const RowKernels &best_row_kernels() {
    static const RowKernels *const best = supported_row_kernels().front();
    return *best;
}

} // namespace tpu::engine
