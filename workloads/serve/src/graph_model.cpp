// SPDX-License-Identifier: MIT
// graph_model.cpp - a compiled model's signature from its graph, and its runs over the batch
// axis in chunks of the compiled batch (graph_model.hpp).
#include "tpu_serve/graph_model.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace tpu_serve {

namespace {

const tpumodel::Tensor &checked(const tpumodel::Tensor &t, const char *what) {
    if (t.dtype != tpumodel::DType::Float)
        throw std::invalid_argument(std::string(what) + " '" + t.name + "' is " +
                                    tpumodel::dtype_name(t.dtype) +
                                    ": tpu-serve serves float32 tensors");
    if (t.layout != tpumodel::Layout::Plain || t.shape.size() < 2)
        throw std::invalid_argument(std::string(what) + " '" + t.name + "' " + t.shape_string() +
                                    " has no batch axis ahead of its sample's dimensions");
    return t;
}

std::vector<std::size_t> sample_dims(const tpumodel::Tensor &t) {
    return {t.shape.begin() + 1, t.shape.end()};
}

std::size_t product(const std::vector<std::size_t> &dims) {
    std::size_t n = 1;
    for (std::size_t d : dims)
        n *= d;
    return n;
}

} // namespace

ModelSignature graph_signature(const tpumodel::Model &m, const std::string &name) {
    if (m.inputs.size() != 1 || m.outputs.size() != 1)
        throw std::invalid_argument("the model has " + std::to_string(m.inputs.size()) +
                                    " inputs and " + std::to_string(m.outputs.size()) +
                                    " outputs: tpu-serve serves models of one input and one "
                                    "output");
    const tpumodel::Tensor &in = checked(m.tensors[m.inputs[0]], "input");
    const tpumodel::Tensor &out = checked(m.tensors[m.outputs[0]], "output");
    if (in.shape[0] != out.shape[0] || in.shape[0] < 1)
        throw std::invalid_argument("input '" + in.name + "' " + in.shape_string() +
                                    " and output '" + out.name + "' " + out.shape_string() +
                                    " do not share a batch axis");
    ModelSignature sig;
    sig.name = name;
    sig.platform = std::string("tpu-stack-") + tpumodel::precision_name(m.precision);
    sig.input = in.name;
    sig.output = out.name;
    sig.input_dims = sample_dims(in);
    sig.output_dims = sample_dims(out);
    sig.features = product(sig.input_dims);
    sig.classes = product(sig.output_dims);
    return sig;
}

GraphRunner::GraphRunner(const tpumodel::Model &m, RunModel run)
    : run_(std::move(run)), input_(m.tensors.at(m.inputs.at(0))) {
    const ModelSignature sig = graph_signature(m, "");
    batch_ = std::size_t(input_.shape[0]);
    features_ = sig.features;
    classes_ = sig.classes;
    input_.data.clear();
}

std::vector<float> GraphRunner::run(const float *samples, std::size_t rows) const {
    std::vector<float> out(rows * classes_);
    for (std::size_t first = 0; first < rows; first += batch_) {
        const std::size_t n = std::min(batch_, rows - first);
        tpumodel::Tensor x = input_;
        x.data.assign(batch_ * features_ * sizeof(float), 0); // the padding's samples are zeros
        std::memcpy(x.data.data(), samples + first * features_, n * features_ * sizeof(float));
        const std::vector<tpumodel::Tensor> y = run_({x});
        std::memcpy(out.data() + first * classes_, y.at(0).data.data(),
                    n * classes_ * sizeof(float));
    }
    return out;
}

} // namespace tpu_serve
