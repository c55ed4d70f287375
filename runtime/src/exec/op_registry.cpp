// SPDX-License-Identifier: MIT
// op_registry.cpp - the list of registered ops (ops/registered_ops.def) and the registry by
// name (see op_registry.hpp).
#include "exec/op_registry.hpp"

#include "tpurt/error.hpp"

namespace tpurt {

namespace detail {

#define TPURT_OP(entry) const RegisteredOp &entry();
#include "ops/registered_ops.def"
#undef TPURT_OP

const std::vector<const RegisteredOp *> &registered_ops() {
    static const std::vector<const RegisteredOp *> ops{
#define TPURT_OP(entry) &entry(),
#include "ops/registered_ops.def"
#undef TPURT_OP
    };
    return ops;
}

namespace {

const RegisteredOp &registered(std::string_view name) {
    for (const RegisteredOp *op : registered_ops())
        if (op->info.name == name)
            return *op;
    throw Error(ErrorCode::InvalidArgument,
                "no op named '" + std::string(name) + "' (" +
                    std::to_string(registered_ops().size()) +
                    " are registered: op_count() and op_info() list them)");
}

} // namespace

} // namespace detail

std::string OpInfo::signature() const {
    std::string text = std::string(name) + "(";
    for (std::size_t i = 0; i < operands.size(); ++i)
        text += std::string(i ? ", " : "") + operands[i].name + (operands[i].optional ? "?" : "");
    for (std::size_t i = 0; i < attributes.size(); ++i)
        text += std::string(i ? ", " : "; ") + attributes[i];
    return text + ")";
}

std::size_t op_count() {
    return detail::registered_ops().size();
}

const OpInfo &op_info(std::size_t index) {
    if (index >= op_count())
        throw Error(ErrorCode::InvalidArgument, "op index " + std::to_string(index) +
                                                    " is beyond the " + std::to_string(op_count()) +
                                                    " registered ops");
    return detail::registered_ops()[index]->info;
}

const OpInfo *find_op(std::string_view name) {
    for (const detail::RegisteredOp *op : detail::registered_ops())
        if (op->info.name == name)
            return &op->info;
    return nullptr;
}

OpSequence prepare_op(Device &device, std::string_view name,
                      std::span<const Tensor *const> operands,
                      std::span<const OpAttribute> attributes) {
    return detail::registered(name).prepare(device, operands, attributes);
}

Executable compile_op(const DeviceInfo &info, std::string_view name,
                      std::span<const TensorLayout *const> operands,
                      std::span<const OpAttribute> attributes) {
    const detail::RegisteredOp &op = detail::registered(name);
    if (!op.compile)
        throw Error(
            ErrorCode::Unsupported,
            std::string(name) +
                " is a composite op (other ops' launches, or scratch of its own): "
                "prepare_op() runs it on a device, compile_op() compiles single-kernel ops");
    return op.compile(info, operands, attributes);
}

std::vector<KeyFieldCheck> op_key_checks(std::string_view op, const ArrayLimits &limits) {
    const detail::RegisteredOp &entry = detail::registered(op);
    return entry.key_checks ? entry.key_checks(limits) : std::vector<KeyFieldCheck>{};
}

} // namespace tpurt
