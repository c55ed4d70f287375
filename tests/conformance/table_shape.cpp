// SPDX-License-Identifier: MIT
// table_shape.cpp - the conformance cases of the ops over a tensor's axes: reduce_axis (sum and
// max over the first, a middle and the last axis), mean, permute (any order, ranks 2-4) and
// slice_copy (an axis's range into another place of out, the rest of out kept),
// exact against golden models of codegen/axis_compiler.hpp: REDUCE's sum in ascending order
// along the axis (int32 wrapping, written here; binary32 for bf16 and fp32 and the mean that
// fp32 sum times 1.0f / length, golden/reference_reduce.hpp), permutations exact copies.
#include "conformance.hpp"

#include <tpurt/golden/reference_reduce.hpp>

#include <algorithm>
#include <limits>
#include <set>

namespace conformance {

namespace {

std::string describe(DType type, const Shape &s) {
    std::string l = tpurt::dtype_name(type);
    for (std::size_t i = 0; i < s.size(); ++i)
        l += (i ? "x" : " ") + std::to_string(s[i]);
    return l;
}

Fill inputs(DType type) {
    if (type == DType::Int8)
        return uniform(-128, 127);
    if (type == DType::Int32)
        return uniform(std::numeric_limits<std::int32_t>::min(),
                       std::numeric_limits<std::int32_t>::max());
    return uniform(-3, 3);
}

// The reduction of `a` (shape s) over `axis` as REDUCE computes it.
void reduce_golden(Arrays &x, DType type, const Shape &s, std::size_t axis, bool max, bool mean) {
    std::size_t outer = 1, inner = 1;
    for (std::size_t i = 0; i < axis; ++i)
        outer *= s[i];
    for (std::size_t i = axis + 1; i < s.size(); ++i)
        inner *= s[i];
    const std::size_t length = s[axis];
    const auto at = [&](std::size_t o, std::size_t l, std::size_t i) {
        return (o * length + l) * inner + i;
    };
    if (type == DType::Int8 || type == DType::Int32) {
        const std::vector<float> f = type == DType::Int8 ? x.floats(0) : std::vector<float>{};
        const auto value = [&](std::size_t e) -> std::int64_t {
            if (type == DType::Int8)
                return static_cast<std::int64_t>(f[e]);
            return x.as<std::int32_t>(0)[e];
        };
        std::vector<std::int64_t> r(outer * inner);
        for (std::size_t o = 0; o < outer; ++o)
            for (std::size_t i = 0; i < inner; ++i) {
                std::uint32_t sum = 0;
                std::int64_t m = std::numeric_limits<std::int64_t>::min();
                for (std::size_t l = 0; l < length; ++l) {
                    sum += static_cast<std::uint32_t>(value(at(o, l, i)));
                    m = std::max(m, value(at(o, l, i)));
                }
                r[o * inner + i] = max ? m : static_cast<std::int32_t>(sum);
            }
        if (max && type == DType::Int8) {
            x.bytes[1].resize(r.size());
            for (std::size_t e = 0; e < r.size(); ++e)
                x.bytes[1][e] = static_cast<std::byte>(static_cast<std::int8_t>(r[e]));
        } else {
            x.bytes[1].resize(r.size() * 4);
            for (std::size_t e = 0; e < r.size(); ++e) {
                const auto v = static_cast<std::int32_t>(r[e]);
                std::memcpy(&x.bytes[1][e * 4], &v, 4);
            }
        }
        return;
    }
    using tpurt::ReduceKind;
    x.store(1, tpurt::reference_reduce_axis(x.floats(0), outer, length, inner,
                                            max    ? ReduceKind::Max
                                            : mean ? ReduceKind::Mean
                                                   : ReduceKind::Sum));
}

Shape without(Shape s, std::size_t axis) {
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(axis));
    return s;
}

void permute_golden(Arrays &x, DType type, const Shape &s, const std::vector<std::size_t> &order) {
    const std::size_t size = tpurt::element_size(type), rank = s.size();
    std::vector<std::size_t> in_strides(rank, 1);
    for (std::size_t i = rank - 1; i > 0; --i)
        in_strides[i - 1] = in_strides[i] * s[i];
    std::vector<std::size_t> out_shape(rank), index(rank, 0);
    for (std::size_t i = 0; i < rank; ++i)
        out_shape[i] = s[order[i]];
    const std::size_t n = x.bytes[0].size() / size;
    for (std::size_t e = 0; e < n; ++e) { // e counts the output's elements, index is its index
        std::size_t from = 0;
        for (std::size_t i = 0; i < rank; ++i)
            from += index[i] * in_strides[order[i]];
        std::memcpy(&x.bytes[1][e * size], &x.bytes[0][from * size], size);
        for (std::size_t i = rank; i-- > 0;) {
            if (++index[i] < out_shape[i])
                break;
            index[i] = 0;
        }
    }
}

// out's elements [dst, dst + count) along `axis` = a's [src, src + count); the rest kept.
void slice_copy_golden(Arrays &x, DType type, const Shape &a, const Shape &out, std::size_t axis,
                       std::size_t src, std::size_t dst, std::size_t count) {
    const std::size_t size = tpurt::element_size(type);
    std::size_t outer = 1, inner = 1;
    for (std::size_t i = 0; i < axis; ++i)
        outer *= a[i];
    for (std::size_t i = axis + 1; i < a.size(); ++i)
        inner *= a[i];
    for (std::size_t o = 0; o < outer; ++o)
        std::memcpy(&x.bytes[1][((o * out[axis] + dst) * inner) * size],
                    &x.bytes[0][((o * a[axis] + src) * inner) * size], count * inner * size);
}

} // namespace

std::vector<Case> shape_cases() {
    std::vector<Case> cases;
    const std::vector<Shape> shapes{{1, 1}, {3, 131}, {2, 5, 7}, {3, 1, 4, 129}};
    for (DType type : {DType::Int8, DType::Int32, DType::Bf16, DType::Fp32}) {
        const DType sum_type =
            type == DType::Int8 || type == DType::Int32 ? DType::Int32 : DType::Fp32;
        for (const Shape &s : shapes) {
            for (std::size_t axis : std::set<std::size_t>{0, s.size() / 2, s.size() - 1}) {
                for (bool max : {false, true})
                    cases.push_back(
                        {"reduce_axis",
                         describe(type, s) + (max ? " max" : " sum") + " axis " +
                             std::to_string(axis),
                         {in("a", type, s, inputs(type)),
                          out("out", max ? type : sum_type, without(s, axis))},
                         {{"op", max ? "max" : "sum"}, {"axis", std::to_string(axis)}},
                         [=](Arrays &x) { reduce_golden(x, type, s, axis, max, false); }});
                if (type == DType::Bf16 || type == DType::Fp32)
                    cases.push_back(
                        {"mean",
                         describe(type, s) + " axis " + std::to_string(axis),
                         {in("a", type, s, inputs(type)),
                          out("out", DType::Fp32, without(s, axis))},
                         {{"axis", std::to_string(axis)}},
                         [=](Arrays &x) { reduce_golden(x, type, s, axis, false, true); }});
            }
        }
        const std::vector<std::pair<Shape, std::vector<std::size_t>>> permutes{
            {{1, 1}, {1, 0}},
            {{3, 131}, {1, 0}},
            {{2, 5, 7}, {2, 0, 1}},
            {{3, 2, 4, 129}, {0, 3, 1, 2}},
            {{2, 3, 5, 7}, {1, 0, 2, 3}}};
        for (const auto &[s, order] : permutes) {
            std::string text;
            Shape out_shape;
            for (std::size_t a : order) {
                text += (text.empty() ? "" : ",") + std::to_string(a);
                out_shape.push_back(s[a]);
            }
            cases.push_back({"permute",
                             describe(type, s) + " to " + text,
                             {in("a", type, s, inputs(type)), out("out", type, out_shape)},
                             {{"order", text}},
                             [=](Arrays &x) { permute_golden(x, type, s, order); }});
        }
        // slice_copy: a's shape, out's extent along the axis, axis, src_start, dst_start, count.
        struct Copy {
            Shape a;
            std::size_t out_length, axis, src, dst, count;
        };
        const std::vector<Copy> copies{{{1, 1}, 1, 0, 0, 0, 1},
                                       {{3, 131}, 262, 1, 0, 131, 131},
                                       {{2, 5, 7}, 3, 1, 1, 0, 3},
                                       {{4, 3, 2, 129}, 9, 0, 1, 6, 3},
                                       {{3, 2, 4, 5}, 2, 3, 4, 1, 1}};
        for (const Copy &c : copies) {
            Shape out_shape = c.a;
            out_shape[c.axis] = c.out_length;
            cases.push_back(
                {"slice_copy",
                 describe(type, c.a) + " axis " + std::to_string(c.axis) + " [" +
                     std::to_string(c.src) + ", +" + std::to_string(c.count) + ") to " +
                     std::to_string(c.dst) + " of " + std::to_string(c.out_length),
                 {in("a", type, c.a, inputs(type)), inout("out", type, out_shape, inputs(type))},
                 {{"axis", std::to_string(c.axis)},
                  {"src_start", std::to_string(c.src)},
                  {"dst_start", std::to_string(c.dst)},
                  {"count", std::to_string(c.count)}},
                 [=](Arrays &x) {
                     slice_copy_golden(x, type, c.a, out_shape, c.axis, c.src, c.dst, c.count);
                 }});
        }
    }
    return cases;
}

} // namespace conformance
