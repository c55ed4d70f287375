// SPDX-License-Identifier: MIT
// patterns.hpp - lists of node-test name patterns (fnmatch, one a line, '#' starts a comment)
// as tpu-onnx-prepare --select and tpu-onnx-test --on-card read them.
#pragma once

#include <fnmatch.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpu_onnx_test {

inline std::vector<std::string> read_patterns(const std::string &file) {
    std::ifstream in(file);
    if (!in)
        throw std::runtime_error(file + ": cannot read");
    std::vector<std::string> patterns;
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#')
            patterns.push_back(line);
    return patterns;
}

inline bool matches(const std::string &pattern, const std::string &name) {
    return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

} // namespace tpu_onnx_test
