// SPDX-License-Identifier: MIT
// conformance_runner.cpp - the one body every conformance case runs through: the case's
// tensors made on the device from its seed, the op launched by name through the registry
// (prepare_op(), what tpurt_op_launch() calls), every written operand compared with the golden
// model (exact bits, or within the case's stated tolerance); and the check that every
// registered op has a case or a named exclusion.
#include "conformance.hpp"

#include <tpurt/error.hpp>
#include <tpurt/ops/op_registry.hpp>
#include <tpurt/tensor.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <sstream>

namespace conformance {

Fill uniform(double lo, double hi) {
    return {.kind = Fill::Kind::Uniform, .lo = lo, .hi = hi, .values = {}};
}
Fill one_hot() {
    return {.kind = Fill::Kind::OneHot, .lo = 0, .hi = 0, .values = {}};
}
Fill values(std::vector<float> v) {
    return {.kind = Fill::Kind::Values, .lo = 0, .hi = 0, .values = std::move(v)};
}
Fill output() {
    return {};
}

Operand in(std::string name, DType type, Shape shape, Fill fill) {
    return {std::move(name), type, std::move(shape), std::move(fill), false, false};
}
Operand out(std::string name, DType type, Shape shape) {
    return {std::move(name), type, std::move(shape), output(), true, false};
}
Operand inout(std::string name, DType type, Shape shape, Fill fill) {
    return {std::move(name), type, std::move(shape), std::move(fill), true, false};
}
Operand none(std::string name) {
    return {std::move(name), DType::Fp32, {}, output(), false, true};
}
Operand strided(Operand o, std::size_t row_pad) {
    o.row_pad = row_pad;
    return o;
}

std::vector<float> Arrays::floats(std::size_t i) const {
    const std::vector<std::byte> &b = bytes[i];
    const std::size_t n = b.size() / tpurt::element_size(types[i]);
    std::vector<float> v(n);
    for (std::size_t e = 0; e < n; ++e) {
        switch (types[i]) {
        case DType::Int8:
            v[e] = static_cast<float>(static_cast<std::int8_t>(b[e]));
            break;
        case DType::Int32: {
            std::int32_t x;
            std::memcpy(&x, &b[e * 4], 4);
            v[e] = static_cast<float>(x);
            break;
        }
        case DType::Bf16: {
            tpurt::Bf16 x;
            std::memcpy(&x, &b[e * 2], 2);
            v[e] = x.to_float();
            break;
        }
        case DType::Fp32:
            std::memcpy(&v[e], &b[e * 4], 4);
            break;
        }
    }
    return v;
}

void Arrays::store(std::size_t i, std::span<const float> v) {
    std::vector<std::byte> &b = bytes[i];
    const std::size_t size = tpurt::element_size(types[i]);
    b.resize(v.size() * size);
    for (std::size_t e = 0; e < v.size(); ++e) {
        if (types[i] == DType::Bf16) {
            const tpurt::Bf16 x =
                std::isnan(v[e]) ? tpurt::Bf16{0x7fc0} : tpurt::Bf16::from_float(v[e]);
            std::memcpy(&b[e * 2], &x, 2);
        } else if (types[i] == DType::Fp32) {
            const std::uint32_t x =
                std::isnan(v[e]) ? 0x7fc00000u : std::bit_cast<std::uint32_t>(v[e]);
            std::memcpy(&b[e * 4], &x, 4);
        } else if (types[i] == DType::Int32) {
            const auto x = static_cast<std::int32_t>(v[e]);
            std::memcpy(&b[e * 4], &x, 4);
        } else {
            b[e] = static_cast<std::byte>(static_cast<std::int8_t>(v[e]));
        }
    }
}

std::vector<Case> all_cases() {
    std::vector<Case> cases;
    for (auto table : {matmul_cases, conv_cases, vector_cases, shape_cases, train_cases})
        for (Case &c : table())
            cases.push_back(std::move(c));
    return cases;
}

namespace {

std::size_t elements(const Shape &shape) {
    std::size_t n = 1;
    for (std::size_t d : shape)
        n *= d;
    return n;
}

// The operand's initial bytes, from the case's seed and the operand's index.
std::vector<std::byte> make(const Operand &o, std::uint64_t seed) {
    const std::size_t n = elements(o.shape), size = tpurt::element_size(o.type);
    Arrays a{{std::vector<std::byte>(n * size)}, {o.type}};
    std::mt19937_64 rng(seed);
    switch (o.fill.kind) {
    case Fill::Kind::Sentinel: // 0xa5 bytes: no value any op writes here by chance
        std::fill(a.bytes[0].begin(), a.bytes[0].end(), std::byte{0xa5});
        return a.bytes[0];
    case Fill::Kind::Values:
        REQUIRE(o.fill.values.size() == n);
        a.store(0, o.fill.values);
        return a.bytes[0];
    case Fill::Kind::OneHot: {
        std::vector<float> v(n, 0.0f);
        const std::size_t cols = o.shape.back();
        for (std::size_t r = 0; r < n / cols; ++r)
            v[r * cols + rng() % cols] = 1.0f;
        a.store(0, v);
        return a.bytes[0];
    }
    case Fill::Kind::Uniform:
        break;
    }
    std::vector<float> v(n);
    if (o.type == DType::Int8 || o.type == DType::Int32) {
        std::uniform_int_distribution<std::int64_t> d(static_cast<std::int64_t>(o.fill.lo),
                                                      static_cast<std::int64_t>(o.fill.hi));
        if (o.type == DType::Int32) { // all 32 bits: store() would round through float
            for (std::size_t e = 0; e < n; ++e) {
                const auto x = static_cast<std::int32_t>(d(rng));
                std::memcpy(&a.bytes[0][e * 4], &x, 4);
            }
            return a.bytes[0];
        }
        for (float &x : v)
            x = static_cast<float>(d(rng));
    } else {
        std::uniform_real_distribution<double> d(o.fill.lo, o.fill.hi);
        for (float &x : v)
            x = static_cast<float>(d(rng));
    }
    a.store(0, v);
    return a.bytes[0];
}

std::string describe(const Case &c) {
    std::ostringstream s;
    s << c.op << " " << c.label;
    for (const auto &[name, value] : c.attributes)
        s << " " << name << "=" << value;
    return s.str();
}

double value_at(const Arrays &a, std::size_t i, std::size_t e, const std::vector<float> &f) {
    if (a.types[i] == DType::Int32) {
        std::int32_t x;
        std::memcpy(&x, &a.bytes[i][e * 4], 4);
        return x;
    }
    return f[e];
}

// The first element where got and want differ beyond the case's tolerance, or "".
std::string first_difference(const Case &c, const Arrays &got, const Arrays &want, std::size_t i) {
    const std::size_t size = tpurt::element_size(got.types[i]);
    const std::size_t n = got.bytes[i].size() / size;
    if (want.bytes[i].size() != got.bytes[i].size())
        return "the golden model wrote " + std::to_string(want.bytes[i].size()) + " bytes, not " +
               std::to_string(got.bytes[i].size());
    const std::vector<float> g = got.floats(i), w = want.floats(i);
    const Tolerance &t = c.tolerance;
    for (std::size_t e = 0; e < n; ++e) {
        const double x = value_at(got, i, e, g), y = value_at(want, i, e, w);
        bool same;
        if (t.exact())
            same = std::memcmp(&got.bytes[i][e * size], &want.bytes[i][e * size], size) == 0;
        else
            same = (std::isnan(x) && std::isnan(y)) ||
                   std::fabs(x - y) <= t.abs + t.rel * std::fabs(y);
        if (!same) {
            std::ostringstream s;
            const auto text = [&](double v) {
                std::ostringstream t;
                t.precision(9);
                if (got.types[i] == DType::Int32)
                    t << static_cast<std::int64_t>(v);
                else
                    t << v;
                return t.str();
            };
            s << c.operands[i].name << "[" << e << "] of " << n << " is " << text(x)
              << ", the golden model says " << text(y)
              << (t.exact() ? " (exact)" : " (tolerance: " + t.reason + ")");
            return s.str();
        }
    }
    return {};
}

// Whether the elements between the rows of a strided view still hold the sentinel.
bool padding_untouched(const tpurt::Tensor &view, const Operand &o) {
    Shape whole = o.shape;
    whole.back() += o.row_pad;
    const std::size_t size = tpurt::element_size(o.type), row = whole.back() * size;
    const tpurt::Tensor parent(view.storage(), tpurt::TensorLayout::contiguous(o.type, whole));
    std::vector<std::byte> all(parent.layout().data_bytes());
    parent.copy_to_host(all.data(), all.size());
    for (std::size_t r = 0; r < all.size() / row; ++r)
        for (std::size_t b = o.shape.back() * size; b < row; ++b)
            if (all[r * row + b] != std::byte{0xa5})
                return false;
    return true;
}

void launch_and_compare(const Case &c, tpurt::Device &dev) {
    const std::uint64_t seed = std::hash<std::string>{}(c.op + " " + c.label);
    Arrays initial;
    std::vector<tpurt::Tensor> tensors;
    std::vector<const tpurt::Tensor *> operands;
    tensors.reserve(c.operands.size());
    for (std::size_t i = 0; i < c.operands.size(); ++i) {
        const Operand &o = c.operands[i];
        initial.types.push_back(o.type);
        if (o.absent) {
            initial.bytes.emplace_back();
            continue;
        }
        initial.bytes.push_back(make(o, seed + i));
    }
    if (c.derive)
        c.derive(initial);
    for (std::size_t i = 0; i < c.operands.size(); ++i) {
        const Operand &o = c.operands[i];
        if (o.absent) {
            operands.push_back(nullptr);
            continue;
        }
        if (o.row_pad == 0) {
            tensors.push_back(tpurt::Tensor::empty(dev, o.type, o.shape));
        } else { // rows of the view row_pad elements apart, the padding filled with the sentinel
            Shape whole = o.shape;
            whole.back() += o.row_pad;
            tpurt::Tensor parent = tpurt::Tensor::empty(dev, o.type, whole);
            const std::vector<std::byte> sentinel(parent.layout().data_bytes(), std::byte{0xa5});
            parent.copy_from_host(sentinel.data(), sentinel.size());
            tensors.push_back(parent.slice(o.shape.size() - 1, 0, o.shape.back()));
        }
        tensors.back().copy_from_host(initial.bytes[i].data(), initial.bytes[i].size());
        operands.push_back(&tensors.back());
    }
    std::vector<tpurt::OpAttribute> attributes;
    for (const auto &[name, value] : c.attributes)
        attributes.push_back({name, value});
    const tpurt::OpSequence launches = tpurt::prepare_op(dev, c.op, operands, attributes);
    launches.run(dev);

    Arrays want = initial, got = initial;
    c.golden(want);
    std::size_t t = 0;
    for (std::size_t i = 0; i < c.operands.size(); ++i) {
        if (c.operands[i].absent)
            continue;
        const tpurt::Tensor &tensor = tensors[t++];
        if (!c.operands[i].written)
            continue;
        tensor.copy_to_host(got.bytes[i].data(), got.bytes[i].size());
        const std::string difference = first_difference(c, got, want, i);
        INFO(difference);
        CHECK(difference.empty());
        if (c.operands[i].row_pad != 0)
            CHECK(padding_untouched(tensor, c.operands[i]));
    }
}

// The case on the device. A refusal or failed job fails the case (caught here, in the scope of
// the case's INFO: Catch2 keeps the messages of scopes an exception leaves).
void run_case(const Case &c, tpurt::Device &dev) {
    INFO(describe(c));
    try {
        launch_and_compare(c, dev);
    } catch (const std::exception &e) {
        FAIL_CHECK(e.what());
    }
}

} // namespace

} // namespace conformance

using namespace conformance;

TEST_CASE("every registered op has a conformance case or a named exclusion", "[conformance]") {
    std::set<std::string> covered, excluded;
    for (const Case &c : all_cases())
        covered.insert(c.op);
    for (const Exclusion &e : exclusions()) {
        INFO(e.op << " excluded: " << e.reason);
        CHECK(tpurt::find_op(e.op) != nullptr); // an exclusion of no op is stale
        CHECK(covered.count(e.op) == 0);
        excluded.insert(e.op);
    }
    for (std::size_t i = 0; i < tpurt::op_count(); ++i) {
        const std::string name(tpurt::op_info(i).name);
        INFO("registered op " << name << " has no case in tests/conformance/table_*.cpp");
        CHECK((covered.count(name) + excluded.count(name)) == 1);
    }
    for (const std::string &op : covered) {
        INFO("case of " << op << ", which is not a registered op");
        CHECK(tpurt::find_op(op) != nullptr);
    }
}

TEST_CASE("every registered op equals its golden model on every case", "[conformance]") {
    std::set<std::string> labels;
    for (const Case &c : all_cases()) {
        if (!labels.insert(c.op + " " + c.label).second) // labels seed the inputs: unique
            FAIL("two cases labelled " << c.op << " " << c.label);
        for (const TestDevice &d : devices()) {
            INFO("on " << d.name);
            run_case(c, *d.device);
        }
    }
}
