// SPDX-License-Identifier: MIT
// compile_test.cpp - tpu-compile's front end on small ONNX models built here: an MLP (Gemm +
// Relu fused, weights to [K, N]), a CNN (NCHW -> NHWC at the input, Conv weights to HWIO, the
// flatten order folded into the Gemm's weights), PyTorch's Shape/Gather/Unsqueeze/Concat/Reshape
// chain folded into a constant shape, CPU fallback with its reasons, and the report.
#include "graph/placement/placement_rules.hpp"
#include "onnx_builder.hpp"

#include <tpu_onnx/compile.hpp>
#include <tpumodel/file.hpp>
#include <tpurt/ops/op_registry.hpp>

#include <catch2/catch.hpp>

#include <cstring>

using namespace compiler_test;
using tpumodel::Layout;
using tpumodel::Placement;

namespace {

tpu_onnx::Compiled compile(const OnnxBuilder &b, const std::string &file,
                           std::map<std::string, std::vector<std::int64_t>> shapes = {}) {
    tpu_onnx::CompileOptions options;
    options.input_shapes = std::move(shapes);
    return tpu_onnx::compile_file(b.save(file), options);
}

float at(const tpumodel::Tensor &t, std::size_t i) {
    REQUIRE(t.dtype == tpumodel::DType::Float);
    float v;
    std::memcpy(&v, t.data.data() + i * 4, 4);
    return v;
}

const tpumodel::Node &node_named(const tpumodel::Model &m, const std::string &name) {
    for (const tpumodel::Node &n : m.nodes)
        if (n.name == name)
            return n;
    FAIL("no node " << name);
    throw;
}

// The 16 -> 8 -> 4 MLP as PyTorch exports nn.Linear layers: Gemm with transB = 1.
OnnxBuilder mlp() {
    OnnxBuilder b(13);
    b.input("x", {std::string("batch"), std::int64_t(16)})
        .floats("w1", {8, 16}, pattern(128, 1))
        .floats("b1", {8}, pattern(8, 2))
        .floats("w2", {4, 8}, pattern(32, 3))
        .floats("b2", {4}, pattern(4, 4))
        .node("Gemm", {"x", "w1", "b1"}, {"h"}, "fc1", {{"transB", std::int64_t(1)}})
        .node("Relu", {"h"}, {"r"}, "relu1")
        .node("Gemm", {"r", "w2", "b2"}, {"y"}, "fc2", {{"transB", std::int64_t(1)}})
        .output("y", 2);
    return b;
}

// x [N, 2, 6, 6] -> Conv 3 filters 3x3 pad 1 + bias -> Relu -> MaxPool 2x2 -> Flatten -> Gemm 5.
OnnxBuilder cnn() {
    OnnxBuilder b(13);
    b.input("x", {std::string("batch"), std::int64_t(2), std::int64_t(6), std::int64_t(6)})
        .floats("w", {3, 2, 3, 3}, pattern(54, 5))
        .floats("bias", {3}, pattern(3, 6))
        .floats("fc_w", {5, 27}, pattern(135, 7))
        .floats("fc_b", {5}, pattern(5, 8))
        .node("Conv", {"x", "w", "bias"}, {"c"}, "conv",
              {{"kernel_shape", std::vector<std::int64_t>{3, 3}},
               {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})
        .node("Relu", {"c"}, {"r"}, "relu")
        .node("MaxPool", {"r"}, {"p"}, "pool",
              {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
               {"strides", std::vector<std::int64_t>{2, 2}}})
        .node("Flatten", {"p"}, {"f"}, "flatten")
        .node("Gemm", {"f", "fc_w", "fc_b"}, {"y"}, "fc", {{"transB", std::int64_t(1)}})
        .output("y", 2);
    return b;
}

} // namespace

TEST_CASE("an MLP compiles to dense layers on the card with the ReLU fused", "[compile]") {
    const tpu_onnx::Compiled c = compile(mlp(), "compiler_mlp.onnx", {{"x", {4, 16}}});
    const tpumodel::Model &m = c.model;
    REQUIRE(m.nodes.size() == 2);
    const tpumodel::Node &fc1 = node_named(m, "fc1");
    CHECK(fc1.placement == Placement::Card);
    CHECK(fc1.card_op == "dense");
    CHECK(fc1.get_string("activation", "") == "Relu");
    CHECK(fc1.get_int("transB", 1) == 0);
    CHECK(node_named(m, "fc2").card_op == "dense");
    CHECK(m.tensors[m.inputs[0]].shape == std::vector<std::int64_t>{4, 16});
    CHECK(m.tensors[m.outputs[0]].shape == std::vector<std::int64_t>{4, 4});

    // The weights as [K, N]: w1's row n, column k is now row k, column n.
    const tpumodel::Tensor &w = m.tensors[fc1.inputs[1]];
    REQUIRE(w.shape == std::vector<std::int64_t>{16, 8});
    const std::vector<float> w1 = pattern(128, 1);
    for (std::size_t n = 0; n < 8; ++n)
        for (std::size_t k = 0; k < 16; ++k)
            CHECK(at(w, k * 8 + n) == w1[n * 16 + k]);

    const std::string r = tpu_onnx::report(c);
    CHECK_THAT(r, Catch::Contains("(opset 13, converted to 17)"));
    CHECK_THAT(r, Catch::Contains("Gemm+Relu                   1  card      dense"));
    CHECK_THAT(r, Catch::Contains("Gemm                        1  card      dense"));
    CHECK_THAT(r, Catch::Contains("2 nodes run: 2 on the card, 0 on the CPU"));
}

TEST_CASE("a CNN compiles to NHWC with the flatten order folded into the Gemm", "[compile]") {
    const tpu_onnx::Compiled c = compile(cnn(), "compiler_cnn.onnx", {{"x", {2, 2, 6, 6}}});
    const tpumodel::Model &m = c.model;
    std::vector<std::string> ops;
    for (const tpumodel::Node &n : m.nodes)
        ops.push_back(n.op + (n.placement == Placement::Card ? "@" + n.card_op : "@cpu"));
    CHECK(ops == std::vector<std::string>{"Transpose@permute", "Conv@conv2d_layer",
                                          "MaxPool@pool2d", "Flatten@view", "Gemm@dense"});

    // The graph's input keeps ONNX's NCHW; the Transpose makes the card's NHWC copy.
    CHECK(m.tensors[m.inputs[0]].shape == std::vector<std::int64_t>{2, 2, 6, 6});
    CHECK(m.tensors[m.inputs[0]].layout == Layout::Plain);
    CHECK(m.nodes[0].get_ints("perm", {}) == std::vector<std::int64_t>{0, 2, 3, 1});
    const tpumodel::Node &conv = node_named(m, "conv");
    CHECK(conv.get_string("activation", "") == "Relu");
    CHECK(m.tensors[conv.inputs[0]].layout == Layout::Nhwc);
    CHECK(m.tensors[conv.inputs[0]].shape == std::vector<std::int64_t>{2, 6, 6, 2});
    const tpumodel::Node &pool = node_named(m, "pool");
    CHECK(m.tensors[pool.outputs[0]].shape == std::vector<std::int64_t>{2, 3, 3, 3});
    CHECK(m.tensors[pool.outputs[0]].layout == Layout::Nhwc);

    // Conv weights OIHW -> HWIO.
    const tpumodel::Tensor &w = m.tensors[conv.inputs[1]];
    REQUIRE(w.shape == std::vector<std::int64_t>{3, 3, 2, 3});
    CHECK(w.layout == Layout::Hwio);
    const std::vector<float> oihw = pattern(54, 5);
    for (std::size_t f = 0; f < 3; ++f)
        for (std::size_t ch = 0; ch < 2; ++ch)
            for (std::size_t kh = 0; kh < 3; ++kh)
                for (std::size_t kw = 0; kw < 3; ++kw)
                    CHECK(at(w, ((kh * 3 + kw) * 2 + ch) * 3 + f) ==
                          oihw[((f * 2 + ch) * 3 + kh) * 3 + kw]);

    // The Gemm's weights [K, N] with K in H, W, C order: row (h*3 + w)*3 + c is ONNX's
    // row c*9 + h*3 + w of the transposed fc_w.
    const tpumodel::Tensor &fw = m.tensors[node_named(m, "fc").inputs[1]];
    REQUIRE(fw.shape == std::vector<std::int64_t>{27, 5});
    const std::vector<float> fc = pattern(135, 7);
    for (std::size_t ch = 0; ch < 3; ++ch)
        for (std::size_t h = 0; h < 3; ++h)
            for (std::size_t x = 0; x < 3; ++x)
                for (std::size_t n = 0; n < 5; ++n)
                    CHECK(at(fw, ((h * 3 + x) * 3 + ch) * 5 + n) ==
                          fc[n * 27 + ch * 9 + h * 3 + x]);

    const std::string r = tpu_onnx::report(c);
    CHECK_THAT(r, Catch::Contains("Conv+Relu                   1  card      conv2d_layer"));
    CHECK_THAT(r, Catch::Contains("1 layout transposes added"));
}

TEST_CASE("a CNN whose image is a graph output gets it back in NCHW", "[compile]") {
    OnnxBuilder b(17);
    b.input("x", {std::int64_t(1), std::int64_t(1), std::int64_t(4), std::int64_t(4)})
        .floats("w", {2, 1, 1, 1}, {1.0f, -1.0f})
        .node("Conv", {"x", "w"}, {"y"}, "conv")
        .output("y", 4);
    const tpumodel::Model m = compile(b, "compiler_image_out.onnx").model;
    REQUIRE(m.nodes.size() == 3);
    CHECK(m.nodes[2].op == "Transpose");
    CHECK(m.nodes[2].get_ints("perm", {}) == std::vector<std::int64_t>{0, 3, 1, 2});
    const tpumodel::Tensor &y = m.tensors[m.outputs[0]];
    CHECK(y.name == "y");
    CHECK(y.layout == Layout::Plain);
    CHECK(y.shape == std::vector<std::int64_t>{1, 2, 4, 4});
}

TEST_CASE("PyTorch's Shape/Gather/Unsqueeze/Concat chain folds into a constant shape",
          "[compile]") {
    OnnxBuilder b(13);
    b.input("x", {std::string("batch"), std::int64_t(3), std::int64_t(4)})
        .ints("zero", {}, {0})
        .ints("axes", {1}, {0})
        .ints("minus_one", {1}, {-1})
        .floats("w", {12, 2}, pattern(24, 9))
        .node("Shape", {"x"}, {"s"}, "shape")
        .node("Gather", {"s", "zero"}, {"n"}, "gather", {{"axis", std::int64_t(0)}})
        .node("Unsqueeze", {"n", "axes"}, {"n1"}, "unsqueeze")
        .node("Concat", {"n1", "minus_one"}, {"target"}, "concat", {{"axis", std::int64_t(0)}})
        .node("Reshape", {"x", "target"}, {"flat"}, "reshape")
        .node("MatMul", {"flat", "w"}, {"y"}, "matmul")
        .output("y", 2);
    const tpu_onnx::Compiled c = compile(b, "compiler_chain.onnx", {{"x", {5, 3, 4}}});
    const tpumodel::Model &m = c.model;
    CHECK(c.summary.folded == 4);
    REQUIRE(m.nodes.size() == 2);
    const tpumodel::Node &reshape = node_named(m, "reshape");
    CHECK(reshape.card_op == "view");
    const tpumodel::Tensor &target = m.tensors[reshape.inputs[1]];
    REQUIRE(target.constant);
    REQUIRE(target.dtype == tpumodel::DType::Int64);
    std::vector<std::int64_t> dims(2);
    std::memcpy(dims.data(), target.data.data(), 16);
    CHECK(dims == std::vector<std::int64_t>{5, -1});
    CHECK(m.tensors[reshape.outputs[0]].shape == std::vector<std::int64_t>{5, 12});
    CHECK(node_named(m, "matmul").card_op == "matmul");
    CHECK_THAT(tpu_onnx::report(c), Catch::Contains("6 ONNX nodes: 4 folded into constants"));
}

TEST_CASE("a LayerNormalization's Mean and InvStdDev come from card nodes of their own",
          "[compile]") {
    OnnxBuilder b(17);
    b.input("x", {std::int64_t(3), std::int64_t(4), std::int64_t(5)})
        .floats("gamma", {4, 5}, pattern(20, 7))
        .floats("beta", {4, 5}, pattern(20, 8))
        .node("LayerNormalization", {"x", "gamma", "beta"}, {"y", "mean", "inv_std"}, "ln",
              {{"axis", std::int64_t(1)}, {"epsilon", 0.01f}})
        .output("y", 3)
        .output("mean", 3)
        .output("inv_std", 3);
    const tpu_onnx::Compiled c = compile(b, "compiler_ln_stats.onnx");
    std::vector<std::string> ops;
    for (const tpumodel::Node &n : c.model.nodes) {
        ops.push_back(n.op + "@" + n.card_op);
        INFO(n.describe() << ": " << n.reason);
        CHECK(n.placement == tpumodel::Placement::Card);
    }
    CHECK(ops == std::vector<std::string>{"LayerNormalization@layer_norm", "ReduceMean@mean",
                                          "Sub@elementwise", "Mul@elementwise", "ReduceMean@mean",
                                          "Add@elementwise", "Sqrt@unary", "Reciprocal@unary"});
    CHECK(node_named(c.model, "ln").outputs.size() == 1);
}

TEST_CASE("a Gemm the card's dense cannot take becomes card ops it is made of", "[compile]") {
    OnnxBuilder b(13);
    b.input("a", {std::int64_t(6), std::int64_t(3)})
        .input("b", {std::int64_t(6), std::int64_t(4)})
        .floats("c", {1, 4}, {1.0f, 2.0f, 3.0f, 4.0f})
        .node("Gemm", {"a", "b", "c"}, {"y"}, "gemm",
              {{"transA", std::int64_t(1)}, {"alpha", 0.5f}, {"beta", 2.0f}})
        .output("y", 2);
    const tpu_onnx::Compiled c = compile(b, "compiler_gemm_split.onnx");
    std::vector<std::string> ops;
    for (const tpumodel::Node &n : c.model.nodes) {
        ops.push_back(n.op + "@" + n.card_op);
        INFO(n.describe() << ": " << n.reason);
        CHECK(n.placement == tpumodel::Placement::Card);
    }
    // A transposed, A'B, times alpha, plus C times beta (folded: C is a constant).
    CHECK(ops == std::vector<std::string>{"Transpose@permute", "MatMul@matmul", "Mul@elementwise",
                                          "Add@elementwise"});
    const tpumodel::Tensor &scaled_c = c.model.tensors[c.model.nodes[3].inputs[1]];
    REQUIRE(scaled_c.constant);
    std::vector<float> values(4);
    std::memcpy(values.data(), scaled_c.data.data(), 16);
    CHECK(values == std::vector<float>{2.0f, 4.0f, 6.0f, 8.0f});
}

TEST_CASE("a BatchNormalization on its own becomes elementwise ops on the card", "[compile]") {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t(4), std::int64_t(2)})
        .input("mean", {std::int64_t(2)})
        .floats("scale", {2}, {2.0f, 0.5f})
        .floats("shift", {2}, {1.0f, -1.0f})
        .floats("mean_c", {2}, {0.5f, 3.0f})
        .floats("var", {2}, {3.99f, 0.24f})
        .node("BatchNormalization", {"x", "scale", "shift", "mean_c", "var"}, {"y"}, "bn",
              {{"epsilon", 0.01f}})
        .node("BatchNormalization", {"y", "scale", "shift", "mean", "var"}, {"z"}, "bn_input",
              {{"epsilon", 0.01f}})
        .output("z", 2);
    const tpu_onnx::Compiled c = compile(b, "compiler_bn_split.onnx");
    std::vector<std::string> ops;
    for (const tpumodel::Node &n : c.model.nodes) {
        ops.push_back(n.op + "@" + n.card_op);
        INFO(n.describe() << ": " << n.reason);
        CHECK(n.placement == tpumodel::Placement::Card);
    }
    // Constant vectors: Y = X k + b'. A mean computed at run time: the ops on [C] columns.
    CHECK(ops == std::vector<std::string>{"Mul@elementwise", "Add@elementwise", "Reshape@view",
                                          "Reshape@view", "Reshape@view", "Reshape@view",
                                          "Add@elementwise", "Sqrt@unary", "Reciprocal@unary",
                                          "Mul@elementwise", "Sub@elementwise", "Mul@elementwise",
                                          "Add@elementwise"});
    // k = scale / sqrt(var + epsilon) = {1, 1}; b' = shift - mean k = {0.5, -4}.
    std::vector<float> k(2), shift(2);
    std::memcpy(k.data(), c.model.tensors[c.model.nodes[0].inputs[1]].data.data(), 8);
    std::memcpy(shift.data(), c.model.tensors[c.model.nodes[1].inputs[1]].data.data(), 8);
    CHECK(k[0] == Approx(1.0f));
    CHECK(k[1] == Approx(1.0f));
    CHECK(shift[0] == Approx(0.5f));
    CHECK(shift[1] == Approx(-4.0f));
}

TEST_CASE("Abs, ReduceSumSquare and a reduction of no axis run as card ops", "[compile]") {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t(3), std::int64_t(4)})
        .ints("no_axes", {0}, {})
        .node("Abs", {"x"}, {"a"}, "abs")
        .node("ReduceSumSquare", {"a"}, {"s"}, "sum_square",
              {{"axes", std::vector<std::int64_t>{1}}, {"keepdims", std::int64_t(1)}})
        .node("ReduceSum", {"s", "no_axes"}, {"y"}, "noop",
              {{"noop_with_empty_axes", std::int64_t(1)}})
        .output("y", 2);
    const tpu_onnx::Compiled c = compile(b, "compiler_decompose.onnx");
    std::vector<std::string> ops;
    for (const tpumodel::Node &n : c.model.nodes) {
        ops.push_back(n.op + "@" + n.card_op);
        INFO(n.describe() << ": " << n.reason);
        CHECK(n.placement == tpumodel::Placement::Card);
    }
    // Abs: Neg (a Mul by -1), Relu, Relu, Add; ReduceSumSquare: Mul, ReduceSum; the no-op: a view.
    CHECK(ops == std::vector<std::string>{"Mul@elementwise", "Relu@unary", "Relu@unary",
                                          "Add@elementwise", "Mul@elementwise",
                                          "ReduceSum@reduce_axis", "ReduceSum@view"});
}

TEST_CASE("a Slice goes to the card when it cuts one axis with step 1", "[compile]") {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t(4), std::int64_t(6), std::int64_t(5)})
        .ints("one_start", {1}, {1})
        .ints("one_end", {1}, {3})
        .ints("axis1", {1}, {1})
        .ints("two_start", {2}, {0, 1})
        .ints("two_end", {2}, {2, 3})
        .ints("axes01", {2}, {0, 1})
        .ints("from0", {1}, {0})
        .ints("to6", {1}, {6})
        .ints("step2", {1}, {2})
        .node("Relu", {"x"}, {"r"}, "relu")
        .node("Slice", {"r", "one_start", "one_end", "axis1"}, {"a"}, "one")
        .node("Slice", {"r", "two_start", "two_end", "axes01"}, {"b"}, "two")
        .node("Slice", {"r", "from0", "to6", "axis1", "step2"}, {"c"}, "stepped")
        .output("a", 3)
        .output("b", 3)
        .output("c", 3);
    const tpu_onnx::Compiled c = compile(b, "compiler_slice.onnx");
    CHECK(node_named(c.model, "one").card_op == "slice_copy");
    const std::string r = tpu_onnx::report(c);
    CHECK_THAT(r, Catch::Contains("node 'two' (Slice): a slice along several axes: the card "
                                  "copies along one"));
    CHECK_THAT(r, Catch::Contains("node 'stepped' (Slice): a step of 2: the card copies runs of "
                                  "neighbours"));
}

TEST_CASE("nodes the card cannot take run on the CPU, each with its reason", "[compile]") {
    OnnxBuilder b(17);
    b.input("a", {std::int64_t(2), std::int64_t(3)})
        .input("b", {std::int64_t(2), std::int64_t(3)})
        .floats("scale", {2, 1}, {2.0f, 3.0f})
        .floats("left", {2, 3}, pattern(6, 4))
        .floats("two", {1}, {2.0f})
        .node("Pow", {"a", "two"}, {"e"}, "pow")
        .node("Concat", {"e", "left"}, {"c"}, "concat", {{"axis", std::int64_t(1)}})
        .node("Mul", {"c", "scale"}, {"m"}, "mul")
        .node("Tanh", {"m"}, {"y"}, "tanh")
        .output("y", 2);
    const tpu_onnx::Compiled c = compile(b, "compiler_cpu.onnx");
    const std::string r = tpu_onnx::report(c);
    CHECK_THAT(r, Catch::Contains("node 'pow' (Pow): no card op for Pow"));
    CHECK_THAT(r, Catch::Contains("node 'concat' (Concat): a constant operand: the card copies "
                                  "tensors it holds"));
    CHECK_THAT(r, Catch::Contains("node 'mul' (Mul): shapes [2, 6] and [2, 1]: a constant "
                                  "broadcast other than one row"));
    CHECK_THAT(r, Catch::Contains("Tanh                        1  card      unary"));
    CHECK_THAT(r, Catch::Contains("4 nodes run: 1 on the card, 3 on the CPU"));
}

TEST_CASE("Conv with asymmetric padding falls back to the CPU, Softmax over axis 0 runs on the "
          "card between two transposes",
          "[compile]") {
    OnnxBuilder b(17);
    b.input("x", {std::int64_t(1), std::int64_t(1), std::int64_t(4), std::int64_t(4)})
        .floats("w", {1, 1, 2, 2}, {1, 2, 3, 4})
        .ints("flat", {2}, {16, 1})
        .node("Conv", {"x", "w"}, {"c"}, "conv", {{"pads", std::vector<std::int64_t>{0, 0, 1, 1}}})
        .node("Reshape", {"c", "flat"}, {"f"}, "reshape")
        .node("Softmax", {"f"}, {"y"}, "sm", {{"axis", std::int64_t(0)}})
        .output("y", 2);
    const tpu_onnx::Compiled c = compile(b, "compiler_cpu_nn.onnx");
    const std::string r = tpu_onnx::report(c);
    CHECK_THAT(r, Catch::Contains("node 'conv' (Conv): asymmetric padding [0, 0, 1, 1]: the card "
                                  "pads both sides alike"));
    CHECK_THAT(r, Catch::Contains("1 (Log)Softmax nodes moved to the last axis"));
    const tpumodel::Node &sm = node_named(c.model, "sm");
    CHECK(sm.card_op == "softmax");
    CHECK(sm.get_int("axis", 0) == -1);
    CHECK(node_named(c.model, "sm_axis_last").get_ints("perm", {}) ==
          std::vector<std::int64_t>{1, 0});
    CHECK(node_named(c.model, "sm_axis_back").card_op == "permute");
}

TEST_CASE("Concat and Gather of constant indices run on the card as slice copies", "[compile]") {
    OnnxBuilder b(17);
    b.input("a", {std::int64_t(2), std::int64_t(3)})
        .input("b", {std::int64_t(2), std::int64_t(2)})
        .ints("rows", {3}, {2, -1, 0})
        .node("Concat", {"a", "b"}, {"c"}, "concat", {{"axis", std::int64_t(-1)}})
        .node("Gather", {"c", "rows"}, {"y"}, "gather", {{"axis", std::int64_t(1)}})
        .output("y", 2);
    const tpu_onnx::Compiled c = compile(b, "compiler_copies.onnx");
    CHECK(node_named(c.model, "concat").card_op == "slice_copy");
    CHECK(node_named(c.model, "gather").card_op == "slice_copy");
}

TEST_CASE("reductions over one run of neighbouring axes run on the card", "[compile]") {
    OnnxBuilder b(17);
    b.input("x", {std::int64_t(2), std::int64_t(3), std::int64_t(4), std::int64_t(5)})
        .node("ReduceMean", {"x"}, {"m"}, "middle", {{"axes", std::vector<std::int64_t>{1, 2}}})
        .node("ReduceMax", {"x"}, {"all"}, "all")
        .node("ReduceMax", {"x"}, {"gap"}, "gap", {{"axes", std::vector<std::int64_t>{0, 2}}})
        .output("m", 4)
        .output("all", 4)
        .output("gap", 4);
    const tpu_onnx::Compiled c = compile(b, "compiler_reduce.onnx");
    CHECK(node_named(c.model, "middle").card_op == "mean");
    CHECK(node_named(c.model, "all").card_op == "reduce_axis");
    CHECK(node_named(c.model, "gap").placement == tpumodel::Placement::Cpu);
    CHECK_THAT(tpu_onnx::report(c), Catch::Contains("node 'gap' (ReduceMax): axes that are not "
                                                    "one run of neighbours"));
}

TEST_CASE("Neg, scalar constants, a constant first operand, LayerNormalization over two axes "
          "and a Cast to the same type go on the card",
          "[compile]") {
    OnnxBuilder b(17);
    b.input("x", {std::int64_t(2), std::int64_t(3), std::int64_t(4)})
        .floats("two", {}, {2.0f})
        .floats("row", {4}, {1, 2, 3, 4})
        .floats("scale", {3, 4}, pattern(12, 3))
        .floats("bias", {3, 4}, pattern(12, 5))
        .node("Neg", {"x"}, {"n"}, "neg")
        .node("Add", {"n", "two"}, {"a"}, "add_scalar")
        .node("Mul", {"row", "a"}, {"m"}, "mul_first")
        .node("LayerNormalization", {"m", "scale", "bias"}, {"l"}, "ln",
              {{"axis", std::int64_t(1)}})
        .node("Cast", {"l"}, {"y"}, "cast", {{"to", std::int64_t(1)}})
        .output("y", 3);
    const tpu_onnx::Compiled c = compile(b, "compiler_card_forms.onnx");
    CHECK(node_named(c.model, "neg").op == "Mul");
    CHECK(node_named(c.model, "neg").card_op == "elementwise");
    CHECK(node_named(c.model, "add_scalar").card_op == "elementwise");
    CHECK(node_named(c.model, "mul_first").card_op == "elementwise");
    CHECK(c.model.tensors[node_named(c.model, "mul_first").inputs[0]].name == "a");
    CHECK(node_named(c.model, "ln").card_op == "layer_norm");
    CHECK(node_named(c.model, "cast").card_op == "view");
    CHECK_THAT(tpu_onnx::report(c), Catch::Contains("5 nodes run: 5 on the card, 0 on the CPU"));
}

TEST_CASE("every card op the placement names is registered in libtpurt", "[compile]") {
    for (const std::string &op : tpu_onnx::card_ops()) {
        INFO(op);
        CHECK(tpurt::find_op(op) != nullptr);
    }
}

TEST_CASE("a compiled model survives its .tpumodel file", "[compile]") {
    const tpu_onnx::Compiled c = compile(cnn(), "compiler_cnn_file.onnx", {{"x", {1, 2, 6, 6}}});
    const tpumodel::Model r = tpumodel::parse(tpumodel::serialise(c.model), "cnn.tpumodel");
    REQUIRE(r.nodes.size() == c.model.nodes.size());
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        CHECK(r.nodes[i].card_op == c.model.nodes[i].card_op);
        CHECK(r.nodes[i].inputs == c.model.nodes[i].inputs);
    }
    CHECK(r.producer == "tpu-compile from compiler_cnn_file.onnx");
}
