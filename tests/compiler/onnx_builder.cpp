// SPDX-License-Identifier: MIT
// onnx_builder.cpp - the test models' scratch files and data (onnx_builder.hpp).
#include "onnx_builder.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

#include <unistd.h>

namespace compiler_test {

namespace {

// One directory per process (test runs of several checkouts may share the machine), removed
// when the process ends.
struct ScratchDir {
    ScratchDir()
        : path(std::filesystem::temp_directory_path() /
               ("compiler_tests." + std::to_string(getpid()))) {
        std::filesystem::create_directories(path);
    }
    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    std::filesystem::path path;
};

} // namespace

std::string scratch_path(const std::string &file) {
    static const ScratchDir dir;
    return (dir.path / file).string();
}

std::string OnnxBuilder::save(const std::string &file) const {
    const std::string path = scratch_path(file);
    write(path);
    return path;
}

std::vector<float> pattern(std::size_t n, std::uint32_t seed) {
    std::vector<float> v(n);
    std::uint32_t s = seed * 2654435761u + 1;
    for (float &x : v) {
        s = s * 1664525u + 1013904223u;
        x = float(s >> 8) / float(1u << 23) - 1.0f;
    }
    return v;
}

tpumodel::Tensor float_tensor(const std::vector<std::int64_t> &shape, const std::vector<float> &v) {
    tpumodel::Tensor t{"", tpumodel::DType::Float, tpumodel::Layout::Plain, shape, false, {}};
    t.data.resize(v.size() * 4);
    std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
}

std::vector<float> float_values(const tpumodel::Tensor &t) {
    REQUIRE(t.dtype == tpumodel::DType::Float);
    REQUIRE(t.data.size() == t.element_count() * 4);
    std::vector<float> v(t.element_count());
    std::memcpy(v.data(), t.data.data(), t.data.size());
    return v;
}

} // namespace compiler_test
