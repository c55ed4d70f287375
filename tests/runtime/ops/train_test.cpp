// SPDX-License-Identifier: MIT
// train_test.cpp - the training ops' programs (train_compiler.hpp) run on the engine: softmax,
// log-softmax and the softmax cross-entropy against double-precision formulas; the activation
// gradients against their derivatives; SGD with momentum and Adam bit for bit against the same
// binary32 steps on the host, with hyperparameters worked out by hand; the pooling gradients
// (any windows and strides) bit for bit against reference_pool_grad(); and every gradient
// against central finite differences of the card's own forward computation (fp32 on the card;
// tolerances stated at each check). Shapes include 1 x 1, single rows, odd sizes and tiles and
// programs split over a small card.
#include "engine_runner.hpp"

#include <tpu_test/card.hpp>

#include <tpurt/codegen/train_compiler.hpp>
#include <tpurt/codegen/vector_compiler.hpp>
#include <tpurt/golden/reference_pool_grad.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/types/bf16.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using runtime_test::engine_config;
using runtime_test::limits_of;
using runtime_test::run_fp32_on_engine;
using runtime_test::va;
using tpurt::DType;
using tpurt::GradFunction;
using tpurt::SoftmaxKind;

namespace {

const tpu_engine_config big = engine_config(128, 128, 8u << 20, 4u << 20);
const tpu_engine_config small = engine_config(16, 16, 16u << 10, 8u << 10);

// One-hot rows (class r * 7 mod cols), as targets.
std::vector<float> one_hot(std::uint32_t rows, std::uint32_t cols) {
    std::vector<float> t(std::size_t{rows} * cols, 0.0f);
    for (std::uint32_t r = 0; r < rows; ++r)
        t[std::size_t{r} * cols + (r * 7) % cols] = 1.0f;
    return t;
}

struct Softmaxed {
    std::vector<double> p, logp;
};

Softmaxed ref_softmax(const std::vector<float> &x, std::uint32_t rows, std::uint32_t cols) {
    Softmaxed out{std::vector<double>(x.size()), std::vector<double>(x.size())};
    for (std::uint32_t r = 0; r < rows; ++r) {
        const float *row = &x[std::size_t{r} * cols];
        double m = row[0], s = 0;
        for (std::uint32_t c = 0; c < cols; ++c)
            m = std::max(m, double(row[c]));
        for (std::uint32_t c = 0; c < cols; ++c)
            s += std::exp(row[c] - m);
        for (std::uint32_t c = 0; c < cols; ++c) {
            out.p[std::size_t{r} * cols + c] = std::exp(row[c] - m) / s;
            out.logp[std::size_t{r} * cols + c] = (row[c] - m) - std::log(s);
        }
    }
    return out;
}

// The card's cross-entropy: per-row losses and the gradient.
std::pair<std::vector<float>, std::vector<float>>
card_cross_entropy(const tpu_engine_config &cfg, const std::vector<float> &x,
                   const std::vector<float> &t, std::uint32_t rows, std::uint32_t cols,
                   float scale) {
    const auto programs = tpurt::compile_softmax({.kind = SoftmaxKind::CrossEntropy,
                                                  .rows = rows,
                                                  .cols = cols,
                                                  .grad_scale = scale,
                                                  .x_addr = va(0),
                                                  .target_addr = va(1),
                                                  .out_addr = va(2),
                                                  .loss_addr = va(3)},
                                                 limits_of(cfg));
    auto out = run_fp32_on_engine(cfg, programs,
                                  {x, t, std::vector<float>(x.size()), std::vector<float>(rows)});
    return {out[3], out[2]};
}

} // namespace

TEST_CASE("softmax and log-softmax on the card match the double formulas", "[train]") {
    const auto shape = GENERATE(std::pair<std::uint32_t, std::uint32_t>{1, 1},
                                std::pair<std::uint32_t, std::uint32_t>{1, 10},
                                std::pair<std::uint32_t, std::uint32_t>{7, 33},
                                std::pair<std::uint32_t, std::uint32_t>{130, 10},
                                std::pair<std::uint32_t, std::uint32_t>{3, 1000});
    const auto [rows, cols] = shape;
    const bool small_card = GENERATE(false, true);
    const tpu_engine_config &cfg = small_card ? small : big;
    CAPTURE(rows, cols, small_card);
    const std::vector<float> x =
        tpurt::uniform_fp32(std::size_t{rows} * cols, rows * 31 + cols, -20.0f, 20.0f);
    const Softmaxed want = ref_softmax(x, rows, cols);
    for (SoftmaxKind kind : {SoftmaxKind::Softmax, SoftmaxKind::LogSoftmax}) {
        const auto programs = tpurt::compile_softmax(
            {.kind = kind, .rows = rows, .cols = cols, .x_addr = va(0), .out_addr = va(1)},
            limits_of(cfg), small_card ? 64 * 32 : TPU_PROGRAM_MAX_BYTES);
        const auto out = run_fp32_on_engine(cfg, programs, {x, std::vector<float>(x.size())})[1];
        for (std::size_t i = 0; i < x.size(); ++i) {
            CAPTURE(tpurt::softmax_kind_name(kind), i, x[i], out[i]);
            // exp and log within about an ulp each, sums of up to 1000 terms: relative 1e-5
            // (softmax), absolute 1e-5 + relative 1e-6 (log-softmax).
            if (kind == SoftmaxKind::Softmax)
                REQUIRE(std::fabs(out[i] - want.p[i]) <= 1e-5 * want.p[i] + 1e-37);
            else
                REQUIRE(std::fabs(out[i] - want.logp[i]) <= 1e-5 + 1e-6 * std::fabs(want.logp[i]));
        }
    }
}

TEST_CASE("softmax cross-entropy: loss and gradient match the formulas", "[train]") {
    const std::uint32_t rows = GENERATE(1u, 5u, 67u), cols = GENERATE(1u, 10u, 37u);
    const tpu_engine_config &cfg = GENERATE(std::cref(big), std::cref(small)).get();
    CAPTURE(rows, cols);
    const std::vector<float> x =
        tpurt::uniform_fp32(std::size_t{rows} * cols, rows + cols, -8.0f, 8.0f);
    const std::vector<float> t = one_hot(rows, cols);
    const float scale = 1.0f / float(rows);
    const auto [loss, grad] = card_cross_entropy(cfg, x, t, rows, cols, scale);
    const Softmaxed want = ref_softmax(x, rows, cols);
    for (std::uint32_t r = 0; r < rows; ++r) {
        double l = 0;
        for (std::uint32_t c = 0; c < cols; ++c)
            l -= t[std::size_t{r} * cols + c] * want.logp[std::size_t{r} * cols + c];
        REQUIRE(std::fabs(loss[r] - l) <= 1e-5 + 1e-6 * l);
    }
    for (std::size_t i = 0; i < x.size(); ++i)
        REQUIRE(std::fabs(grad[i] - scale * (want.p[i] - t[i])) <= 1e-6);
}

TEST_CASE("softmax cross-entropy's gradient equals central finite differences of its loss",
          "[train][gradcheck]") {
    const std::uint32_t rows = 3, cols = 11;
    std::vector<float> x = tpurt::uniform_fp32(rows * cols, 5, -3.0f, 3.0f);
    std::vector<float> t =
        tpurt::uniform_fp32(rows * cols, 6, 0.0f, 1.0f); // soft targets, rows sum to 1
    for (std::uint32_t r = 0; r < rows; ++r) {
        float s = 0;
        for (std::uint32_t c = 0; c < cols; ++c)
            s += t[r * cols + c];
        for (std::uint32_t c = 0; c < cols; ++c)
            t[r * cols + c] /= s;
    }
    const float scale = 1.0f / rows;
    const auto total = [&](const std::vector<float> &xs) {
        const auto loss = card_cross_entropy(big, xs, t, rows, cols, scale).first;
        double sum = 0;
        for (float l : loss)
            sum += l;
        return scale * sum;
    };
    const std::vector<float> grad = card_cross_entropy(big, x, t, rows, cols, scale).second;
    // h = 1e-2: truncation error h^2 / 6 |f'''| below 1e-5 here, the fp32 loss's rounding
    // (about 1e-6 relative) over 2h about 1e-4: tolerance 5e-4.
    const float h = 1e-2f;
    for (std::size_t i = 0; i < x.size(); ++i) {
        std::vector<float> up = x, down = x;
        up[i] += h;
        down[i] -= h;
        const double fd = (total(up) - total(down)) / (double(up[i]) - double(down[i]));
        CAPTURE(i, fd, grad[i]);
        REQUIRE(std::fabs(fd - grad[i]) <= 5e-4);
    }
}

namespace {

double ref_gelu(double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// f'(x) in double, from x.
double derivative(GradFunction f, double x) {
    switch (f) {
    case GradFunction::Relu:
        return x > 0 ? 1 : 0;
    case GradFunction::Sigmoid: {
        const double s = 1 / (1 + std::exp(-x));
        return s * (1 - s);
    }
    case GradFunction::Tanh: {
        const double t = std::tanh(x);
        return 1 - t * t;
    }
    case GradFunction::Gelu: {
        const double h = 1e-6;
        return (ref_gelu(x + h) - ref_gelu(x - h)) / (2 * h);
    }
    }
    return 0;
}

tpurt::Activation forward_of(GradFunction f) {
    switch (f) {
    case GradFunction::Relu:
        return tpurt::Activation::Relu;
    case GradFunction::Sigmoid:
        return tpurt::Activation::Sigmoid;
    case GradFunction::Tanh:
        return tpurt::Activation::Tanh;
    case GradFunction::Gelu:
        return tpurt::Activation::Gelu;
    }
    return tpurt::Activation::None;
}

// The card's forward function f(x) (ACTIVATE through compile_unary, fp32).
std::vector<float> card_forward(GradFunction f, const std::vector<float> &x) {
    const auto programs = tpurt::compile_unary({.type = DType::Fp32,
                                                .out_type = DType::Fp32,
                                                .function = forward_of(f),
                                                .elements = x.size(),
                                                .a_addr = va(0),
                                                .dst_addr = va(1)},
                                               limits_of(big));
    return run_fp32_on_engine(big, programs, {x, std::vector<float>(x.size())})[1];
}

std::vector<float> card_grad(const tpu_engine_config &cfg, GradFunction f,
                             const std::vector<float> &saved, const std::vector<float> &dy) {
    const auto programs = tpurt::compile_activation_grad({.function = f,
                                                          .elements = saved.size(),
                                                          .x_addr = va(0),
                                                          .dy_addr = va(1),
                                                          .dx_addr = va(2)},
                                                         limits_of(cfg));
    return run_fp32_on_engine(cfg, programs, {saved, dy, std::vector<float>(saved.size())})[2];
}

} // namespace

TEST_CASE("activation gradients match the derivatives and finite differences",
          "[train][gradcheck]") {
    const GradFunction f =
        GENERATE(GradFunction::Relu, GradFunction::Sigmoid, GradFunction::Tanh, GradFunction::Gelu);
    const std::size_t n = GENERATE(1u, 7u, 5000u);
    const tpu_engine_config &cfg = GENERATE(std::cref(big), std::cref(small)).get();
    CAPTURE(tpurt::grad_function_name(f), n);
    std::vector<float> x = tpurt::uniform_fp32(n, unsigned(n) + 3, -4.0f, 4.0f);
    for (float &v : x) // keep ReLU's kink out of the finite differences' reach
        if (std::fabs(v) < 0.05f)
            v = 0.5f;
    const std::vector<float> dy = tpurt::uniform_fp32(n, unsigned(n) + 4, -2.0f, 2.0f);
    const bool from_output = f == GradFunction::Sigmoid || f == GradFunction::Tanh;
    const std::vector<float> y = card_forward(f, x);
    const std::vector<float> dx = card_grad(cfg, f, from_output ? y : x, dy);
    std::vector<float> up = x, down = x;
    const float h = 1e-2f;
    for (std::size_t i = 0; i < n; ++i) {
        up[i] += h;
        down[i] -= h;
    }
    const std::vector<float> fu = card_forward(f, up), fd = card_forward(f, down);
    for (std::size_t i = 0; i < n; ++i) {
        const double want = derivative(f, x[i]) * dy[i];
        const double diff = (double(fu[i]) - fd[i]) / (double(up[i]) - down[i]) * dy[i];
        CAPTURE(i, x[i], dy[i], dx[i], want, diff);
        // The derivative formula: binary32 steps, relative 1e-5 of |dy| (sigmoid and tanh read
        // the card's y, within 2.5 ulp). Finite differences, h = 1e-2: truncation h^2 / 6
        // |f'''| <= 2e-5 |dy| and the fp32 forward's rounding over 2h <= 1e-5 |dy|: 1e-4 |dy|
        // (GELU's f''' is larger: 3e-4).
        REQUIRE(std::fabs(dx[i] - want) <= 1e-5 * (std::fabs(dy[i]) + std::fabs(want)) + 1e-30);
        REQUIRE(std::fabs(dx[i] - diff) <= 3e-4 * std::fabs(dy[i]) + 1e-30);
    }
}

namespace {

// The optimizers' binary32 steps in the order train_compiler.hpp gives them.
void host_sgd(std::vector<float> &w, std::vector<float> g, std::vector<float> &m,
              const std::array<float, 8> &hp) {
    for (std::size_t i = 0; i < w.size(); ++i) {
        g[i] = g[i] + w[i] * hp[2];
        m[i] = m[i] * hp[1];
        m[i] = m[i] + g[i];
        w[i] = w[i] - m[i] * hp[0];
    }
}

void host_adam(std::vector<float> &w, std::vector<float> g, std::vector<float> &m,
               std::vector<float> &v, const std::array<float, 8> &hp) {
    for (std::size_t i = 0; i < w.size(); ++i) {
        g[i] = g[i] + w[i] * hp[7];
        const float t = g[i] * hp[2];
        m[i] = m[i] * hp[1];
        m[i] = m[i] + t;
        const float t2 = (g[i] * g[i]) * hp[4];
        v[i] = v[i] * hp[3];
        v[i] = v[i] + t2;
        float d = std::sqrt(v[i]) * hp[5];
        d = d + hp[6];
        const float u = (m[i] / d) * hp[0];
        w[i] = w[i] - u;
    }
}

// Adam's hyperparameters for lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f,
// weight_decay = 1e-4f at steps 1-3, worked out by hand (train_compiler.hpp: c1 = lr / (1 -
// b1^t), c2 = 1 / sqrt(1 - b2^t), from the binary32 values of lr, b1, b2, to 50 digits, rounded
// once), not by tpurt::adam_hyperparameters, the code under test.
std::array<float, 8> hand_adam_hyperparameters(int step) {
    constexpr float c1[] = {0.009999997913837433f, 0.005263156723231077f, 0.0036900362465530634f};
    constexpr float c2[] = {31.62298011779785f, 22.36641502380371f, 18.26666831970215f};
    return {c1[step - 1], 0.9f, 0.10000002384185791f, 0.999f, 0.0009999871253967285f, c2[step - 1],
            1e-8f,        1e-4f};
}

std::vector<float> bf16_of(const std::vector<std::uint16_t> &packed, std::size_t n) {
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = std::bit_cast<float>(std::uint32_t(packed[i]) << 16);
    return out;
}

} // namespace

TEST_CASE("SGD with momentum and Adam equal their binary32 steps, bf16 copy included", "[train]") {
    const std::size_t n = GENERATE(1u, 13u, 4099u);
    const tpu_engine_config &cfg = GENERATE(std::cref(big), std::cref(small)).get();
    const bool adam = GENERATE(false, true);
    CAPTURE(n, adam);
    std::vector<float> w = tpurt::uniform_fp32(n, 1, -1.0f, 1.0f),
                       m = tpurt::uniform_fp32(n, 2, -0.1f, 0.1f);
    std::vector<float> v = tpurt::uniform_fp32(n, 3, 0.0f, 0.01f),
                       g = tpurt::uniform_fp32(n, 4, -0.5f, 0.5f);
    for (int step = 1; step <= 3; ++step) {
        const auto hp = adam ? tpurt::adam_hyperparameters(1e-3f, 0.9f, 0.999f, 1e-8f, 1e-4f, step)
                             : tpurt::sgd_hyperparameters(0.05f, 0.9f, 1e-4f);
        const auto programs = tpurt::compile_optimizer(
            {.kind = adam ? tpurt::OptimizerKind::Adam : tpurt::OptimizerKind::SgdMomentum,
             .elements = n,
             .bf16_copy = true,
             .w_addr = va(0),
             .g_addr = va(1),
             .m_addr = va(2),
             .v_addr = va(3),
             .hp_addr = va(4),
             .bf16_addr = va(5)},
            limits_of(cfg), cfg.ub_bytes < (1u << 20) ? 64 * 32 : TPU_PROGRAM_MAX_BYTES);
        auto out = run_fp32_on_engine(cfg, programs,
                                      {w, g, m, v, std::vector<float>(hp.begin(), hp.end()),
                                       std::vector<float>((n + 1) / 2)});
        // The host steps take the hyperparameters worked out by hand; the card those of the
        // code under test, which must be the same.
        const std::array<float, 8> hand =
            adam ? hand_adam_hyperparameters(step) : std::array<float, 8>{0.05f, 0.9f, 1e-4f};
        CHECK(hp == hand);
        if (adam)
            host_adam(w, g, m, v, hand);
        else
            host_sgd(w, g, m, hand);
        REQUIRE(out[0] == w);
        REQUIRE(out[2] == m);
        if (adam)
            REQUIRE(out[3] == v);
        std::vector<std::uint16_t> packed(n);
        std::memcpy(packed.data(), out[5].data(), n * 2);
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(bf16_of(packed, n)[i] ==
                    tpurt::Bf16::from_float(w[i] == 0 ? 0.0f : w[i]).to_float());
    }
}

// The optimizers move Adam's v to its square root and w to its bf16 copy 32 values a MATMUL row
// (train_block.hpp's apply_finite): an infinity there makes its row of 32 NaN, and only its row.
TEST_CASE("optimizer steps: an infinity makes its group of 32 NaN in the square root and the copy",
          "[train]") {
    const bool adam = GENERATE(false, true);
    CAPTURE(adam);
    constexpr std::size_t n = 64;
    std::vector<float> w = tpurt::uniform_fp32(n, 1, -1.0f, 1.0f),
                       m = tpurt::uniform_fp32(n, 2, -0.1f, 0.1f);
    std::vector<float> v = tpurt::uniform_fp32(n, 3, 0.0f, 0.01f),
                       g = tpurt::uniform_fp32(n, 4, -0.5f, 0.5f);
    // SGD: w[5] infinite (its copy is the sum's first row); Adam: v[40] (the square root's second).
    (adam ? v[40] : w[5]) = std::numeric_limits<float>::infinity();
    const auto hp = adam ? tpurt::adam_hyperparameters(1e-3f, 0.9f, 0.999f, 1e-8f, 1e-4f, 1)
                         : tpurt::sgd_hyperparameters(0.05f, 0.9f, 1e-4f);
    const auto out = run_fp32_on_engine(
        big,
        tpurt::compile_optimizer(
            {.kind = adam ? tpurt::OptimizerKind::Adam : tpurt::OptimizerKind::SgdMomentum,
             .elements = n,
             .bf16_copy = true,
             .w_addr = va(0),
             .g_addr = va(1),
             .m_addr = va(2),
             .v_addr = va(3),
             .hp_addr = va(4),
             .bf16_addr = va(5)},
            limits_of(big)),
        {w, g, m, v, std::vector<float>(hp.begin(), hp.end()), std::vector<float>(n / 2)});
    std::vector<std::uint16_t> packed(n);
    std::memcpy(packed.data(), out[5].data(), n * 2);
    const std::vector<float> copy = bf16_of(packed, n);
    const std::size_t bad = adam ? 32 : 0; // the group of 32 with the infinity
    for (std::size_t i = 0; i < n; ++i) {
        CAPTURE(i);
        const bool in_group = i >= bad && i < bad + 32;
        REQUIRE(std::isnan(copy[i]) == in_group);
        // w = w - c1 m / (sqrt(v) c2 + eps): NaN over the square root's group but at v[40]
        // itself, whose step is m / inf = 0 as before.
        if (adam)
            REQUIRE(std::isnan(out[0][i]) == (in_group && i != 40));
    }
}

TEST_CASE("training compilers refuse empty shapes and cards without room", "[train]") {
    CHECK_THROWS(tpurt::compile_softmax({.rows = 0, .cols = 3}, limits_of(big)));
    CHECK_THROWS(tpurt::compile_activation_grad({.elements = 0}, limits_of(big)));
    CHECK_THROWS(tpurt::compile_optimizer({.elements = 0}, limits_of(big)));
    CHECK_THROWS(tpurt::compile_softmax({.rows = 1, .cols = 70000}, limits_of(big)));
    CHECK_THROWS(tpurt::adam_hyperparameters(1e-3f, 0.9f, 0.999f, 1e-8f, 0, 0));
}

namespace {

// Windows of kh x kw at strides sh x sw over images [n, h, w, c] padded by ph x pw.
struct PoolShape {
    std::uint32_t n, h, w, c, kh, kw, sh, sw, ph = 0, pw = 0;
    std::uint32_t oh() const { return (h + 2 * ph - kh) / sh + 1; }
    std::uint32_t ow() const { return (w + 2 * pw - kw) / sw + 1; }
    tpurt::PoolGradProblem grad(tpurt::PoolOp op) const {
        return {.op = op,
                .batch = n,
                .height = h,
                .width = w,
                .channels = c,
                .window_h = kh,
                .window_w = kw,
                .stride_h = sh,
                .stride_w = sw,
                .pad_h = ph,
                .pad_w = pw};
    }
};

std::vector<float> card_pool(tpurt::PoolOp op, const std::vector<float> &x, const PoolShape &s) {
    const auto programs = tpurt::compile_pool({.type = DType::Fp32,
                                               .op = op,
                                               .batch = s.n,
                                               .height = s.h,
                                               .width = s.w,
                                               .channels = s.c,
                                               .win_h = s.kh,
                                               .win_w = s.kw,
                                               .stride_h = s.sh,
                                               .stride_w = s.sw,
                                               .a_addr = va(0),
                                               .dst_addr = va(1),
                                               .pad_h = s.ph,
                                               .pad_w = s.pw},
                                              limits_of(big));
    const std::size_t out = std::size_t{s.n} * s.oh() * s.ow() * s.c;
    return run_fp32_on_engine(big, programs, {x, std::vector<float>(out)})[1];
}

std::vector<float> card_pool_grad(const tpu_engine_config &cfg, tpurt::PoolOp op,
                                  const std::vector<float> &x, const std::vector<float> &y,
                                  const std::vector<float> &dy, const PoolShape &s) {
    tpurt::PoolGradProblem p = s.grad(op);
    p.x_addr = va(0);
    p.y_addr = va(1);
    p.dy_addr = va(2);
    p.dx_addr = va(3);
    p.xp_addr = va(4); // scratch of the padded image, filled with garbage
    p.dxp_addr = va(5);
    const auto programs = tpurt::compile_pool_grad(p, limits_of(cfg));
    const std::vector<float> scratch(std::max<std::uint64_t>(p.padded_elements(), 1), 5.0f);
    return run_fp32_on_engine(cfg, programs,
                              {x, y, dy, std::vector<float>(x.size(), -7.0f), scratch, scratch})[3];
}

std::vector<std::uint32_t> bits_of(const std::vector<float> &v) {
    std::vector<std::uint32_t> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        out[i] = std::bit_cast<std::uint32_t>(v[i]);
    return out;
}

} // namespace

TEST_CASE("pooling gradients: first maximum of each window, averages, finite differences",
          "[train][gradcheck]") {
    const tpurt::PoolOp op = GENERATE(tpurt::PoolOp::Max, tpurt::PoolOp::Avg);
    // k x k at stride k; overlapping windows (3 x 3 at 2, 2 x 2 at 1); rows and columns no
    // window reaches; gaps between windows; mixed windows and strides; C not a multiple of 8;
    // padding.
    const PoolShape s =
        GENERATE(PoolShape{1, 2, 2, 1, 2, 2, 2, 2}, PoolShape{2, 6, 4, 3, 2, 2, 2, 2},
                 PoolShape{1, 28, 28, 5, 2, 2, 2, 2}, PoolShape{3, 9, 6, 2, 3, 3, 3, 3},
                 PoolShape{2, 7, 9, 5, 3, 3, 2, 2}, PoolShape{1, 5, 6, 3, 2, 2, 1, 1},
                 PoolShape{2, 8, 11, 3, 3, 3, 3, 3}, PoolShape{1, 9, 7, 4, 2, 3, 3, 2},
                 PoolShape{1, 6, 5, 9, 1, 1, 2, 2}, PoolShape{1, 11, 10, 6, 3, 2, 3, 1},
                 // Padding: 3 x 3 at 2 padded 1 (ResNet's stem), 2 x 2 at 2 padded 1 (odd
                 // sizes), 3 x 2 at 1 x 2 padded 2 x 1.
                 PoolShape{2, 9, 8, 3, 3, 3, 2, 2, 1, 1}, PoolShape{1, 7, 5, 4, 2, 2, 2, 2, 1, 1},
                 PoolShape{1, 6, 7, 2, 3, 2, 1, 2, 2, 1});
    const tpu_engine_config &cfg = GENERATE(std::cref(big), std::cref(small)).get();
    CAPTURE(s.n, s.h, s.w, s.c, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, op == tpurt::PoolOp::Max);
    std::vector<float> x =
        tpurt::uniform_fp32(std::size_t{s.n} * s.h * s.w * s.c, s.h * s.w + s.c, -4.0f, 4.0f);
    // Ties: a quarter of the values rounded to integers, so windows hold equal maxima.
    for (std::size_t i = 0; i < x.size(); i += 4)
        x[i] = std::round(x[i]);
    const std::vector<float> y = card_pool(op, x, s);
    const std::vector<float> dy = tpurt::uniform_fp32(y.size(), 9, -1.0f, 1.0f);
    const std::vector<float> dx = card_pool_grad(cfg, op, x, y, dy, s);
    REQUIRE(bits_of(dx) == bits_of(tpurt::reference_pool_grad(s.grad(op), x, y, dy)));
    // Finite differences of sum(dy y) at a few elements that are not tied (h = 1e-3, below the
    // gaps between distinct values at this size; the fp32 pooled sums' rounding over 2h:
    // tolerance 2e-3).
    for (std::size_t at : {std::size_t{1}, x.size() / 2 + 1, x.size() - 1}) {
        if (at % 4 == 0)
            continue;
        std::vector<float> up = x, down = x;
        up[at] += 1e-3f;
        down[at] -= 1e-3f;
        const std::vector<float> yu = card_pool(op, up, s), yd = card_pool(op, down, s);
        double diff = 0;
        for (std::size_t o = 0; o < y.size(); ++o)
            diff += (double(yu[o]) - yd[o]) * dy[o];
        diff /= double(up[at]) - double(down[at]);
        CAPTURE(at, diff, dx[at]);
        REQUIRE(std::fabs(diff - dx[at]) <= 2e-3);
    }
}
