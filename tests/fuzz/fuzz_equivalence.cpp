// SPDX-License-Identifier: MIT
// libFuzzer target: the input drives the random valid-program generator of tests/support; each
// program runs in the fast and the cycle-accurate engine modes, and any difference in results,
// host memory or cycle counts aborts with a report (tpu_test_equivalence_one).
#include <cstddef>
#include <cstdint>

#include "tpu_test/equivalence.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return tpu_test_equivalence_one(data, size);
}
