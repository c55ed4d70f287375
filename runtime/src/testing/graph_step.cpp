// SPDX-License-Identifier: MIT
// graph_step.cpp - the capture tests' training-like step (graph_step.hpp).
#include "tpurt/testing/graph_step.hpp"

#include "tpurt/testing/test_patterns.hpp"
#include "tpurt/tpurt.hpp"

#include <bit>

namespace tpurt {

namespace {

std::vector<float> one_hot(std::size_t rows, std::size_t classes, std::uint64_t seed) {
    std::vector<float> values(rows * classes, 0.0f);
    for (std::size_t r = 0; r < rows; ++r)
        values[r * classes + (r * 3 + seed) % classes] = 1.0f;
    return values;
}

} // namespace

GraphStep::GraphStep(Device d)
    : dev(d), x(Tensor::empty(dev, DType::Fp32, {N, H, W, C})),
      cw(Tensor::from_host<float>(dev, random_fp32(9 * C * F, 1), {3, 3, C, F})),
      cb(Tensor::from_host<float>(dev, random_fp32(F, 2), {F})),
      s(Tensor::empty(dev, DType::Fp32, {N, H, W, F})),
      p(Tensor::empty(dev, DType::Fp32, {N, H / 2, W / 2, F})),
      dw(Tensor::from_host<float>(dev, random_fp32(128 * CLASSES, 3), {128, CLASSES})),
      db(Tensor::from_host<float>(dev, random_fp32(CLASSES, 4), {CLASSES})),
      logits(Tensor::empty(dev, DType::Fp32, {N, CLASSES})),
      targets(Tensor::empty(dev, DType::Fp32, {N, CLASSES})),
      loss(Tensor::empty(dev, DType::Fp32, {N})),
      grad(Tensor::empty(dev, DType::Fp32, {N, CLASSES})),
      ddw(Tensor::from_host<float>(dev, std::vector<float>(128 * CLASSES, 0.0f), {128, CLASSES})),
      ddb(Tensor::empty(dev, DType::Fp32, {CLASSES})),
      dh(Tensor::empty(dev, DType::Fp32, {N, 128})),
      m(Tensor::from_host<float>(dev, std::vector<float>(128 * CLASSES, 0.0f), {128 * CLASSES})),
      hp(Tensor::empty(dev, DType::Fp32, {8})) {}

void GraphStep::queue(Stream &stream) {
    sgd_momentum_step(stream, dw.reshape({128 * CLASSES}), ddw.reshape({128 * CLASSES}), m, hp);
    conv2d_layer(stream, x, cw, &cb, s, {1, 1, 1, 1}, Activation::Relu);
    pool2d(stream, PoolOp::Max, s, p, 2, 2, 2, 2);
    const Tensor flat = p.reshape({N, 128});
    dense(stream, flat, dw, &db, logits, Activation::None);
    softmax_cross_entropy(stream, logits, targets, loss, grad, 1.0f / N);
    matmul_tn(stream, flat, grad, ddw);
    column_sums(stream, grad, ddb);
    matmul_nt(stream, grad, dw, dh);
}

void GraphStep::write_inputs(Stream &stream, std::uint64_t seed) {
    host_batch = random_fp32(N * H * W * C, 100 + seed);
    host_targets = one_hot(N, CLASSES, seed);
    stream.copy_from_host(x, host_batch.data(), host_batch.size() * 4);
    stream.copy_from_host(targets, host_targets.data(), host_targets.size() * 4);
}

std::vector<std::uint32_t> GraphStep::result_bits() const {
    std::vector<std::uint32_t> out;
    for (const Tensor *t : {&s, &p, &logits, &loss, &grad, &ddw, &ddb, &dh, &dw, &m})
        for (float f : t->to_vector<float>())
            out.push_back(std::bit_cast<std::uint32_t>(f));
    return out;
}

} // namespace tpurt
