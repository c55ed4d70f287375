// SPDX-License-Identifier: MIT
// compile_errors_test.cpp - what tpu-compile refuses, each with an error naming the problem and
// the node or tensor: unreadable and truncated files, opsets outside 7-17, cycles, missing
// initialisers, unsupported ops, dynamic shapes it cannot fix, absurd shapes, bad --input,
// int8 without calibration samples or with samples of another size.
#include "onnx_builder.hpp"

#include <tpu_onnx/compile.hpp>

#include <catch2/catch.hpp>

#include <fstream>

using namespace compiler_test;

namespace {

std::string refusal(const std::string &path,
                    std::map<std::string, std::vector<std::int64_t>> shapes = {}) {
    tpu_onnx::CompileOptions options;
    options.input_shapes = std::move(shapes);
    try {
        tpu_onnx::compile_file(path, options);
    } catch (const tpu_onnx::CompileError &e) {
        return e.what();
    }
    return "compiled";
}

std::string refusal(const OnnxBuilder &b, const std::string &file,
                    std::map<std::string, std::vector<std::int64_t>> shapes = {}) {
    return refusal(b.save(file), std::move(shapes));
}

// y = Relu(x) with x [2, 3]: compiles; each section breaks one thing.
OnnxBuilder relu(std::int64_t opset = 17) {
    OnnxBuilder b(opset);
    b.input("x", {std::int64_t(2), std::int64_t(3)})
        .node("Relu", {"x"}, {"y"}, "act")
        .output("y", 2);
    return b;
}

} // namespace

TEST_CASE("files that are not ONNX models are refused", "[compile]") {
    REQUIRE(refusal(relu(), "compiler_ok.onnx") == "compiled");
    SECTION("missing") {
        CHECK(refusal(scratch_path("compiler_missing.onnx")) ==
              scratch_path("compiler_missing.onnx") + ": cannot open the file");
    }
    SECTION("truncated") {
        std::string bytes;
        relu().proto().SerializeToString(&bytes);
        const std::string path = scratch_path("compiler_truncated.onnx");
        std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 5);
        CHECK_THAT(refusal(path), Catch::StartsWith(path + ": not an ONNX model"));
    }
    SECTION("text") {
        const std::string path = scratch_path("compiler_text.onnx");
        std::ofstream(path) << "this is not a protobuf\n";
        CHECK_THAT(refusal(path), Catch::StartsWith(path + ": not an ONNX model"));
    }
}

TEST_CASE("opsets outside 7-17 are refused", "[compile]") {
    CHECK_THAT(refusal(relu(18), "compiler_opset18.onnx"),
               Catch::EndsWith("opset 18 is outside 7-17 (the versions ONNX 1.12's converter "
                               "takes to opset 17)"));
    // Relu changed at opset 6: a model at 5 means something opset 7 does not say.
    CHECK_THAT(refusal(relu(5), "compiler_opset5.onnx"),
               Catch::Contains("opset 5 is outside 7-17"));
    CHECK(refusal(relu(7), "compiler_opset7.onnx") == "compiled");
}

TEST_CASE("an opset below 7 is raised to 7 when none of the model's ops changed since",
          "[compile]") {
    // Relu's version 6 is the one in force at opset 7.
    CHECK(refusal(relu(6), "compiler_opset6.onnx") == "compiled");
}

TEST_CASE("broken graphs are refused naming the node", "[compile]") {
    SECTION("a cycle") {
        OnnxBuilder b(17);
        b.input("x", {std::int64_t(2)})
            .node("Add", {"x", "b"}, {"a"}, "first")
            .node("Relu", {"a"}, {"b"}, "second")
            .output("b", 1);
        CHECK_THAT(refusal(b, "compiler_cycle.onnx"),
                   Catch::Contains("the ONNX checker refuses the model") &&
                       Catch::Contains("first"));
    }
    SECTION("a missing initialiser") {
        OnnxBuilder b(17);
        b.input("x", {std::int64_t(1), std::int64_t(4)})
            .node("Gemm", {"x", "weights"}, {"y"}, "fc")
            .output("y", 2);
        CHECK_THAT(refusal(b, "compiler_no_init.onnx"),
                   Catch::Contains("the ONNX checker refuses the model") &&
                       Catch::Contains("weights") && Catch::Contains("fc"));
    }
}

TEST_CASE("ops neither the card nor the CPU can run are refused naming the node", "[compile]") {
    OnnxBuilder b(17);
    b.input("x", {std::int64_t(2), std::int64_t(3)})
        .node("Floor", {"x"}, {"y"}, "round_down")
        .output("y", 2);
    CHECK_THAT(refusal(b, "compiler_floor.onnx"),
               Catch::EndsWith("node 'round_down' (Floor): unsupported: no card op for Floor, "
                               "and there is no CPU kernel for Floor"));
}

TEST_CASE("dynamic and absurd shapes are refused", "[compile]") {
    OnnxBuilder b(17);
    b.input("x", {std::string("batch"), std::int64_t(3)})
        .node("Relu", {"x"}, {"y"}, "act")
        .output("y", 2);
    SECTION("a dynamic input without --input") {
        CHECK_THAT(refusal(b, "compiler_dynamic.onnx"),
                   Catch::EndsWith("input 'x' has a dynamic shape [batch, 3]: give its size with "
                                   "--input x:SHAPE (e.g. 1x784)"));
    }
    SECTION("fixed by --input") {
        CHECK(refusal(b, "compiler_dynamic.onnx", {{"x", {8, 3}}}) == "compiled");
    }
    SECTION("an --input that disagrees with the model") {
        CHECK_THAT(refusal(b, "compiler_dynamic.onnx", {{"x", {8, 4}}}),
                   Catch::EndsWith("--input x:8x4 disagrees with the model's fixed shape [batch, "
                                   "3]"));
        CHECK_THAT(refusal(b, "compiler_dynamic.onnx", {{"x", {8}}}),
                   Catch::EndsWith("--input x:8 has rank 1, the model's input is [batch, 3]"));
    }
    SECTION("an --input for no input") {
        CHECK_THAT(refusal(b, "compiler_dynamic.onnx", {{"images", {8, 3}}}),
                   Catch::EndsWith("--input images: the model has no input 'images' (its inputs: "
                                   "x)"));
    }
    SECTION("an absurd --input") {
        CHECK_THAT(refusal(b, "compiler_dynamic.onnx", {{"x", {3000000000LL, 3}}}),
                   Catch::EndsWith("input 'x' of shape 3000000000x3 is absurdly large (more "
                                   "than 2^32 elements)"));
    }
    SECTION("a shape that depends on the data") {
        OnnxBuilder n(17);
        n.input("x", {std::int64_t(4)})
            .node("NonZero", {"x"}, {"i"}, "nz")
            .node("Relu", {"i"}, {"y"}, "act")
            .output("y", 2, onnx::TensorProto_DataType_INT64);
        CHECK_THAT(refusal(n, "compiler_nonzero.onnx"),
                   Catch::Contains("node 'nz' (NonZero): output 'i' has a dynamic shape [1, -1]"));
    }
}

TEST_CASE("tensors of types the stack does not handle are refused naming them", "[compile]") {
    OnnxBuilder b(17);
    b.input("x", {std::int64_t(2)}, onnx::TensorProto_DataType_DOUBLE)
        .node("Relu", {"x"}, {"y"}, "act")
        .output("y", 1, onnx::TensorProto_DataType_DOUBLE);
    CHECK_THAT(refusal(b, "compiler_double.onnx"),
               Catch::EndsWith("tensor 'x' is of type DOUBLE: tpu-compile takes FLOAT, BFLOAT16, "
                               "INT8, UINT8, INT32, INT64, BOOL"));
}

TEST_CASE("tpu-compile's --input shapes are parsed strictly", "[compile]") {
    CHECK(tpu_onnx::parse_shape("1x3x224x224") == std::vector<std::int64_t>{1, 3, 224, 224});
    CHECK(tpu_onnx::parse_shape("4,784") == std::vector<std::int64_t>{4, 784});
    CHECK_THROWS_WITH(tpu_onnx::parse_shape("1x0"), Catch::Contains("expected positive sizes"));
    CHECK_THROWS_WITH(tpu_onnx::parse_shape("1x"), Catch::Contains("ends with a separator"));
    CHECK_THROWS_WITH(tpu_onnx::parse_shape("1y2"), Catch::Contains("unexpected 'y'"));
    CHECK_THROWS_WITH(tpu_onnx::parse_shape(""), Catch::Contains("is empty"));
}

TEST_CASE("models that crash libonnx are refused, not fatal", "[compile]") {
    SECTION("a Conv of a 3-D input with 4-D weights (ONNX 1.12's shape inference crashes)") {
        OnnxBuilder b(15);
        b.input("x", {std::int64_t(2), std::int64_t(3), std::int64_t(3)})
            .floats("w", {2, 2, 1, 1}, {1, 2, 3, 4})
            .node("Conv", {"x", "w"}, {"y"}, "conv")
            .output("y", 3);
        CHECK_THAT(refusal(b, "libonnx_crash.onnx"),
                   Catch::Contains("libonnx_crash.onnx: ONNX 1.12's checker, opset converter or "
                                   "shape inference crashed on the model"));
    }
    SECTION("a graph output nothing defines (ONNX 1.12's opset converter crashes)") {
        OnnxBuilder b(15);
        b.input("x", {std::int64_t(2), std::int64_t(3)})
            .node("Relu", {"x"}, {"y"}, "act")
            .output("nothing", 2);
        CHECK_THAT(refusal(b, "undefined_output.onnx"),
                   Catch::Contains("graph output 'nothing' is not an input, an initialiser or "
                                   "any node's output"));
    }
}

TEST_CASE("int8 takes calibration samples that are whole samples of the graph input", "[compile]") {
    OnnxBuilder b(17);
    b.input("x", {std::int64_t(2), std::int64_t(3)})
        .floats("w", {3, 4}, pattern(12, 1))
        .node("Gemm", {"x", "w"}, {"y"}, "fc")
        .output("y", 2);
    const std::string path = b.save("compiler_int8.onnx");
    tpu_onnx::CompileOptions options;
    options.precision = tpumodel::Precision::Int8;
    CHECK_THROWS_WITH(
        tpu_onnx::compile_file(path, options),
        Catch::StartsWith("--dtype int8 needs calibration samples (--calibrate FILE"));
    options.calibration = {1, 2, 3, 4, 5, 6, 7};
    CHECK_THROWS_WITH(tpu_onnx::compile_file(path, options),
                      Catch::EndsWith("--calibrate: 7 floats are not whole samples of input 'x' "
                                      "[2, 3] (3 floats a sample, batch axis first)"));
    // Three samples: two runs, the second padded with its last sample; the range is max |x|.
    options.calibration = {1, -2, 3, 0.5f, 0, -9.5f, 4, 4, 4};
    const tpumodel::Model m = tpu_onnx::compile_file(path, options).model;
    REQUIRE(m.nodes.size() == 1);
    CHECK(m.nodes[0].get_float("calibrated_max", 0) == 9.5f);
    options.precision = tpumodel::Precision::Bf16;
    CHECK_THROWS_WITH(tpu_onnx::compile_file(path, options),
                      "calibration samples are for --dtype int8 only");
}
