// SPDX-License-Identifier: MIT
// Run-time selection of the MXU kernels from the host CPU's features. A vector kernel set is
// offered only if its kernels pass the start-up check against the scalar model and the
// embedded AMX golden cases (mxu/kernels/check/check.hpp): a CPU whose AMX tiles, vdpbf16ps, or fma
// under FTZ/DAZ rounds differently falls back to the next set, down to the portable scalar
// kernels. The AMX set is considered only where the process may use AMX (mxu/kernels/amx/amx.hpp),
// and its check runs in a child process first (mxu/kernels/check/probe.hpp), so that code which
// never ran on this host cannot take the card down. TPU_ENGINE_KERNELS=<name> picks a slower set
// that this host runs (to measure or debug it); a name it does not run is reported on stderr and
// ignored.
#include "mxu/kernels/kernels.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mxu/kernels/amx/amx.hpp"
#include "mxu/kernels/check/check.hpp"
#include "mxu/kernels/check/probe.hpp"

namespace tpu::engine {

std::vector<const RowKernels *> cpu_row_kernels() {
    std::vector<const RowKernels *> sets;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (amx_runnable() && __builtin_cpu_supports("avx512f"))
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
#endif
    sets.push_back(&kScalarRowKernels);
    return sets;
}

std::vector<const RowKernels *> supported_row_kernels() {
    std::vector<const RowKernels *> sets = cpu_row_kernels();
#if defined(__x86_64__)
    std::erase_if(sets, [](const RowKernels *set) {
        if (set == &kScalarRowKernels)
            return false;
        return set == &kAmxRowKernels ? !passes_check_in_child(*set) : !kernels_match_model(*set);
    });
#endif
    return sets;
}

const RowKernels &best_row_kernels() {
    static const RowKernels *const best = [] {
        const std::vector<const RowKernels *> sets = supported_row_kernels();
        const char *wanted = std::getenv("TPU_ENGINE_KERNELS");
        if (!wanted || !*wanted)
            return sets.front();
        for (const RowKernels *set : sets)
            if (std::strcmp(set->name, wanted) == 0)
                return set;
        std::string runnable;
        for (const RowKernels *set : sets)
            runnable += std::string(runnable.empty() ? "" : ", ") + set->name;
        std::fprintf(stderr,
                     "tpu engine: TPU_ENGINE_KERNELS=%s is not a kernel set this host runs (%s); "
                     "using %s\n",
                     wanted, runnable.c_str(), sets.front()->name);
        return sets.front();
    }();
    return *best;
}

} // namespace tpu::engine
