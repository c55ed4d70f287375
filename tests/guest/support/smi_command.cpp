// SPDX-License-Identifier: MIT
// smi_command.cpp - running tpu-smi from the guest tests (smi_command.hpp).
#include "smi_command.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace guest {

std::string tpu_smi() {
    const auto exe = std::filesystem::read_symlink("/proc/self/exe");
    return (exe.parent_path() / "../../tools/tpu-smi/tpu-smi").lexically_normal().string();
}

std::string run_command(const std::string &command, int &status) {
    FILE *pipe = popen(command.c_str(), "r");
    if (!pipe)
        throw std::runtime_error("cannot run " + command);
    std::string out;
    char chunk[4096];
    while (std::size_t got = std::fread(chunk, 1, sizeof(chunk), pipe))
        out.append(chunk, got);
    status = pclose(pipe);
    return out;
}

} // namespace guest
