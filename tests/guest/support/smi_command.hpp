// SPDX-License-Identifier: MIT
// smi_command.hpp - guest tests that run tpu-smi: the path of this build's tpu-smi and a
// command's output.
#pragma once

#include <string>

namespace guest {

// tpu-smi of this build: build/guest/tools/tpu-smi, seen from build/guest/tests/guest.
std::string tpu_smi();

// Runs `command` through the shell; its standard output, its wait status in `status`.
std::string run_command(const std::string &command, int &status);

} // namespace guest
