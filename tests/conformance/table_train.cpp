// SPDX-License-Identifier: MIT
// table_train.cpp - the conformance cases of the training ops: softmax, log_softmax and the
// fused softmax_cross_entropy, activation_grad (relu bit for bit; sigmoid, tanh, gelu within
// ACTIVATE's bounds), sgd_momentum_step and adam_step (their binary32 steps bit for bit, the
// bf16 copy too), layer_norm and layer_norm_grad (codegen/layer_norm_compiler.hpp's binary32
// steps bit for bit: golden/reference_layer_norm.hpp, several tiles of rows included), and the max
// and average pooling gradients (bit for bit against golden/reference_pool_grad.hpp).
#include "conformance.hpp"

#include <tpurt/golden/reference_layer_norm.hpp>
#include <tpurt/golden/reference_pool_grad.hpp>

#include <cmath>
#include <limits>

namespace conformance {

namespace {

std::string rc(DType type, std::size_t rows, std::size_t cols) {
    return std::string(tpurt::dtype_name(type)) + " " + std::to_string(rows) + "x" +
           std::to_string(cols);
}

// Softmax and log-softmax of each row in double.
std::vector<float> softmax_rows(const std::vector<float> &x, std::size_t cols, bool log) {
    std::vector<float> out(x.size());
    for (std::size_t r = 0; r < x.size() / cols; ++r) {
        double m = -INFINITY, sum = 0;
        for (std::size_t c = 0; c < cols; ++c)
            m = std::max<double>(m, x[r * cols + c]);
        for (std::size_t c = 0; c < cols; ++c)
            sum += std::exp(double{x[r * cols + c]} - m);
        for (std::size_t c = 0; c < cols; ++c) {
            const double z = double{x[r * cols + c]} - m;
            out[r * cols + c] = static_cast<float>(log ? z - std::log(sum) : std::exp(z) / sum);
        }
    }
    return out;
}

const Tolerance softmax_tolerance{1e-6, 1e-5,
                                  "EXP and LOG within about an ulp each, sums of up to 1000 terms"};

void add_softmax(std::vector<Case> &cases, std::size_t rows, std::size_t cols) {
    for (bool log : {false, true})
        cases.push_back({log ? "log_softmax" : "softmax",
                         rc(DType::Fp32, rows, cols),
                         {in("x", DType::Fp32, {rows, cols}, uniform(-8, 8)),
                          out("out", DType::Fp32, {rows, cols})},
                         {},
                         [=](Arrays &x) { x.store(1, softmax_rows(x.floats(0), cols, log)); },
                         softmax_tolerance});
    for (DType type : {DType::Fp32, DType::Bf16})
        cases.push_back(
            {"softmax_cross_entropy",
             rc(type, rows, cols),
             {in("logits", type, {rows, cols}, uniform(-8, 8)),
              in("targets", DType::Fp32, {rows, cols}, one_hot()), out("grad", type, {rows, cols}),
              out("loss", DType::Fp32, {rows})},
             {{"grad_scale", "0.125"}},
             [=](Arrays &x) {
                 const std::vector<float> logits = x.floats(0), t = x.floats(1);
                 const std::vector<float> p = softmax_rows(logits, cols, false);
                 const std::vector<float> logp = softmax_rows(logits, cols, true);
                 std::vector<float> grad(p.size()), loss(rows);
                 for (std::size_t r = 0; r < rows; ++r) {
                     double l = 0;
                     for (std::size_t c = 0; c < cols; ++c) {
                         l -= double{t[r * cols + c]} * logp[r * cols + c];
                         grad[r * cols + c] = 0.125f * (p[r * cols + c] - t[r * cols + c]);
                     }
                     loss[r] = static_cast<float>(l);
                 }
                 x.store(2, grad);
                 x.store(3, loss);
             },
             type == DType::Bf16
                 ? Tolerance{1e-5, 8e-3,
                             "the bf16 gradient is the fp32 one rounded (half an ulp of bf16)"}
                 : softmax_tolerance});
}

double gelu_derivative(double x) {
    const double k = std::sqrt(2 / M_PI), u = k * (x + 0.044715 * x * x * x), t = std::tanh(u);
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
}

void add_activation_grad(std::vector<Case> &cases, DType type, const char *function,
                         std::size_t rows, std::size_t cols) {
    const std::string f = function;
    const bool from_output = f == "sigmoid" || f == "tanh";
    const Fill saved = f == "sigmoid" ? uniform(0.01, 0.99)
                       : f == "tanh"  ? uniform(-0.99, 0.99)
                                      : uniform(-4, 4);
    cases.push_back(
        {"activation_grad",
         rc(type, rows, cols) + " " + f,
         {in("saved", type, {rows, cols}, saved), in("dy", type, {rows, cols}, uniform(-2, 2)),
          out("dx", type, {rows, cols})},
         {{"function", f}},
         [=](Arrays &x) {
             const std::vector<float> s = x.floats(0), dy = x.floats(1);
             std::vector<float> dx(s.size());
             for (std::size_t e = 0; e < s.size(); ++e) {
                 const double v = s[e];
                 if (f == "relu")
                     dx[e] = s[e] > 0 ? dy[e] : 0.0f;
                 else if (f == "sigmoid")
                     dx[e] = static_cast<float>(dy[e] * v * (1 - v));
                 else if (f == "tanh")
                     dx[e] = static_cast<float>(dy[e] * (1 - v * v));
                 else
                     dx[e] = static_cast<float>(dy[e] * gelu_derivative(v));
             }
             x.store(2, dx);
         },
         f == "relu" ? Tolerance{}
         : type == DType::Bf16
             ? Tolerance{1e-30, 8e-3, "bf16 results of binary32 steps: half an ulp of bf16"}
             : Tolerance{1e-6, from_output ? 1e-6 : 3e-5,
                         "binary32 steps (sigmoid, tanh) and GELU's derivative within ACTIVATE's "
                         "ulp bounds"}});
}

// Adam's hyperparameters for lr 1e-3, betas 0.9 and 0.999, eps 1e-8, weight decay 1e-4 at step
// 1 (train_compiler.hpp: c1 = lr / (1 - b1^t), c2 = 1 / sqrt(1 - b2^t)); SGD's lr 0.05,
// momentum 0.9, weight decay 1e-4.
const std::vector<float> adam_hp{0.009999997913837433f,
                                 0.9f,
                                 0.10000002384185791f,
                                 0.999f,
                                 0.0009999871253967285f,
                                 31.62298011779785f,
                                 1e-8f,
                                 1e-4f};
const std::vector<float> sgd_hp{0.05f, 0.9f, 1e-4f, 0, 0, 0, 0, 0};

void add_optimizers(std::vector<Case> &cases, std::size_t n, bool bf16_copy) {
    const std::string l = std::to_string(n) + (bf16_copy ? " bf16 copy" : "");
    cases.push_back({"sgd_momentum_step",
                     l,
                     {inout("w", DType::Fp32, {n}, uniform(-1, 1)),
                      in("g", DType::Fp32, {n}, uniform(-0.5, 0.5)),
                      inout("momentum", DType::Fp32, {n}, uniform(-0.1, 0.1)),
                      in("hp", DType::Fp32, {8}, values(sgd_hp)),
                      bf16_copy ? out("w_bf16", DType::Bf16, {n}) : none("w_bf16")},
                     {},
                     [=](Arrays &x) {
                         std::vector<float> w = x.floats(0), g = x.floats(1), m = x.floats(2);
                         const std::vector<float> hp = x.floats(3);
                         for (std::size_t i = 0; i < n; ++i) {
                             g[i] = g[i] + w[i] * hp[2];
                             m[i] = m[i] * hp[1];
                             m[i] = m[i] + g[i];
                             w[i] = w[i] - m[i] * hp[0];
                         }
                         x.store(0, w);
                         x.store(2, m);
                         if (bf16_copy)
                             x.store(4, w);
                     }});
    cases.push_back({"adam_step",
                     l,
                     {inout("w", DType::Fp32, {n}, uniform(-1, 1)),
                      in("g", DType::Fp32, {n}, uniform(-0.5, 0.5)),
                      inout("m", DType::Fp32, {n}, uniform(-0.1, 0.1)),
                      in("hp", DType::Fp32, {8}, values(adam_hp)),
                      inout("v", DType::Fp32, {n}, uniform(0, 0.01)),
                      bf16_copy ? out("w_bf16", DType::Bf16, {n}) : none("w_bf16")},
                     {},
                     [=](Arrays &x) {
                         std::vector<float> w = x.floats(0), g = x.floats(1), m = x.floats(2),
                                            v = x.floats(4);
                         const std::vector<float> hp = x.floats(3);
                         for (std::size_t i = 0; i < n; ++i) {
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
                         x.store(0, w);
                         x.store(2, m);
                         x.store(4, v);
                         if (bf16_copy)
                             x.store(5, w);
                     }});
}

void add_layer_norm(std::vector<Case> &cases, std::size_t rows, std::size_t cols) {
    cases.push_back(
        {"layer_norm",
         rc(DType::Fp32, rows, cols),
         {in("x", DType::Fp32, {rows, cols}, uniform(-3, 3)),
          in("gamma", DType::Fp32, {cols}, uniform(0.5, 2)),
          in("beta", DType::Fp32, {cols}, uniform(-1, 1)), out("y", DType::Fp32, {rows, cols})},
         {{"eps", "1e-5"}},
         [=](Arrays &a) {
             a.store(3, tpurt::reference_layer_norm(a.floats(0), a.floats(1), a.floats(2), {}, rows,
                                                    cols, 1e-5f)
                            .y);
         }});
    cases.push_back(
        {"layer_norm_grad",
         rc(DType::Fp32, rows, cols),
         {in("x", DType::Fp32, {rows, cols}, uniform(-3, 3)),
          in("gamma", DType::Fp32, {cols}, uniform(0.5, 2)),
          in("dy", DType::Fp32, {rows, cols}, uniform(-1, 1)), out("dx", DType::Fp32, {rows, cols}),
          out("dgamma", DType::Fp32, {cols}), out("dbeta", DType::Fp32, {cols})},
         {{"eps", "1e-5"}},
         [=](Arrays &a) {
             const tpurt::LayerNormReference s = tpurt::reference_layer_norm(
                 a.floats(0), a.floats(1), {}, a.floats(2), rows, cols, 1e-5f);
             a.store(3, s.dx);
             a.store(4, s.dgamma);
             a.store(5, s.dbeta);
         }});
}

// The pooling gradients: y is the forward max pooling of x (made from x before the launch).
void add_pool_grad(std::vector<Case> &cases, DType type, bool max,
                   const tpurt::PoolGradProblem &shape) {
    tpurt::PoolGradProblem p = shape;
    p.op = max ? tpurt::PoolOp::Max : tpurt::PoolOp::Avg;
    p.x_type = p.dy_type = p.dx_type = type;
    const Shape xs{p.batch, p.height, p.width, p.channels},
        ys{p.batch, p.out_height(), p.out_width(), p.channels};
    const auto u = [](std::uint32_t v) { return std::to_string(v); };
    const std::vector<std::pair<std::string, std::string>> window{
        {"window_h", u(p.window_h)}, {"window_w", u(p.window_w)}, {"stride_h", u(p.stride_h)},
        {"stride_w", u(p.stride_w)}, {"pad_h", u(p.pad_h)},       {"pad_w", u(p.pad_w)}};
    const std::string l = std::string(tpurt::dtype_name(type)) + " " + u(p.batch) + "x" +
                          u(p.height) + "x" + u(p.width) + "x" + u(p.channels) + " w" +
                          u(p.window_h) + u(p.window_w) + " s" + u(p.stride_h) + u(p.stride_w) +
                          " p" + u(p.pad_h) + u(p.pad_w);
    if (!max) {
        cases.push_back(
            {"avg_pool2d_grad",
             l,
             {in("dy", type, ys, uniform(-2, 2)), out("dx", type, xs)},
             window,
             [=](Arrays &x) { x.store(1, tpurt::reference_pool_grad(p, {}, {}, x.floats(0))); }});
        return;
    }
    cases.push_back(
        {"max_pool2d_grad",
         l,
         {in("x", type, xs, uniform(-4, 4)), in("y", type, ys, output()),
          in("dy", type, ys, uniform(-2, 2)), out("dx", type, xs)},
         window,
         [=](Arrays &x) {
             x.store(3, tpurt::reference_pool_grad(p, x.floats(0), x.floats(1), x.floats(2)));
         },
         {},
         [=](Arrays &x) { // y = max over each window of x (-inf padding)
             const std::vector<float> v = x.floats(0);
             std::vector<float> y(ys[0] * ys[1] * ys[2] * ys[3],
                                  -std::numeric_limits<float>::infinity());
             for (std::size_t b = 0; b < ys[0]; ++b)
                 for (std::size_t oy = 0; oy < ys[1]; ++oy)
                     for (std::size_t ox = 0; ox < ys[2]; ++ox)
                         for (std::size_t c = 0; c < ys[3]; ++c)
                             for (std::size_t ky = 0; ky < p.window_h; ++ky)
                                 for (std::size_t kx = 0; kx < p.window_w; ++kx) {
                                     const std::ptrdiff_t iy =
                                         std::ptrdiff_t(oy * p.stride_h + ky) - p.pad_h;
                                     const std::ptrdiff_t ix =
                                         std::ptrdiff_t(ox * p.stride_w + kx) - p.pad_w;
                                     if (iy < 0 || ix < 0 || iy >= std::ptrdiff_t(xs[1]) ||
                                         ix >= std::ptrdiff_t(xs[2]))
                                         continue;
                                     float &m = y[((b * ys[1] + oy) * ys[2] + ox) * ys[3] + c];
                                     m = std::max(m,
                                                  v[((b * xs[1] + iy) * xs[2] + ix) * xs[3] + c]);
                                 }
             x.store(1, y);
         }});
}

tpurt::PoolGradProblem window(std::uint32_t n, std::uint32_t h, std::uint32_t w, std::uint32_t c,
                              std::uint32_t wh, std::uint32_t ww, std::uint32_t sh,
                              std::uint32_t sw, std::uint32_t ph, std::uint32_t pw) {
    tpurt::PoolGradProblem p;
    p.batch = n;
    p.height = h;
    p.width = w;
    p.channels = c;
    p.window_h = wh;
    p.window_w = ww;
    p.stride_h = sh;
    p.stride_w = sw;
    p.pad_h = ph;
    p.pad_w = pw;
    return p;
}

} // namespace

std::vector<Case> train_cases() {
    std::vector<Case> cases;
    add_softmax(cases, 1, 1);
    add_softmax(cases, 7, 131);
    for (DType type : {DType::Fp32, DType::Bf16})
        for (const char *f : {"relu", "sigmoid", "tanh", "gelu"})
            add_activation_grad(cases, type, f, 5, 131);
    add_activation_grad(cases, DType::Fp32, "relu", 1, 1);
    add_optimizers(cases, 1, false);
    add_optimizers(cases, 4099, true);
    add_layer_norm(cases, 1, 1);
    add_layer_norm(cases, 9, 131);
    add_layer_norm(cases, 1100, 1000); // 2 tiles of rows forward, 3 backward (8 MiB buffer)
    for (DType type : {DType::Fp32, DType::Bf16})
        for (bool max : {true, false}) {
            add_pool_grad(cases, type, max, window(1, 1, 1, 1, 1, 1, 1, 1, 0, 0));
            add_pool_grad(cases, type, max, window(2, 8, 6, 3, 2, 2, 2, 2, 0, 0));
            add_pool_grad(cases, type, max, window(1, 7, 9, 131, 3, 3, 2, 2, 1, 1));
            add_pool_grad(cases, type, max, window(2, 5, 7, 2, 2, 3, 3, 2, 0, 1));
        }
    return cases;
}

} // namespace conformance
