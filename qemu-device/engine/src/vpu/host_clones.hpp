// SPDX-License-Identifier: MIT
// TPU_HOST_CLONES: marks one of the vector unit's element loops to be compiled three times, for
// AVX-512 (x86-64-v4), AVX2 (x86-64-v3) and the build's baseline, with the host's best picked
// when the library loads (GCC's target_clones). The engine runs on any x86-64-v2 host; these
// loops are plain IEEE single-precision operations and integer bit work, which give the same bits
// on every instruction set (the library is built with -ffp-contract=off: no fused multiply-adds).
#pragma once

// Sanitizer builds keep the baseline alone: the clones' resolvers run while the dynamic linker
// relocates the program, before the sanitizer's runtime is up (TSan crashes there), and those
// builds check the logic, not the instruction set.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define TPU_HOST_CLONES [[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
#else
#define TPU_HOST_CLONES
#endif
