// SPDX-License-Identifier: MIT
// gradient_check.cpp - the gradient ops against central finite differences of the forward ops
// they differentiate, both run by name on the device in fp32 on small shapes: for a loss
// L = sum(dy * forward(inputs)) (softmax_cross_entropy: grad_scale * sum(loss)), each input
// element moved by +-h, (L+ - L-) / (2h) against the gradient op's output. L is summed in
// double from the card's fp32 outputs, so its rounding error is about 1e-7 |L|, 1e-5 |L| / h
// after the division; smooth functions add h^2 / 6 times their third derivative. Tolerance:
// 2e-3 + 1e-2 |gradient| for h = 1e-2 (1e-3 for max pooling, whose inputs are 0.1 apart).
#include "conformance.hpp"

#include <tpurt/ops/op_registry.hpp>
#include <tpurt/tensor.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <numeric>
#include <random>

using namespace conformance;

namespace {

// An fp32 operand: its shape and values (empty for an output, read back after the launch).
struct Arg {
    Shape shape;
    std::vector<float> values;
};

std::size_t count(const Shape &s) {
    return std::accumulate(s.begin(), s.end(), std::size_t{1}, std::multiplies<>());
}

// Runs `op` on fp32 tensors of `args` with `attributes`; returns every operand's values after.
std::vector<std::vector<float>>
run(const std::string &op, const std::vector<Arg> &args,
    const std::vector<std::pair<std::string, std::string>> &attributes = {}) {
    tpurt::Device &dev = *devices()[0].device;
    std::vector<tpurt::Tensor> tensors;
    std::vector<const tpurt::Tensor *> operands;
    tensors.reserve(args.size());
    for (const Arg &a : args) {
        tensors.push_back(tpurt::Tensor::empty(dev, DType::Fp32, a.shape));
        std::vector<float> v = a.values;
        v.resize(count(a.shape), 0.0f);
        tensors.back().copy_from_host(v);
        operands.push_back(&tensors.back());
    }
    std::vector<tpurt::OpAttribute> attrs;
    for (const auto &[name, value] : attributes)
        attrs.push_back({name, value});
    tpurt::prepare_op(dev, op, operands, attrs).run(dev);
    std::vector<std::vector<float>> out;
    for (const tpurt::Tensor &t : tensors)
        out.push_back(t.to_vector<float>());
    return out;
}

std::vector<float> random_values(std::size_t n, double lo, double hi, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<float> v(n);
    for (float &x : v)
        x = static_cast<float>(d(rng));
    return v;
}

double dot(const std::vector<float> &a, const std::vector<float> &b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        s += double{a[i]} * b[i];
    return s;
}

// Central differences of `loss` at x, element by element, against `analytic`.
void check_gradient(const char *what, std::vector<float> x, const std::vector<float> &analytic,
                    const std::function<double(const std::vector<float> &)> &loss,
                    float h = 1e-2f) {
    REQUIRE(analytic.size() == x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float x0 = x[i];
        x[i] = x0 + h;
        const float up = x[i];
        const double plus = loss(x);
        x[i] = x0 - h;
        const float down = x[i];
        const double minus = loss(x);
        x[i] = x0;
        const double numeric = (plus - minus) / (double{up} - double{down});
        INFO(what << "[" << i << "]: the op says " << analytic[i] << ", finite differences "
                  << numeric);
        REQUIRE(std::fabs(numeric - analytic[i]) <= 2e-3 + 1e-2 * std::fabs(numeric));
    }
}

} // namespace

TEST_CASE("activation gradients equal finite differences of unary()", "[conformance][gradient]") {
    const Shape s{3, 7};
    const std::vector<float> x = random_values(count(s), -3, 3, 1),
                             dy = random_values(count(s), -1, 1, 2);
    for (const char *f : {"relu", "sigmoid", "tanh", "gelu"}) {
        INFO(f);
        const auto forward = [&](const std::vector<float> &v) {
            return run("unary", {{s, v}, {s, {}}}, {{"function", f}})[1];
        };
        // ReLU and GELU take the forward input, sigmoid and tanh the forward output.
        const bool from_output = std::string(f) == "sigmoid" || std::string(f) == "tanh";
        const std::vector<float> saved = from_output ? forward(x) : x;
        const std::vector<float> dx =
            run("activation_grad", {{s, saved}, {s, dy}, {s, {}}}, {{"function", f}})[2];
        check_gradient(f, x, dx, [&](const std::vector<float> &v) { return dot(dy, forward(v)); });
    }
}

TEST_CASE("layer_norm_grad equals finite differences of layer_norm", "[conformance][gradient]") {
    const std::size_t rows = 3, cols = 5;
    const Shape s{rows, cols}, c{cols};
    const std::vector<float> x = random_values(rows * cols, -2, 2, 3),
                             gamma = random_values(cols, 0.5, 2, 4),
                             beta = random_values(cols, -1, 1, 5),
                             dy = random_values(rows * cols, -1, 1, 6);
    const auto grads =
        run("layer_norm_grad", {{s, x}, {c, gamma}, {s, dy}, {s, {}}, {c, {}}, {c, {}}});
    const auto loss = [&](const std::vector<float> &xv, const std::vector<float> &g,
                          const std::vector<float> &b) {
        return dot(dy, run("layer_norm", {{s, xv}, {c, g}, {c, b}, {s, {}}})[3]);
    };
    check_gradient("dx", x, grads[3],
                   [&](const std::vector<float> &v) { return loss(v, gamma, beta); });
    check_gradient("dgamma", gamma, grads[4],
                   [&](const std::vector<float> &v) { return loss(x, v, beta); });
    check_gradient("dbeta", beta, grads[5],
                   [&](const std::vector<float> &v) { return loss(x, gamma, v); });
}

TEST_CASE("pooling gradients equal finite differences of pool2d", "[conformance][gradient]") {
    const Shape xs{1, 5, 6, 2};
    // Distinct values 0.1 apart, so moving one by 1e-3 never changes a window's maximum.
    std::vector<float> x(count(xs));
    std::iota(x.begin(), x.end(), 0.0f);
    std::shuffle(x.begin(), x.end(), std::mt19937_64(7));
    for (float &v : x)
        v = v * 0.1f - 3.0f;
    for (const bool padded : {false, true}) {
        const std::vector<std::pair<std::string, std::string>> window{
            {"window_h", "3"},
            {"window_w", "2"},
            {"stride_h", "2"},
            {"stride_w", "2"},
            {"pad_h", padded ? "1" : "0"},
            {"pad_w", padded ? "1" : "0"}};
        const std::size_t oh = (5 + (padded ? 2 : 0) - 3) / 2 + 1,
                          ow = (6 + (padded ? 2 : 0) - 2) / 2 + 1;
        const Shape ys{1, oh, ow, 2};
        const std::vector<float> dy = random_values(count(ys), -1, 1, 8);
        for (const char *op : {"max", "avg"}) {
            INFO(op << (padded ? " padded" : ""));
            auto attrs = window;
            attrs.push_back({"op", op});
            const auto forward = [&](const std::vector<float> &v) {
                return run("pool2d", {{xs, v}, {ys, {}}}, attrs)[1];
            };
            const std::vector<float> dx =
                std::string(op) == "max"
                    ? run("max_pool2d_grad", {{xs, x}, {ys, forward(x)}, {ys, dy}, {xs, {}}},
                          window)[3]
                    : run("avg_pool2d_grad", {{ys, dy}, {xs, {}}}, window)[1];
            check_gradient(
                "dx", x, dx, [&](const std::vector<float> &v) { return dot(dy, forward(v)); },
                1e-3f);
        }
    }
}

TEST_CASE("convolution gradients equal finite differences of conv2d", "[conformance][gradient]") {
    // 1 x 5 x 4 x 2 images, 3 x 2 kernels of 3 filters, strides 2, 1, padding 1, 0; and dilated.
    const Shape xs{1, 5, 4, 2}, ws{3, 2, 2, 3};
    const std::vector<float> x = random_values(count(xs), -1, 1, 9),
                             w = random_values(count(ws), -1, 1, 10);
    for (const std::uint32_t dilation : {1u, 2u}) {
        INFO("dilation " << dilation);
        const std::uint32_t kh = 2 * dilation + 1, kw = dilation + 1;
        const Shape ys{1, (5 + 2 - kh) / 2 + 1, (4 - kw) / 1 + 1, 3};
        const std::vector<float> dy = random_values(count(ys), -1, 1, 11);
        const std::vector<std::pair<std::string, std::string>> conv{
            {"stride_h", "2"}, {"stride_w", "1"}, {"pad_h", "1"}, {"pad_w", "0"}};
        auto grad_attrs = conv;
        grad_attrs.push_back({"dilation_h", std::to_string(dilation)});
        grad_attrs.push_back({"dilation_w", std::to_string(dilation)});
        // The forward: conv2d, or grouped_conv2d with one group for a dilated kernel.
        const auto forward = [&](const std::vector<float> &xv, const std::vector<float> &wv) {
            if (dilation == 1)
                return run("conv2d", {{xs, xv}, {ws, wv}, {ys, {}}}, conv)[2];
            return run("grouped_conv2d", {{xs, xv}, {ws, wv}, {ys, {}}}, grad_attrs)[2];
        };
        const std::vector<float> dx =
            run("conv2d_input_grad", {{ys, dy}, {ws, w}, {xs, {}}}, grad_attrs)[2];
        const std::vector<float> dw =
            run("conv2d_weight_grad", {{xs, x}, {ys, dy}, {ws, {}}}, grad_attrs)[2];
        check_gradient("dx", x, dx,
                       [&](const std::vector<float> &v) { return dot(dy, forward(v, w)); });
        check_gradient("dw", w, dw,
                       [&](const std::vector<float> &v) { return dot(dy, forward(x, v)); });
    }
}

TEST_CASE("softmax_cross_entropy's gradient equals finite differences of its loss",
          "[conformance][gradient]") {
    const std::size_t rows = 4, cols = 7;
    const Shape s{rows, cols}, r{rows};
    const std::vector<float> logits = random_values(rows * cols, -3, 3, 12);
    std::vector<float> targets(rows * cols, 0.0f);
    for (std::size_t i = 0; i < rows; ++i)
        targets[i * cols + (i * 3) % cols] = 1.0f;
    const std::vector<std::pair<std::string, std::string>> scale{{"grad_scale", "0.25"}};
    const auto run_loss = [&](const std::vector<float> &v) {
        return run("softmax_cross_entropy", {{s, v}, {s, targets}, {s, {}}, {r, {}}}, scale);
    };
    const std::vector<float> grad = run_loss(logits)[2];
    check_gradient("dlogits", logits, grad, [&](const std::vector<float> &v) {
        const std::vector<float> loss = run_loss(v)[3];
        return 0.25 * std::accumulate(loss.begin(), loss.end(), 0.0);
    });
}

TEST_CASE("matmul_tn and matmul_nt equal finite differences of matmul", "[conformance][gradient]") {
    // L = sum(g * (a b)): dL/da = g b^T = matmul_nt(g, b), dL/db = a^T g = matmul_tn(a, g).
    const std::size_t m = 3, k = 5, n = 4;
    const std::vector<float> a = random_values(m * k, -1, 1, 13),
                             b = random_values(k * n, -1, 1, 14),
                             g = random_values(m * n, -1, 1, 15);
    const auto forward = [&](const std::vector<float> &av, const std::vector<float> &bv) {
        return dot(g, run("matmul", {{{m, k}, av}, {{k, n}, bv}, {{m, n}, {}}})[2]);
    };
    const std::vector<float> da = run("matmul_nt", {{{m, n}, g}, {{k, n}, b}, {{m, k}, {}}})[2];
    const std::vector<float> db = run("matmul_tn", {{{m, k}, a}, {{m, n}, g}, {{k, n}, {}}})[2];
    check_gradient("da", a, da, [&](const std::vector<float> &v) { return forward(v, b); });
    check_gradient("db", b, db, [&](const std::vector<float> &v) { return forward(a, v); });
}
