// SPDX-License-Identifier: MIT
// op_text.hpp - what the card's binders (card_ops.cpp, quant_ops.cpp) share: a card op prepared
// by name through libtpurt's op registry with its attributes given as text, slice_copy appended
// to a sequence, and the refusal naming the node.
#pragma once

#include "tpumodel/card_executor.hpp"
#include "tpumodel/model.hpp"

#include <tpurt/ops/op_registry.hpp>

#include <cstdio>
#include <deque>
#include <span>
#include <string>
#include <vector>

namespace tpumodel::card {

// Node `n` cannot run on the card as its card op, for `why`.
[[noreturn]] inline void cannot(const Node &n, const std::string &why) {
    throw ExecError(n.describe() + " on the card's " + n.card_op + ": " + why);
}

// Attributes by name as text; the strings stay where they are while the list grows.
class Attributes {
  public:
    Attributes &add(const char *name, std::string value) {
        text_.push_back(std::move(value));
        list_.push_back({name, text_.back()});
        return *this;
    }
    Attributes &add(const char *name, std::int64_t value) {
        return add(name, std::to_string(value));
    }
    Attributes &add(const char *name, float value) {
        char text[32];
        std::snprintf(text, sizeof text, "%a", double(value)); // exact
        return add(name, std::string(text));
    }
    std::span<const tpurt::OpAttribute> list() const { return list_; }

  private:
    std::deque<std::string> text_;
    std::vector<tpurt::OpAttribute> list_;
};

inline tpurt::OpSequence prepare(tpurt::Device &device, const char *op,
                                 std::vector<const tpurt::Tensor *> operands,
                                 const Attributes &attributes = {}) {
    return tpurt::prepare_op(device, op, operands, attributes.list());
}

// `count` slices of `a` along `axis` from `src` into `out` at `dst`, appended to `ops`.
inline void slice_copy(tpurt::Device &d, tpurt::OpSequence &ops, const tpurt::Tensor &a,
                       const tpurt::Tensor &out, std::size_t axis, std::size_t src, std::size_t dst,
                       std::size_t count) {
    Attributes attributes;
    attributes.add("axis", std::int64_t(axis))
        .add("src_start", std::int64_t(src))
        .add("dst_start", std::int64_t(dst))
        .add("count", std::int64_t(count));
    tpurt::OpSequence copy = prepare(d, "slice_copy", {&a, &out}, attributes);
    ops.launches.insert(ops.launches.end(), copy.launches.begin(), copy.launches.end());
}

} // namespace tpumodel::card
