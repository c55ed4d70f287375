// SPDX-License-Identifier: MIT
// validate.cpp - the structural rules every model obeys, checked before writing and after
// reading: tensors of known rank and bounded size, constants holding exactly their data, ids in
// range, and a graph in topological order where every tensor has exactly one producer.
#include "tpumodel/model.hpp"

namespace tpumodel {

namespace {

void check_tensor(const Tensor &t, std::size_t id, const std::string &origin) {
    auto fail = [&](const std::string &what) {
        throw FormatError(origin, "tensor " + std::to_string(id) + " '" + t.name + "' " + what);
    };
    if (!dtype_known(std::uint8_t(t.dtype)))
        fail("has an unknown dtype " + std::to_string(int(t.dtype)));
    if (t.shape.size() > max_rank)
        fail("has rank " + std::to_string(t.shape.size()) + " (at most " +
             std::to_string(max_rank) + ")");
    std::uint64_t count = 1;
    for (std::int64_t d : t.shape) {
        if (d < 0)
            fail("has a negative dimension in " + t.shape_string());
        count *= std::uint64_t(d);
        if (count > max_elements)
            fail("has more than 2^32 elements: " + t.shape_string());
    }
    if (t.constant && t.data.size() != count * dtype_size(t.dtype))
        fail("holds " + std::to_string(t.data.size()) + " bytes of data, its shape " +
             t.shape_string() + " of " + dtype_name(t.dtype) + " needs " +
             std::to_string(count * dtype_size(t.dtype)));
    if (!t.constant && !t.data.empty())
        fail("is not a constant but holds data");
}

} // namespace

void validate(const Model &m, const std::string &origin) {
    const std::size_t n = m.tensors.size();
    for (std::size_t i = 0; i < n; ++i)
        check_tensor(m.tensors[i], i, origin);

    // ready[i]: tensor i has its value at this point of the graph (constant, input or produced).
    std::vector<bool> ready(n, false);
    for (std::size_t i = 0; i < n; ++i)
        ready[i] = m.tensors[i].constant;
    auto id_ok = [&](std::uint32_t id, const std::string &where) {
        if (id >= n)
            throw FormatError(origin, where + " refers to tensor " + std::to_string(id) +
                                          ", out of range (the model has " + std::to_string(n) +
                                          " tensors)");
    };
    for (std::uint32_t id : m.inputs) {
        id_ok(id, "a graph input");
        if (ready[id])
            throw FormatError(origin, "graph input '" + m.tensors[id].name +
                                          "' is a constant or listed twice");
        ready[id] = true;
    }
    for (const Node &node : m.nodes) {
        if (node.placement == Placement::Card && node.card_op.empty())
            throw FormatError(origin, node.describe() + " is placed on the card without a card op");
        for (std::uint32_t id : node.inputs) {
            if (id == no_tensor)
                continue;
            id_ok(id, node.describe() + "'s input");
            if (!ready[id])
                throw FormatError(origin, node.describe() + " reads tensor '" + m.tensors[id].name +
                                              "' before any node produces it (a cycle, a missing "
                                              "initialiser or nodes out of order)");
        }
        for (std::uint32_t id : node.outputs) {
            id_ok(id, node.describe() + "'s output");
            if (ready[id])
                throw FormatError(origin, node.describe() + " writes tensor '" +
                                              m.tensors[id].name + "', which already has a value");
            ready[id] = true;
        }
    }
    for (std::uint32_t id : m.outputs) {
        id_ok(id, "a graph output");
        if (!ready[id])
            throw FormatError(origin,
                              "graph output '" + m.tensors[id].name + "' is produced by no node");
    }
}

} // namespace tpumodel
