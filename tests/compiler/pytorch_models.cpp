// SPDX-License-Identifier: MIT
// pytorch_models.cpp - pytorch_models.py run once per test process (pytorch_models.hpp).
#include "pytorch_models.hpp"

#include "onnx_builder.hpp"

#include <tpu_onnx/compile.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

namespace compiler_test {

namespace {

std::vector<float> read_floats(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(f), {}};
    std::vector<float> v(bytes.size() / 4);
    std::copy_n(bytes.data(), v.size() * 4, reinterpret_cast<char *>(v.data()));
    return v;
}

std::vector<PytorchModel> export_models() {
    const std::string dir = scratch_path("");
    const std::string cmd =
        "/usr/bin/python3 " TPU_SOURCE_DIR "/tests/compiler/pytorch_models.py '" + dir + "' 2>&1";
    INFO(cmd);
    FILE *pipe = popen(cmd.c_str(), "r");
    REQUIRE(pipe);
    std::string text;
    char buf[512];
    while (std::fgets(buf, sizeof buf, pipe))
        text += buf;
    const int status = pclose(pipe);
    INFO(text);
    REQUIRE(status == 0);

    std::vector<PytorchModel> models;
    std::istringstream lines(text);
    std::string name, input, shape;
    while (lines >> name >> input >> shape) {
        PytorchModel m{name,
                       dir + "/" + name + ".onnx",
                       input,
                       tpu_onnx::parse_shape(shape),
                       read_floats(dir + "/" + name + ".x.f32"),
                       read_floats(dir + "/" + name + ".y.f32")};
        std::size_t count = 1;
        for (std::int64_t d : m.shape)
            count *= std::size_t(d);
        REQUIRE(m.x.size() == count);
        models.push_back(std::move(m));
    }
    REQUIRE(models.size() == 4);
    return models;
}

} // namespace

const std::vector<PytorchModel> &pytorch_models() {
    static const std::vector<PytorchModel> models = export_models();
    return models;
}

} // namespace compiler_test
