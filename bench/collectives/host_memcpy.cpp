// SPDX-License-Identifier: MIT
// host_memcpy.cpp - memcpy bandwidth and the CPU's name (host_memcpy.hpp).
#include "host_memcpy.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <vector>

namespace tpu::bench {

double memcpy_bytes_per_second(std::uint64_t bytes, unsigned reps) {
    std::vector<unsigned char> from(bytes, 1), to(bytes, 0);
    double best = 0;
    for (unsigned i = 0; i < reps; ++i) {
        const auto start = std::chrono::steady_clock::now();
        std::memcpy(to.data(), from.data(), bytes);
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        best = std::max(best, static_cast<double>(bytes) / took.count());
        from[i % bytes] = to[(i + 1) % bytes]; // the copies depend on each other
    }
    return best;
}

std::string cpu_name() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
        if (line.starts_with("model name")) {
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    return "unknown CPU";
}

} // namespace tpu::bench
