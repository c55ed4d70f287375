// SPDX-License-Identifier: MIT
// cpu_kernels_test.cpp - the CPU executor on models read from files rather than compiled: nodes
// the kernels cannot run in the form a file gives them are refused with KernelError naming the
// node and the reason, never run out of bounds.
#include <tpumodel/cpu_executor.hpp>
#include <tpumodel/cpu_kernels.hpp>

#include <catch2/catch.hpp>

using namespace tpumodel;

namespace {

Tensor floats(const std::string &name, std::vector<std::int64_t> shape, Layout layout,
              bool constant) {
    Tensor t{name, DType::Float, layout, std::move(shape), constant, {}};
    t.data.assign(t.element_count() * 4, 0);
    return t;
}

// x [1, 3, 3, 2] NHWC -> Conv (w [1, 1, 2, 2] HWIO, bias b) -> y [1, 3, 3, 2].
Model conv(Tensor bias, Tensor weights) {
    Model m;
    const std::uint32_t x = m.add_tensor(floats("x", {1, 3, 3, 2}, Layout::Nhwc, false));
    const std::uint32_t w = m.add_tensor(std::move(weights));
    const std::uint32_t b = m.add_tensor(std::move(bias));
    const std::uint32_t y = m.add_tensor(floats("y", {1, 3, 3, 2}, Layout::Nhwc, false));
    m.nodes.push_back({"conv", "Conv", Placement::Card, "conv2d_layer", "", {}, {x, w, b}, {y}});
    m.inputs = {x};
    m.outputs = {y};
    return m;
}

std::string refusal(const Model &m) {
    Tensor x = m.tensors[m.inputs[0]];
    x.data.assign(x.element_count() * dtype_size(x.dtype), 0);
    try {
        cpu::run_model(m, {x});
    } catch (const cpu::KernelError &e) {
        return e.what();
    }
    return "ran";
}

} // namespace

TEST_CASE("the CPU executor refuses nodes its kernels cannot run", "[cpu]") {
    const Tensor w = floats("w", {1, 1, 2, 2}, Layout::Hwio, true);
    REQUIRE(refusal(conv(floats("b", {2}, Layout::Plain, true), w)) == "ran");
    CHECK(refusal(conv(floats("b", {5}, Layout::Plain, true), w)) ==
          "node 'conv' (Conv): its bias does not hold one value per filter");
    CHECK(refusal(conv(floats("b", {2}, Layout::Plain, true),
                       floats("w", {2, 2}, Layout::Hwio, true))) ==
          "node 'conv' (Conv): its weights are not 4-D in the HWIO layout");

    Model missing = conv(floats("b", {2}, Layout::Plain, true), w);
    missing.nodes[0].inputs[1] = no_tensor;
    CHECK(refusal(missing) == "node 'conv' (Conv): its input 1 is missing");

    Model empty;
    const std::uint32_t a = empty.add_tensor(floats("a", {2, 0}, Layout::Plain, false));
    const std::uint32_t b = empty.add_tensor(floats("b", {0, 3}, Layout::Plain, true));
    const std::uint32_t c = empty.add_tensor(floats("c", {2, 3}, Layout::Plain, false));
    empty.nodes.push_back({"mm", "MatMul", Placement::Cpu, "", "", {}, {a, b}, {c}});
    empty.inputs = {a};
    empty.outputs = {c};
    CHECK(refusal(empty) == "node 'mm' (MatMul): empty operands");
}
