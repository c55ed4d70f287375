// SPDX-License-Identifier: MIT
// c_api_registry.cpp - every registered op by name from C (tpurt.h): the list of ops with
// their signatures, and tpurt_op_launch() with tensors in the op's order and attributes by name.
#include "c_api/c_api_internal.hpp"

#include "tpurt/ops/op_registry.hpp"

#include <string>
#include <vector>

using tpurt::c_api::guarded;
using tpurt::c_api::require;

namespace {

// The signatures, made once (tpurt_op_signature() hands out pointers into them).
const std::vector<std::string> &signatures() {
    static const std::vector<std::string> all = [] {
        std::vector<std::string> list;
        for (std::size_t i = 0; i < tpurt::op_count(); ++i)
            list.push_back(tpurt::op_info(i).signature());
        return list;
    }();
    return all;
}

bool in_range(int index) {
    return index >= 0 && static_cast<std::size_t>(index) < tpurt::op_count();
}

} // namespace

extern "C" {

int tpurt_op_count(void) {
    return static_cast<int>(tpurt::op_count());
}

const char *tpurt_op_name(int index) {
    return in_range(index) ? tpurt::op_info(index).name.data() : nullptr;
}

const char *tpurt_op_signature(int index) {
    return in_range(index) ? signatures()[index].c_str() : nullptr;
}

int tpurt_op_launch(tpurt_device *dev, tpurt_stream *stream, const char *op,
                    tpurt_tensor *const *tensors, uint32_t tensor_count,
                    const struct tpurt_op_attr *attrs, uint32_t attr_count) {
    return guarded([&] {
        const char *call = "tpurt_op_launch";
        require(op, call, "op");
        if (tensor_count)
            require(tensors, call, "tensors");
        if (attr_count)
            require(attrs, call, "attrs");
        std::vector<const tpurt::Tensor *> operands;
        for (uint32_t i = 0; i < tensor_count; ++i)
            operands.push_back(tensors[i] ? &tensors[i]->tensor : nullptr);
        std::vector<tpurt::OpAttribute> attributes;
        for (uint32_t i = 0; i < attr_count; ++i) {
            require(attrs[i].name, call, "an attribute's name");
            require(attrs[i].value, call, "an attribute's value");
            attributes.push_back({attrs[i].name, attrs[i].value});
        }
        tpurt::Device &device = tpurt::c_api::device_of(dev, stream, call);
        return tpurt::c_api::run_or_queue(
            dev, stream, tpurt::prepare_op(device, op, operands, attributes), call);
    });
}

} // extern "C"
