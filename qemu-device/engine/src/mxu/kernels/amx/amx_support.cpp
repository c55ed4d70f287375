// SPDX-License-Identifier: MIT
// AMX availability: CPUID leaf 7 (EDX bits 22 amx-bf16, 24 amx-tile, 25 amx-int8; read
// directly, since not every compiler's __builtin_cpu_supports knows them), then one permission
// request for the tile data state (Linux 5.16+); both answered once per process.
#include "mxu/kernels/amx/amx.hpp"

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tpu::engine {

bool amx_runnable() {
#if defined(__x86_64__) && defined(__linux__)
    static const bool runnable = [] {
        unsigned eax, ebx, ecx, edx;
        if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
            return false;
        constexpr unsigned kAmx = 1u << 22 | 1u << 24 | 1u << 25; // bf16, tile, int8
        if ((edx & kAmx) != kAmx)
            return false;
        constexpr long kArchReqXcompPerm = 0x1023;
        constexpr long kXfeatureXtiledata = 18;
        return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
    }();
    return runnable;
#else
    return false;
#endif
}

} // namespace tpu::engine
