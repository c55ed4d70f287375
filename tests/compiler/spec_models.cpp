// SPDX-License-Identifier: MIT
// spec_models.cpp - model specs trained on the digits and checkpointed (spec_models.hpp).
#include "spec_models.hpp"

#include <tpu_nn/spec.hpp>

#include <cstdio>
#include <string>

namespace compiler_test {

namespace {

std::string exact(float v) { // a float's text that reads back as the same float
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}

} // namespace

const std::vector<std::string> &digit_specs() {
    static const std::vector<std::string> specs{
        "cnn-8x8x1-c8k5-c16k5-d32-10", "cnn-8x8x1-c8-c16-c16-d32-10", "cnn-8x8x1-c8-res-res-d16-10",
        "cnn-8x8x1-conv8-conv8k3s2g2-gelu-avg3s2p1-ln-flat-tanh-d16-sigmoid-ln-10"};
    return specs;
}

const Digits &digits() {
    static const Digits d = [] {
        const tpu_data::Dataset all = tpu_data::load_digits(tpu_data::datasets_dir() + "/sklearn");
        Digits s{tpu_data::slice(all, 0, all.count * 5 / 6),
                 tpu_data::slice(all, all.count * 5 / 6, all.count),
                 {}};
        s.norm = tpu_data::compute_normalization(s.train);
        return s;
    }();
    return d;
}

std::vector<float> SpecModel::logits(std::size_t count) {
    const Digits &d = digits();
    std::vector<float> x(d.test.features.begin(),
                         d.test.features.begin() + std::ptrdiff_t(count * d.test.sample_size()));
    for (float &v : x)
        v = (v - d.norm.mean) / d.norm.stddev;
    return cpu.forward(x.data(), count);
}

SpecModel trained_spec_model(const std::string &spec) {
    const Digits &d = digits();
    SpecModel m{tpu_nn::CpuExecutor(tpu_nn::graph_from_spec(spec), 7), {}};
    constexpr std::size_t batch = 32, steps = 60;
    const std::size_t size = d.train.sample_size();
    for (std::size_t step = 0; step < steps; ++step) {
        const std::size_t first = step * batch % (d.train.count - batch);
        std::vector<float> x(d.train.features.begin() + std::ptrdiff_t(first * size),
                             d.train.features.begin() + std::ptrdiff_t((first + batch) * size));
        for (float &v : x)
            v = (v - d.norm.mean) / d.norm.stddev;
        m.cpu.forward(x.data(), batch);
        m.cpu.backward(m.cpu.loss(d.train.labels.data() + first).dlogits);
        for (std::size_t p = 0; p < m.cpu.values().size(); ++p)
            for (std::size_t i = 0; i < m.cpu.values()[p].size(); ++i)
                m.cpu.values()[p][i] -= 0.05f * m.cpu.grads()[p][i];
    }
    m.saved.model = m.cpu.graph().name();
    m.saved.notes["input.mean"] = exact(d.norm.mean);
    m.saved.notes["input.stddev"] = exact(d.norm.stddev);
    if (spec.starts_with("cnn-")) // as tpu-train notes it: the image's HxWxC
        m.saved.notes["input.shape"] = spec.substr(4, spec.find('-', 4) - 4);
    m.cpu.save(m.saved);
    return m;
}

} // namespace compiler_test
