// SPDX-License-Identifier: MIT
// calibrate.cpp - the ranges an int8 model is quantised with (passes.hpp): the compiled model
// run in fp32 on the CPU over the calibration samples, and each card matmul or convolution
// of float data by constant weights (dense, conv2d_layer: the layers the card runs in int8)
// given the attribute `calibrated_max`, the largest |x| its data input took, as
// workloads/quant calibrates the stack's own networks. The card's executor turns it into the
// layer's activation scale (tpu_nn::activation_scale: max / 127).
#include "passes.hpp"

#include <tpumodel/cpu_executor.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tpu_onnx {

void calibrate(tpumodel::Model &m, const std::vector<float> &samples) {
    if (m.inputs.size() != 1 || m.tensors[m.inputs[0]].dtype != tpumodel::DType::Float)
        throw CompileError("--calibrate: calibration takes models of one float32 input; this "
                           "one has " +
                           std::to_string(m.inputs.size()));
    tpumodel::Tensor input = m.tensors[m.inputs[0]];
    const std::size_t batch = std::size_t(input.shape.at(0));
    const std::size_t sample = std::size_t(input.element_count()) / batch;
    if (samples.empty() || samples.size() % sample != 0)
        throw CompileError("--calibrate: " + std::to_string(samples.size()) +
                           " floats are not whole samples of input '" + input.name + "' " +
                           input.shape_string() + " (" + std::to_string(sample) +
                           " floats a sample, batch axis first)");
    const std::size_t count = samples.size() / sample;
    std::vector<float> max_abs(m.nodes.size(), 0.0f);
    for (std::size_t first = 0; first < count; first += batch) {
        // A batch of samples; a short last one padded with its last sample (no new values).
        std::vector<float> x(batch * sample);
        for (std::size_t r = 0; r < batch; ++r)
            std::copy_n(samples.begin() + std::ptrdiff_t(std::min(first + r, count - 1) * sample),
                        sample, x.begin() + std::ptrdiff_t(r * sample));
        input.data.resize(x.size() * sizeof(float));
        std::memcpy(input.data.data(), x.data(), input.data.size());
        const std::vector<std::optional<tpumodel::Tensor>> values =
            tpumodel::cpu::run_values(m, {input});
        for (std::size_t i = 0; i < m.nodes.size(); ++i) {
            if (!tpumodel::int8_layer_form(m, m.nodes[i]))
                continue;
            const tpumodel::Tensor &t = *values[m.nodes[i].inputs[0]];
            for (std::size_t k = 0; k < t.element_count(); ++k) {
                float v = 0;
                std::memcpy(&v, t.data.data() + k * sizeof v, sizeof v);
                if (!std::isfinite(v))
                    throw CompileError("--calibrate: " + m.nodes[i].describe() +
                                       " sees a value that is not finite");
                max_abs[i] = std::max(max_abs[i], std::fabs(v));
            }
        }
    }
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        if (tpumodel::int8_layer_form(m, m.nodes[i]))
            m.nodes[i].set("calibrated_max", max_abs[i]);
}

} // namespace tpu_onnx
