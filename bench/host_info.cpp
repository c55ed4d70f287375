// SPDX-License-Identifier: MIT
// Host description for the benchmark's header: /proc/cpuinfo's first "model name", "cpu family",
// "model", "stepping" and "flags" lines, and the engine's kernel selection
// (mxu/kernels/kernels.hpp).
#include "host_info.hpp"

#include <fstream>
#include <sstream>
#include <vector>

#include "mxu/kernels/amx/amx.hpp"
#include "mxu/kernels/kernels.hpp"

namespace tpu::bench {
namespace {

// The value of the first "key<tabs> : value" line of /proc/cpuinfo with this key.
std::string cpuinfo_field(const std::string &key) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        const size_t colon = line.find(':');
        if (colon == std::string::npos || line.rfind(key, 0) != 0 ||
            line.find_first_not_of(" \t", key.size()) != colon)
            continue;
        const size_t value = line.find_first_not_of(' ', colon + 1);
        return value == std::string::npos ? std::string() : line.substr(value);
    }
    return {};
}

} // namespace

std::string cpu_model() {
    const std::string model = cpuinfo_field("model name");
    return model.empty() ? "unknown CPU" : model;
}

std::string cpu_family_model() {
    const std::string family = cpuinfo_field("cpu family");
    if (family.empty())
        return "family unknown";
    std::string out = "family " + family;
    for (const char *key : {"model", "stepping"}) {
        const std::string value = cpuinfo_field(key);
        if (!value.empty())
            out += std::string(", ") + key + " " + value;
    }
    return out;
}

std::string matrix_isa_flags() {
    static const std::vector<std::string> kMatrix = {
        "fma",         "avx2",        "avx512f",  "avx512bw", "avx512vl", "avx512_vnni",
        "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile", "amx_int8", "amx_fp16"};
    std::istringstream flags(cpuinfo_field("flags"));
    std::string flag, out;
    while (flags >> flag)
        for (const std::string &m : kMatrix)
            if (flag == m)
                out += (out.empty() ? "" : " ") + flag;
    return out.empty() ? "none" : out;
}

std::string engine_kernel_set() {
    return std::string(engine::best_row_kernels().name) +
           (engine::amx_runnable() ? " (AMX usable)" : " (AMX not usable in this process)");
}

} // namespace tpu::bench
