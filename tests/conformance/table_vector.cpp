// SPDX-License-Identifier: MIT
// table_vector.cpp - the conformance cases of the vector unit's ops: elementwise (every op, a
// full or a broadcast row b), square, divide, reduce_rows and column_sums, unary (exact
// functions and casts bit for bit; EXP, SIGMOID, TANH, GELU within docs/hardware.md's ulp
// bounds), transpose and pool2d; shapes of 1, primes, just over a 128-wide tile. Golden models
// written here from docs/hardware.md's Numerics (int8 saturating, int32 wrapping, bf16 computed
// in binary32 and rounded to nearest even), the casts by golden/reference_dense.hpp's epilogue.
#include "conformance.hpp"

#include <tpurt/golden/reference_dense.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace conformance {

namespace {

const char *const elementwise_ops[] = {"add", "sub", "mul", "max", "min"};

std::string rc(DType type, std::size_t rows, std::size_t cols) {
    return std::string(tpurt::dtype_name(type)) + " " + std::to_string(rows) + "x" +
           std::to_string(cols);
}

Fill inputs(DType type) {
    switch (type) {
    case DType::Int8:
        return uniform(-128, 127);
    case DType::Int32:
        return uniform(std::numeric_limits<std::int32_t>::min(),
                       std::numeric_limits<std::int32_t>::max());
    default:
        return uniform(-3, 3);
    }
}

std::int64_t int_op(const std::string &op, std::int64_t a, std::int64_t b) {
    if (op == "add")
        return a + b;
    if (op == "sub")
        return a - b;
    if (op == "mul")
        return a * b;
    if (op == "div")
        return b == 0 ? 0 : a / b;
    return op == "max" ? std::max(a, b) : std::min(a, b);
}

float float_op(const std::string &op, float a, float b) {
    if (op == "add")
        return a + b;
    if (op == "sub")
        return a - b;
    if (op == "mul")
        return a * b;
    if (op == "div")
        return a / b;
    return op == "max" ? (b > a ? b : a) : (b < a ? b : a);
}

// out = a op b elementwise, b of a's shape or one row broadcast to every row.
void elementwise_golden(Arrays &x, DType type, const std::string &op, std::size_t cols) {
    const std::size_t n = x.bytes[0].size() / tpurt::element_size(type);
    const std::size_t bn = x.bytes[1].size() / tpurt::element_size(type);
    const auto bi = [&](std::size_t e) { return bn == n ? e : e % cols; };
    if (type == DType::Int8) {
        for (std::size_t e = 0; e < n; ++e)
            x.bytes[2][e] = static_cast<std::byte>(static_cast<std::int8_t>(
                std::clamp<std::int64_t>(int_op(op, static_cast<std::int8_t>(x.bytes[0][e]),
                                                static_cast<std::int8_t>(x.bytes[1][bi(e)])),
                                         -128, 127)));
    } else if (type == DType::Int32) {
        const auto a = x.as<std::int32_t>(0), b = x.as<std::int32_t>(1);
        auto o = x.as<std::int32_t>(2);
        for (std::size_t e = 0; e < n; ++e)
            o[e] =
                static_cast<std::int32_t>(static_cast<std::uint32_t>(int_op(op, a[e], b[bi(e)])));
    } else {
        const std::vector<float> a = x.floats(0), b = x.floats(1);
        std::vector<float> o(n);
        for (std::size_t e = 0; e < n; ++e)
            o[e] = float_op(op, a[e], b[bi(e)]);
        x.store(2, o);
    }
}

void add_elementwise(std::vector<Case> &cases, DType type, std::size_t rows, std::size_t cols,
                     bool broadcast) {
    for (const char *op : elementwise_ops) {
        const std::string o = op;
        cases.push_back({"elementwise",
                         rc(type, rows, cols) + " " + o + (broadcast ? " row" : ""),
                         {in("a", type, {rows, cols}, inputs(type)),
                          in("b", type, broadcast ? Shape{cols} : Shape{rows, cols}, inputs(type)),
                          out("out", type, {rows, cols})},
                         {{"op", o}},
                         [=](Arrays &x) { elementwise_golden(x, type, o, cols); }});
    }
}

// Sums in ascending order: int32 wrapping (int8, int32), binary32 (bf16, fp32).
std::vector<std::byte> row_sums(const Arrays &x, std::size_t i, DType type, std::size_t rows,
                                std::size_t cols, bool max) {
    Arrays r{
        {{}},
        {max ? type : (type == DType::Int8 || type == DType::Int32 ? DType::Int32 : DType::Fp32)}};
    if (type == DType::Int32 || type == DType::Int8) {
        std::vector<std::int32_t> s(rows);
        for (std::size_t row = 0; row < rows; ++row) {
            std::uint32_t sum = 0;
            std::int64_t m = std::numeric_limits<std::int64_t>::min();
            for (std::size_t c = 0; c < cols; ++c) {
                std::int32_t v;
                if (type == DType::Int8)
                    v = static_cast<std::int8_t>(x.bytes[i][row * cols + c]);
                else
                    std::memcpy(&v, &x.bytes[i][(row * cols + c) * 4], 4);
                sum += static_cast<std::uint32_t>(v);
                m = std::max<std::int64_t>(m, v);
            }
            s[row] = max ? static_cast<std::int32_t>(m) : static_cast<std::int32_t>(sum);
        }
        if (max && type == DType::Int8) {
            r.bytes[0].resize(rows);
            for (std::size_t row = 0; row < rows; ++row)
                r.bytes[0][row] = static_cast<std::byte>(static_cast<std::int8_t>(s[row]));
        } else {
            r.bytes[0].resize(rows * 4);
            std::memcpy(r.bytes[0].data(), s.data(), rows * 4);
        }
        return r.bytes[0];
    }
    const std::vector<float> v = x.floats(i);
    std::vector<float> s(rows);
    for (std::size_t row = 0; row < rows; ++row) {
        float sum = 0, m = -std::numeric_limits<float>::infinity();
        for (std::size_t c = 0; c < cols; ++c) {
            sum += v[row * cols + c];
            m = v[row * cols + c] > m ? v[row * cols + c] : m;
        }
        s[row] = max ? m : sum;
    }
    r.store(0, s);
    return r.bytes[0];
}

std::vector<std::byte> transposed(const std::vector<std::byte> &a, std::size_t rows,
                                  std::size_t cols, std::size_t size) {
    std::vector<std::byte> t(a.size());
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
            std::memcpy(&t[(c * rows + r) * size], &a[(r * cols + c) * size], size);
    return t;
}

tpurt::Activation activation(const std::string &name) {
    if (name == "relu")
        return tpurt::Activation::Relu;
    if (name == "relu6")
        return tpurt::Activation::Relu6;
    return tpurt::Activation::None;
}

// ACTIVATE's transcendental functions in double (their ulp bounds are the tolerance).
double transcendental(const std::string &f, double x) {
    if (f == "exp")
        return std::exp(x);
    if (f == "sigmoid")
        return 1 / (1 + std::exp(-x));
    if (f == "tanh")
        return std::tanh(x);
    if (f == "erf")
        return std::erf(x);
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); // gelu
}

void add_unary(std::vector<Case> &cases, DType type, DType out_type, const std::string &f,
               const char *scale, std::size_t rows, std::size_t cols) {
    const bool exact = f == "none" || f == "relu" || f == "relu6";
    cases.push_back(
        {"unary",
         rc(type, rows, cols) + " -> " + tpurt::dtype_name(out_type) + " " + f + " x" + scale,
         {in("a", type, {rows, cols}, inputs(type)), out("out", out_type, {rows, cols})},
         {{"function", f}, {"scale", scale}},
         [=](Arrays &x) {
             const std::vector<float> a = x.floats(0);
             if (exact) {
                 x.bytes[1] = tpurt::reference_epilogue(a, cols, {}, activation(f),
                                                        std::stof(scale), out_type);
                 return;
             }
             std::vector<float> o(a.size());
             for (std::size_t e = 0; e < a.size(); ++e)
                 o[e] = static_cast<float>(transcendental(f, double{a[e] * std::stof(scale)}));
             x.store(1, o);
         },
         exact ? Tolerance{}
               : Tolerance{
                     out_type == DType::Bf16 ? 1e-30 : 1e-6, out_type == DType::Bf16 ? 8e-3 : 3e-6,
                     "ACTIVATE's functions are defined within ulp bounds (GELU 22 ulp for x >= -4, "
                     "below 1e-4 further out), not bit for bit"}});
}

// pool2d's golden model: MAX the window's maximum (-inf padding), AVG the binary32 sum in
// row-major window order divided by the window's size (zeros of the padding counted).
void pool_golden(Arrays &x, DType type, bool max, const Shape &s, std::uint32_t wh,
                 std::uint32_t ww, std::uint32_t sh, std::uint32_t sw, std::uint32_t ph,
                 std::uint32_t pw) {
    const std::size_t n = s[0], h = s[1], w = s[2], c = s[3];
    const std::size_t oh = (h + 2 * ph - wh) / sh + 1, ow = (w + 2 * pw - ww) / sw + 1;
    const std::vector<float> v = x.floats(0);
    std::vector<float> o(n * oh * ow * c);
    std::vector<std::int64_t> isum(o.size());
    for (std::size_t b = 0; b < n; ++b)
        for (std::size_t y = 0; y < oh; ++y)
            for (std::size_t xo = 0; xo < ow; ++xo)
                for (std::size_t ch = 0; ch < c; ++ch) {
                    float m = -std::numeric_limits<float>::infinity(), sum = 0;
                    std::int64_t is = 0;
                    for (std::size_t ky = 0; ky < wh; ++ky)
                        for (std::size_t kx = 0; kx < ww; ++kx) {
                            const std::ptrdiff_t iy = std::ptrdiff_t(y * sh + ky) - ph,
                                                 ix = std::ptrdiff_t(xo * sw + kx) - pw;
                            if (iy < 0 || ix < 0 || iy >= std::ptrdiff_t(h) ||
                                ix >= std::ptrdiff_t(w))
                                continue;
                            const float e = v[((b * h + iy) * w + ix) * c + ch];
                            m = e > m ? e : m;
                            sum += e;
                            is += static_cast<std::int64_t>(e);
                        }
                    const std::size_t at = ((b * oh + y) * ow + xo) * c + ch;
                    o[at] = max ? m : sum / static_cast<float>(wh * ww);
                    isum[at] = is;
                }
    if (!max && (type == DType::Int8 || type == DType::Int32))
        for (std::size_t e = 0; e < o.size(); ++e)
            o[e] = std::nearbyint(static_cast<float>(isum[e]) / static_cast<float>(wh * ww));
    x.store(1, o);
}

void add_pool(std::vector<Case> &cases, DType type, bool max, const Shape &s, std::uint32_t wh,
              std::uint32_t ww, std::uint32_t sh, std::uint32_t sw, std::uint32_t ph,
              std::uint32_t pw) {
    const std::size_t oh = (s[1] + 2 * ph - wh) / sh + 1, ow = (s[2] + 2 * pw - ww) / sw + 1;
    const auto u = [](std::uint32_t v) { return std::to_string(v); };
    cases.push_back(
        {"pool2d",
         std::string(tpurt::dtype_name(type)) + (max ? " max " : " avg ") + u(s[0]) + "x" +
             u(s[1]) + "x" + u(s[2]) + "x" + u(s[3]) + " w" + u(wh) + u(ww) + " s" + u(sh) + u(sw) +
             " p" + u(ph) + u(pw),
         {in("input", type, s, type == DType::Int32 ? uniform(-1e6, 1e6) : inputs(type)),
          out("out", type, {s[0], oh, ow, s[3]})},
         {{"op", max ? "max" : "avg"},
          {"window_h", u(wh)},
          {"window_w", u(ww)},
          {"stride_h", u(sh)},
          {"stride_w", u(sw)},
          {"pad_h", u(ph)},
          {"pad_w", u(pw)}},
         [=](Arrays &x) { pool_golden(x, type, max, s, wh, ww, sh, sw, ph, pw); }});
}

} // namespace

std::vector<Case> vector_cases() {
    std::vector<Case> cases;
    for (DType type : {DType::Int8, DType::Int32, DType::Bf16, DType::Fp32}) {
        add_elementwise(cases, type, 1, 1, false);
        add_elementwise(cases, type, 7, 131, false);
        add_elementwise(cases, type, 13, 129, true);
        for (const auto &[rows, cols] : {std::pair<std::size_t, std::size_t>{1, 1}, {5, 131}}) {
            cases.push_back(
                {"square",
                 rc(type, rows, cols),
                 {in("a", type, {rows, cols}, inputs(type)), out("out", type, {rows, cols})},
                 {},
                 [=](Arrays &x) { // a x a: elementwise mul of a with itself
                     Arrays y{{x.bytes[0], x.bytes[0], x.bytes[1]}, {type, type, type}};
                     elementwise_golden(y, type, "mul", cols);
                     x.bytes[1] = y.bytes[2];
                 }});
            cases.push_back(
                {"transpose",
                 rc(type, rows, cols),
                 {in("a", type, {rows, cols}, inputs(type)), out("out", type, {cols, rows})},
                 {},
                 [=](Arrays &x) {
                     x.bytes[1] = transposed(x.bytes[0], rows, cols, tpurt::element_size(type));
                 }});
            const DType sum_type =
                type == DType::Int8 || type == DType::Int32 ? DType::Int32 : DType::Fp32;
            for (bool max : {false, true})
                cases.push_back(
                    {"reduce_rows",
                     rc(type, rows, cols) + (max ? " max" : " sum"),
                     {in("a", type, {rows, cols}, inputs(type)),
                      out("out", max ? type : sum_type, {rows})},
                     {{"op", max ? "max" : "sum"}},
                     [=](Arrays &x) { x.bytes[1] = row_sums(x, 0, type, rows, cols, max); }});
            cases.push_back(
                {"column_sums",
                 rc(type, cols, rows),
                 {in("a", type, {cols, rows}, inputs(type)), out("out", sum_type, {rows})},
                 {},
                 [=](Arrays &x) {
                     Arrays t{{transposed(x.bytes[0], cols, rows, tpurt::element_size(type))},
                              {type}};
                     x.bytes[1] = row_sums(t, 0, type, rows, cols, false);
                 }});
            // divide: integer division truncates, x / 0 is 0; divisors kept away from 0 for floats.
            cases.push_back(
                {"divide",
                 rc(type, rows, cols),
                 {in("a", type, {rows, cols}, inputs(type)),
                  in("b", type, {rows, cols},
                     type == DType::Int8 || type == DType::Int32 ? inputs(type) : uniform(0.25, 4)),
                  out("out", type, {rows, cols})},
                 {},
                 [=](Arrays &x) { elementwise_golden(x, type, "div", cols); }});
        }
    }
    for (DType type : {DType::Int8, DType::Bf16, DType::Fp32}) { // ACTIVATE takes no int32
        add_unary(cases, type, type, "none", "1", 3, 131);
        add_unary(cases, type, type, "relu", "0.5", 1, 1);
        add_unary(cases, type, DType::Fp32, "relu6", "3", 7, 5);
    }
    add_unary(cases, DType::Fp32, DType::Int8, "none", "16", 5, 129);      // quantise
    add_unary(cases, DType::Int8, DType::Fp32, "none", "0.03125", 5, 129); // dequantise
    add_unary(cases, DType::Fp32, DType::Bf16, "none", "1", 2, 3);
    for (const char *f : {"exp", "sigmoid", "tanh", "gelu", "erf"}) {
        add_unary(cases, DType::Fp32, DType::Fp32, f, "1", 3, 131);
        add_unary(cases, DType::Bf16, DType::Bf16, f, "0.5", 1, 7);
    }
    for (DType type : {DType::Int8, DType::Int32, DType::Bf16, DType::Fp32}) {
        add_pool(cases, type, true, {1, 1, 1, 1}, 1, 1, 1, 1, 0, 0);
        add_pool(cases, type, true, {2, 7, 5, 3}, 2, 2, 2, 2, 0, 0);
        add_pool(cases, type, false, {1, 9, 8, 131}, 3, 2, 2, 3, 1, 1);
        add_pool(cases, type, false, {2, 5, 5, 2}, 3, 3, 1, 1, 0, 0);
    }
    add_pool(cases, DType::Fp32, true, {1, 6, 7, 5}, 3, 3, 2, 2, 1, 1);
    // Views with strided rows (the padding between rows must stay as it was).
    for (DType type : {DType::Int8, DType::Int32, DType::Bf16, DType::Fp32}) {
        cases.push_back({"square",
                         rc(type, 20, 64) + " strided",
                         {strided(in("a", type, {20, 64}, inputs(type)), 36),
                          strided(out("out", type, {20, 64}), 5)},
                         {},
                         [=](Arrays &x) {
                             Arrays y{{x.bytes[0], x.bytes[0], x.bytes[1]}, {type, type, type}};
                             elementwise_golden(y, type, "mul", 64);
                             x.bytes[1] = y.bytes[2];
                         }});
        cases.push_back({"elementwise",
                         rc(type, 9, 131) + " sub strided",
                         {strided(in("a", type, {9, 131}, inputs(type)), 3),
                          strided(in("b", type, {9, 131}, inputs(type)), 129),
                          strided(out("out", type, {9, 131}), 1)},
                         {{"op", "sub"}},
                         [=](Arrays &x) { elementwise_golden(x, type, "sub", 131); }});
        const DType sum_type =
            type == DType::Int8 || type == DType::Int32 ? DType::Int32 : DType::Fp32;
        cases.push_back(
            {"reduce_rows",
             rc(type, 9, 131) + " sum strided",
             {strided(in("a", type, {9, 131}, inputs(type)), 7), out("out", sum_type, {9})},
             {{"op", "sum"}},
             [=](Arrays &x) { x.bytes[1] = row_sums(x, 0, type, 9, 131, false); }});
    }

    // The edges of one instruction's extents (isa_limits.hpp's max_dim = 65535): rows of
    // 65537 elements cut into tiles; a reduction's row of 65535, the longest one REDUCE takes.
    add_elementwise(cases, DType::Bf16, 2, 65537, true);
    for (bool max : {false, true})
        cases.push_back(
            {"reduce_rows",
             rc(DType::Fp32, 1, 65535) + (max ? " max" : " sum"),
             {in("a", DType::Fp32, {1, 65535}, uniform(-3, 3)), out("out", DType::Fp32, {1})},
             {{"op", max ? "max" : "sum"}},
             [=](Arrays &x) { x.bytes[1] = row_sums(x, 0, DType::Fp32, 1, 65535, max); }});
    cases.push_back(
        {"transpose",
         rc(DType::Fp32, 2, 65537),
         {in("a", DType::Fp32, {2, 65537}, uniform(-3, 3)), out("out", DType::Fp32, {65537, 2})},
         {},
         [=](Arrays &x) { x.bytes[1] = transposed(x.bytes[0], 2, 65537, 4); }});
    return cases;
}

} // namespace conformance
