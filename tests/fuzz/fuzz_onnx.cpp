// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as an ONNX model for tpu-compile's front end
// (tpu_onnx::compile_bytes: parse, checker, opset conversion, shape inference, lowering, constant
// folding with the CPU kernels, layouts, fusion, placement). Whatever the input, the compiler must
// produce a model that passes the .tpumodel rules or refuse it with a CompileError (or the
// format's FormatError) naming the problem, without crashing, reading out of bounds or allocating
// beyond the RSS limit (ASan/UBSan); any other exception escaping is a finding.
//
// Seed corpus: at start-up the target writes small valid models (an MLP, a CNN with a PyTorch
// shape chain, a Conv + BatchNormalization, a Slice whose ends come from a Shape, the quantised
// ops: QuantizeLinear, QLinearConv, MatMulInteger, DequantizeLinear) as seed-<n>
// files into the corpus directory (the first directory argument) unless they are there already.
#include <tpu_onnx/builder.hpp>
#include <tpu_onnx/compile.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace {

using tpu_onnx::ModelBuilder;
using Ints = std::vector<std::int64_t>;

std::vector<float> values(std::size_t n) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = float(int(i % 7) - 3) * 0.25f;
    return v;
}

std::vector<ModelBuilder> seeds() {
    std::vector<ModelBuilder> s;
    ModelBuilder mlp(13, "fuzz_onnx seed");
    mlp.input("x", {std::int64_t(2), std::int64_t(4)})
        .floats("w", {3, 4}, values(12))
        .floats("b", {3}, values(3))
        .node("Gemm", {"x", "w", "b"}, {"h"}, "fc", {{"transB", std::int64_t(1)}})
        .node("Relu", {"h"}, {"r"}, "relu")
        .node("Softmax", {"r"}, {"y"}, "softmax", {{"axis", std::int64_t(-1)}})
        .output("y", 2);
    s.push_back(mlp);

    ModelBuilder cnn(17, "fuzz_onnx seed");
    cnn.input("x", {std::int64_t(1), std::int64_t(2), std::int64_t(4), std::int64_t(4)})
        .floats("w", {2, 2, 3, 3}, values(36))
        .ints("zero", {}, {0})
        .ints("axes", {1}, {0})
        .ints("minus_one", {1}, {-1})
        .floats("fc", {8, 3}, values(24))
        .node("Conv", {"x", "w"}, {"c"}, "conv",
              {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}})
        .node("MaxPool", {"c"}, {"p"}, "pool",
              {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}})
        .node("Shape", {"p"}, {"s"}, "shape")
        .node("Gather", {"s", "zero"}, {"n"}, "gather", {{"axis", std::int64_t(0)}})
        .node("Unsqueeze", {"n", "axes"}, {"n1"}, "unsqueeze")
        .node("Concat", {"n1", "minus_one"}, {"target"}, "concat", {{"axis", std::int64_t(0)}})
        .node("Reshape", {"p", "target"}, {"f"}, "reshape")
        .node("MatMul", {"f", "fc"}, {"y"}, "matmul")
        .output("y", 2);
    s.push_back(cnn);

    ModelBuilder bn(15, "fuzz_onnx seed");
    bn.input("x", {std::int64_t(1), std::int64_t(2), std::int64_t(3), std::int64_t(3)})
        .floats("w", {2, 2, 1, 1}, values(4))
        .floats("scale", {2}, {1.0f, 2.0f})
        .floats("shift", {2}, {0.5f, -0.5f})
        .floats("mean", {2}, {0.0f, 0.1f})
        .floats("var", {2}, {1.0f, 0.5f})
        .floats("half", {}, {0.5f})
        .node("Sub", {"x", "half"}, {"xc"}, "sub")
        .node("Conv", {"xc", "w"}, {"c"}, "conv")
        .node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"n"}, "bn")
        .node("GlobalAveragePool", {"n"}, {"y"}, "gap")
        .output("y", 4);
    s.push_back(bn);

    ModelBuilder slice(17, "fuzz_onnx seed");
    slice.input("x", {std::int64_t(2), std::int64_t(6)})
        .ints("one", {1}, {1})
        .ints("two", {1}, {2})
        .ints("start", {1}, {0})
        .node("Shape", {"x"}, {"s"}, "shape")
        .node("Slice", {"s", "one", "two"}, {"width"}, "width")
        .node("Div", {"width", "two"}, {"half"}, "half")
        .node("Slice", {"x", "start", "half", "one"}, {"y"}, "slice")
        .output("y", 2);
    s.push_back(slice);

    constexpr int u8 = onnx::TensorProto_DataType_UINT8;
    ModelBuilder quant(13, "fuzz_onnx seed");
    quant.input("x", {std::int64_t(1), std::int64_t(2), std::int64_t(4), std::int64_t(4)})
        .floats("s", {}, {0.05f})
        .ints("z", {}, {128}, u8)
        .ints("w", {2, 2, 3, 3}, Ints(36, 200), u8)
        .ints("zw", {2}, {0, 255}, u8)
        .floats("sw", {}, {0.01f})
        .ints("b", {4, 3}, Ints(12, 7), u8)
        .ints("zb", {}, {3}, u8)
        .node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "quantize")
        .node("QLinearConv", {"q", "s", "z", "w", "sw", "z", "s", "z"}, {"c"}, "conv",
              {{"pads", Ints{1, 1, 1, 1}}})
        .node("MatMulInteger", {"c", "b", "z", "zb"}, {"m"}, "matmul")
        .node("DequantizeLinear", {"m", "s"}, {"y"}, "dequantize")
        .output("y", 4);
    s.push_back(quant);
    return s;
}

void write_seeds(const std::filesystem::path &dir) {
    const std::vector<ModelBuilder> s = seeds();
    for (std::size_t i = 0; i < s.size(); ++i) {
        const std::filesystem::path path = dir / ("seed-" + std::to_string(i));
        if (!std::filesystem::exists(path))
            s[i].write(path.string());
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
    for (int i = 1; i < *argc; i++) {
        std::error_code ec;
        if ((*argv)[i][0] != '-' && std::filesystem::is_directory((*argv)[i], ec)) {
            write_seeds((*argv)[i]);
            break;
        }
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char *>(data), size);
    try {
        tpu_onnx::compile_bytes(bytes, "fuzz.onnx", {});
    } catch (const tpu_onnx::CompileError &) {
    } catch (const tpumodel::FormatError &) {
    } catch (const std::exception &e) {
        std::fprintf(stderr, "fuzz_onnx: an unexpected exception escaped: %s\n", e.what());
        std::abort();
    }
    return 0;
}
