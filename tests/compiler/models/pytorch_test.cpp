// SPDX-License-Identifier: MIT
// pytorch_test.cpp - models exported by PyTorch itself (pytorch_models.py, Debian's
// python3-torch, run at test time with seeded weights): an MLP, the Fashion-MNIST CNN,
// torchvision's ResNet-18 and a transformer encoder layer compile, and the compiled models run by
// the CPU executor give PyTorch's outputs within 1e-5 + 1e-4 |ref|.
#include "onnx_builder.hpp"
#include "pytorch_models.hpp"

#include <tpu_onnx/compile.hpp>
#include <tpumodel/cpu_executor.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using namespace compiler_test;

TEST_CASE("PyTorch's exports compile and compute what PyTorch computes", "[pytorch]") {
    for (const PytorchModel &p : pytorch_models()) {
        INFO(p.name << " (" << p.onnx << ")");
        tpu_onnx::CompileOptions options;
        options.input_shapes = {{p.input, p.shape}};
        const tpu_onnx::Compiled c = tpu_onnx::compile_file(p.onnx, options);
        tpumodel::Tensor x = float_tensor(p.shape, p.x);
        x.name = p.input;
        const std::vector<tpumodel::Tensor> out = tpumodel::cpu::run_model(c.model, {x});
        REQUIRE(out.size() == 1);
        const std::vector<float> y = float_values(out[0]);
        REQUIRE(y.size() == p.y.size());
        std::size_t off = 0;
        for (std::size_t i = 0; i < y.size(); ++i)
            off += !(std::fabs(y[i] - p.y[i]) <= 1e-5f + 1e-4f * std::fabs(p.y[i]));
        CHECK(off == 0);
    }
}
