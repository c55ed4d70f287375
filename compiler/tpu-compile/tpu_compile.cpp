// SPDX-License-Identifier: MIT
// tpu-compile: an ONNX model compiled for the card into a .tpumodel file (docs/tpumodel.md),
// with a report of every op's placement and the reason for every node left on the CPU
// (compiler/README.md).
#include <tpu_onnx/compile.hpp>
#include <tpumodel/file.hpp>

#include <CLI/CLI.hpp>

#include <cstring>

#include <fstream>
#include <iostream>
#include <iterator>

namespace {

// The raw little-endian float32 values of file `path`.
std::vector<float> read_floats(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw tpu_onnx::CompileError("--calibrate " + path + ": cannot open the file");
    const std::string bytes{std::istreambuf_iterator<char>(in), {}};
    if (in.bad())
        throw tpu_onnx::CompileError("--calibrate " + path + ": cannot read the file");
    if (bytes.empty() || bytes.size() % sizeof(float) != 0)
        throw tpu_onnx::CompileError("--calibrate " + path + ": " + std::to_string(bytes.size()) +
                                     " bytes are not a whole number of float32 values");
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"tpu-compile: an ONNX model compiled for the TPU card (.tpumodel)"};
    std::string model, out, dtype = "fp32", calibration;
    std::vector<std::string> inputs;
    app.add_option("model", model, "the ONNX model (opset 7-17)")->required();
    app.add_option("--input", inputs,
                   "NAME:SHAPE of a graph input, e.g. x:1x3x224x224 (needed for dynamic ones)");
    app.add_option("--dtype", dtype, "the arithmetic on the card")
        ->check(CLI::IsMember({"fp32", "bf16", "int8"}))
        ->capture_default_str();
    app.add_option("--calibrate", calibration,
                   "int8's calibration samples: a file of raw float32 (little-endian) samples of "
                   "the graph input, e.g. a few hundred training images");
    app.add_option("-o,--output", out, "the .tpumodel file to write")->required();
    CLI11_PARSE(app, argc, argv);
    try {
        tpu_onnx::CompileOptions options;
        for (const std::string &spec : inputs) {
            const std::size_t colon = spec.rfind(':');
            if (colon == std::string::npos || colon == 0)
                throw tpu_onnx::CompileError("--input " + spec + ": expected NAME:SHAPE");
            options.input_shapes[spec.substr(0, colon)] =
                tpu_onnx::parse_shape(spec.substr(colon + 1));
        }
        options.precision = dtype == "bf16"   ? tpumodel::Precision::Bf16
                            : dtype == "int8" ? tpumodel::Precision::Int8
                                              : tpumodel::Precision::Fp32;
        if (!calibration.empty())
            options.calibration = read_floats(calibration);
        const tpu_onnx::Compiled c = tpu_onnx::compile_file(model, options);
        tpumodel::save(c.model, out);
        std::cout << tpu_onnx::report(c) << "\nwrote " << out << "\n";
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "tpu-compile: " << e.what() << "\n";
        return 1;
    }
}
