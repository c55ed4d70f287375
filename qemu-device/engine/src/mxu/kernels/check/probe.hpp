// SPDX-License-Identifier: MIT
// Runs the start-up check of a kernel set that has never run on this host (the AMX set) in a
// child process first, so that a fault in it (an illegal instruction, a bad access, a hang)
// ends the child, not the card: the set is then simply not used.
#pragma once

#include "mxu/kernels/kernels.hpp"

namespace tpu::engine {

// Whether a forked child ran kernels_match_model(kernels) to completion and it passed.
bool passes_check_in_child(const RowKernels &kernels);

} // namespace tpu::engine
