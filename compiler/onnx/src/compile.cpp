// SPDX-License-Identifier: MIT
// compile.cpp - the compiler's steps in order (passes.hpp), and the --input shape syntax.
#include "passes.hpp"

#include <charconv>
#include <fstream>
#include <iterator>

namespace tpu_onnx {

Compiled compile_file(const std::string &onnx_path, const CompileOptions &options) {
    std::ifstream in(onnx_path, std::ios::binary);
    if (!in)
        throw CompileError(onnx_path + ": cannot open the file");
    const std::string bytes{std::istreambuf_iterator<char>(in), {}};
    if (in.bad())
        throw CompileError(onnx_path + ": cannot read the file");
    return compile_bytes(bytes, onnx_path, options);
}

Compiled compile_bytes(const std::string &bytes, const std::string &onnx_path,
                       const CompileOptions &options) {
    if ((options.precision == tpumodel::Precision::Int8) == options.calibration.empty())
        throw CompileError(options.calibration.empty()
                               ? "--dtype int8 needs calibration samples (--calibrate FILE: "
                                 "raw float32 samples of the graph input) to set the "
                                 "activations' scales"
                               : "calibration samples are for --dtype int8 only");
    Compiled c;
    c.summary.source = onnx_path;
    const onnx::ModelProto proto = load_and_infer(bytes, onnx_path, options, c.summary);
    c.model = lower(proto, onnx_path);
    try {
        fold_constants(c.model, c.summary);
        fold_batchnorms(c.model, c.summary);
        convert_layouts(c.model, c.summary);
        move_to_last_axis(c.model, c.summary);
        split_layer_norm_statistics(c.model);
        split_gemms(c.model);
        split_batchnorms(c.model);
        decompose(c.model);
        shape_constant_operands(c.model);
        fuse(c.model, c.summary);
        place(c.model);
    } catch (const CompileError &e) {
        throw CompileError(onnx_path + ": " + e.what());
    }
    prune(c.model);
    c.model.precision = options.precision;
    if (!options.calibration.empty()) {
        try {
            calibrate(c.model, options.calibration);
        } catch (const std::exception &e) {
            throw CompileError(onnx_path + ": " + e.what());
        }
    }
    const std::size_t slash = onnx_path.find_last_of('/');
    c.model.producer =
        "tpu-compile from " + onnx_path.substr(slash == std::string::npos ? 0 : slash + 1);
    tpumodel::validate(c.model, onnx_path + " (compiled)");
    return c;
}

std::vector<std::int64_t> parse_shape(const std::string &text) {
    std::vector<std::int64_t> dims;
    const char *p = text.data(), *end = text.data() + text.size();
    while (p < end) {
        std::int64_t d = 0;
        const auto [next, ec] = std::from_chars(p, end, d);
        if (ec != std::errc() || d < 1)
            throw CompileError("shape '" + text +
                               "': expected positive sizes separated by 'x' or ',' (e.g. 1x784)");
        dims.push_back(d);
        p = next;
        if (p < end && *p != 'x' && *p != ',')
            throw CompileError("shape '" + text + "': unexpected '" + std::string(1, *p) + "'");
        if (p < end && ++p == end)
            throw CompileError("shape '" + text + "' ends with a separator");
    }
    if (dims.empty())
        throw CompileError("shape '" + text + "' is empty");
    return dims;
}

} // namespace tpu_onnx
