// SPDX-License-Identifier: MIT
// op_attributes.cpp - parsing attribute values given as text (see op_attributes.hpp).
#include "exec/op_attributes.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <utility>

namespace tpurt::detail {

namespace {

template <class E, std::size_t N> using Names = std::array<std::pair<const char *, E>, N>;

constexpr Names<VectorOp, 9> vector_ops{{{"add", VectorOp::Add},
                                         {"sub", VectorOp::Sub},
                                         {"mul", VectorOp::Mul},
                                         {"max", VectorOp::Max},
                                         {"min", VectorOp::Min},
                                         {"div", VectorOp::Div},
                                         {"gate", VectorOp::Gate},
                                         {"gt", VectorOp::Gt},
                                         {"eq", VectorOp::Eq}}};
constexpr Names<Activation, 12> activations{{{"none", Activation::None},
                                             {"relu", Activation::Relu},
                                             {"relu6", Activation::Relu6},
                                             {"gelu", Activation::Gelu},
                                             {"sigmoid", Activation::Sigmoid},
                                             {"tanh", Activation::Tanh},
                                             {"exp", Activation::Exp},
                                             {"log", Activation::Log},
                                             {"sqrt", Activation::Sqrt},
                                             {"rsqrt", Activation::Rsqrt},
                                             {"recip", Activation::Recip},
                                             {"erf", Activation::Erf}}};
constexpr Names<ReduceOp, 2> reduce_ops{{{"sum", ReduceOp::Sum}, {"max", ReduceOp::Max}}};
constexpr Names<PoolOp, 2> pool_ops{{{"max", PoolOp::Max}, {"avg", PoolOp::Avg}}};
constexpr Names<GradFunction, 4> grad_functions{{{"relu", GradFunction::Relu},
                                                 {"sigmoid", GradFunction::Sigmoid},
                                                 {"tanh", GradFunction::Tanh},
                                                 {"gelu", GradFunction::Gelu}}};

template <class E, std::size_t N>
bool lookup(const Names<E, N> &names, std::string_view text, E &out) {
    for (const auto &[name, value] : names)
        if (text == name) {
            out = value;
            return true;
        }
    return false;
}

template <class E, std::size_t N> std::string one_of(const Names<E, N> &names) {
    std::string list = "one of";
    for (const auto &entry : names)
        list += std::string(" ") + entry.first;
    return list;
}

} // namespace

bool parse_value(std::string_view text, float &out) {
    const std::string s(text);
    char *end = nullptr;
    errno = 0;
    out = std::strtof(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size() && errno == 0;
}

bool parse_value(std::string_view text, std::uint64_t &out) {
    const std::string s(text);
    char *end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || s[0] < '0' || s[0] > '9' || end != s.c_str() + s.size() || errno != 0)
        return false;
    out = value;
    return true;
}

bool parse_value(std::string_view text, std::uint32_t &out) {
    std::uint64_t value = 0;
    if (!parse_value(text, value) || value > UINT32_MAX)
        return false;
    out = static_cast<std::uint32_t>(value);
    return true;
}

bool parse_value(std::string_view text, std::vector<std::uint64_t> &out) {
    std::vector<std::uint64_t> list;
    while (true) {
        const std::size_t comma = text.find(',');
        std::uint64_t value = 0;
        if (!parse_value(text.substr(0, comma), value))
            return false;
        list.push_back(value);
        if (comma == std::string_view::npos)
            break;
        text.remove_prefix(comma + 1);
    }
    out = std::move(list);
    return true;
}

bool parse_value(std::string_view text, VectorOp &out) {
    return lookup(vector_ops, text, out);
}
bool parse_value(std::string_view text, Activation &out) {
    return lookup(activations, text, out);
}
bool parse_value(std::string_view text, ReduceOp &out) {
    return lookup(reduce_ops, text, out);
}
bool parse_value(std::string_view text, PoolOp &out) {
    return lookup(pool_ops, text, out);
}
bool parse_value(std::string_view text, GradFunction &out) {
    return lookup(grad_functions, text, out);
}

std::string expected(float) {
    return "a number";
}
std::string expected(std::uint32_t) {
    return "an integer from 0 to 4294967295";
}
std::string expected(std::uint64_t) {
    return "a non-negative integer";
}
std::string expected(const std::vector<std::uint64_t> &) {
    return "a list of non-negative integers separated by commas";
}
std::string expected(VectorOp) {
    return one_of(vector_ops);
}
std::string expected(Activation) {
    return one_of(activations);
}
std::string expected(ReduceOp) {
    return one_of(reduce_ops);
}
std::string expected(PoolOp) {
    return one_of(pool_ops);
}
std::string expected(GradFunction) {
    return one_of(grad_functions);
}

} // namespace tpurt::detail
