// SPDX-License-Identifier: MIT
// op_registry.hpp - internal: an op declared once, in its folder, and everything the runtime
// derives from it. An op is a struct
//   using Kernel = XKernel;                          // op_kernel.hpp: problem -> executable
//   static constexpr const char *name = "x";         // its registry name
//   static constexpr std::array<OpOperand, N> operands{{{"a"}, {"out"}}}; // kernel's order
//   struct Attributes { ... };                       // an aggregate with defaults
//   static constexpr std::array<const char *, M> attributes{...}; // its fields' names
//   static Kernel::Problem check(const DeviceInfo &, const Layouts<XOp> &, const Attributes &);
// A composite op (several launches, or an executable of its own with scratch) declares instead
// of Kernel and check() how it is prepared:
//   static OpSequence prepare(Device &, const Tensors<XOp> &, const Attributes &);
// registered by TPURT_REGISTER_OP(x_op, XOp) in its source and one line TPURT_OP(x_op) in
// ops/registered_ops.def. Generic: prepare<Op>() (check, the cached executable, the launch on
// the tensors), its blocking and stream forms run<Op>() and enqueue<Op>(), attributes by name,
// and the registry entry behind op_registry.hpp and the C API's tpurt_op_launch().
#pragma once

#include "exec/op_attributes.hpp"
#include "exec/op_kernel.hpp"
#include "ops/op_checks.hpp"
#include "tpurt/card/launch.hpp"
#include "tpurt/ops/op_registry.hpp"
#include "tpurt/stream.hpp"

#include <array>
#include <concepts>
#include <span>
#include <string>
#include <vector>

namespace tpurt::detail {

template <class Op> using Layouts = std::array<const TensorLayout *, Op::operands.size()>;
template <class Op> using Tensors = std::array<const Tensor *, Op::operands.size()>;

// Throws InvalidArgument for a null operand the op does not take as optional.
template <class Op, class T>
void require_operands(const std::array<const T *, Op::operands.size()> &given) {
    for (std::size_t i = 0; i < given.size(); ++i)
        if (!given[i] && !Op::operands[i].optional)
            refuse(Op::name, std::string("operand ") + std::to_string(i) + " (" +
                                 Op::operands[i].name + ") is missing");
}

template <class Op> Layouts<Op> layouts_of(const Tensors<Op> &tensors) {
    Layouts<Op> layouts{};
    for (std::size_t i = 0; i < tensors.size(); ++i)
        layouts[i] = tensors[i] ? &tensors[i]->layout() : nullptr;
    return layouts;
}

template <class Op>
concept CompositeOp = requires(Device &device, const Tensors<Op> &tensors,
                               const typename Op::Attributes &attributes) {
    { Op::prepare(device, tensors, attributes) } -> std::same_as<OpSequence>;
};

template <class Op>
OpLaunch prepare(Device &device, const Tensors<Op> &tensors,
                 const typename Op::Attributes &attributes = {}) {
    require_operands<Op>(tensors);
    const typename Op::Kernel::Problem problem =
        Op::check(device.info(), layouts_of<Op>(tensors), attributes);
    return launch_of(kernel_executable<typename Op::Kernel>(device, problem), tensors);
}

template <class Op>
MatmulStats run(Device &device, const Tensors<Op> &tensors,
                const typename Op::Attributes &attributes, std::chrono::nanoseconds timeout) {
    return prepare<Op>(device, tensors, attributes).run(device, timeout);
}

template <class Op>
void enqueue(Stream &stream, const Tensors<Op> &tensors,
             const typename Op::Attributes &attributes = {}) {
    stream.enqueue(prepare<Op>(stream.device(), tensors, attributes));
}

// Attributes given by name as text, into the op's aggregate (the others keep their defaults).
template <class Op> typename Op::Attributes parse_attributes(std::span<const OpAttribute> given) {
    using Attributes = typename Op::Attributes;
    static_assert(Op::attributes.size() == key::field_count<Attributes>(),
                  "an op names every field of its Attributes, in order");
    Attributes parsed{};
    std::vector<std::string_view> seen;
    for (const OpAttribute &attribute : given) {
        for (std::string_view name : seen)
            if (name == attribute.name)
                refuse(Op::name, "attribute " + std::string(attribute.name) + " given twice");
        seen.push_back(attribute.name);
        bool known = false;
        std::size_t index = 0;
        std::apply(
            [&](auto &...field) {
                [[maybe_unused]] const auto one = [&](auto &value) {
                    if (attribute.name != Op::attributes[index++])
                        return;
                    known = true;
                    if (!parse_value(attribute.value, value))
                        refuse(Op::name, "attribute " + std::string(attribute.name) + " = '" +
                                             std::string(attribute.value) + "' is not " +
                                             expected(value));
                };
                (one(field), ...);
            },
            key::fields_of(parsed));
        if (!known) {
            std::string names;
            for (const char *name : Op::attributes)
                names += std::string(names.empty() ? "" : ", ") + name;
            refuse(Op::name, "no attribute '" + std::string(attribute.name) + "' (" +
                                 (names.empty() ? "it has none" : "its attributes: " + names) +
                                 ")");
        }
    }
    return parsed;
}

// `given` as exactly the op's operands, refused otherwise.
template <class Op, class T>
std::array<const T *, Op::operands.size()> operands_of(std::span<const T *const> given) {
    std::array<const T *, Op::operands.size()> operands{};
    if (given.size() != operands.size()) {
        std::string names;
        for (const OpOperand &o : Op::operands)
            names += std::string(names.empty() ? "" : ", ") + o.name + (o.optional ? "?" : "");
        refuse(Op::name, "takes " + std::to_string(operands.size()) + " tensors (" + names +
                             "), got " + std::to_string(given.size()));
    }
    std::copy(given.begin(), given.end(), operands.begin());
    require_operands<Op>(operands);
    return operands;
}

struct RegisteredOp {
    OpInfo info;
    OpSequence (*prepare)(Device &, std::span<const Tensor *const>, std::span<const OpAttribute>);
    // Null for a composite op.
    Executable (*compile)(const DeviceInfo &, std::span<const TensorLayout *const>,
                          std::span<const OpAttribute>);
    std::vector<KeyFieldCheck> (*key_checks)(const ArrayLimits &);
};

template <CompositeOp Op> const RegisteredOp &registered_op() {
    static const RegisteredOp entry{.info = {.name = Op::name,
                                             .operands = Op::operands,
                                             .attributes = Op::attributes,
                                             .composite = true},
                                    .prepare =
                                        [](Device &device, std::span<const Tensor *const> tensors,
                                           std::span<const OpAttribute> attributes) {
                                            return Op::prepare(device, operands_of<Op>(tensors),
                                                               parse_attributes<Op>(attributes));
                                        },
                                    .compile = nullptr,
                                    .key_checks = nullptr};
    return entry;
}

template <class Op> const RegisteredOp &registered_op() {
    static const RegisteredOp entry{
        .info = {.name = Op::name,
                 .operands = Op::operands,
                 .attributes = Op::attributes,
                 .composite = false},
        .prepare =
            [](Device &device, std::span<const Tensor *const> tensors,
               std::span<const OpAttribute> attributes) {
                return OpSequence{{prepare<Op>(device, operands_of<Op>(tensors),
                                               parse_attributes<Op>(attributes))}};
            },
        .compile =
            [](const DeviceInfo &info, std::span<const TensorLayout *const> layouts,
               std::span<const OpAttribute> attributes) {
                return compile_kernel<typename Op::Kernel>(
                    Op::check(info, operands_of<Op>(layouts), parse_attributes<Op>(attributes)),
                    info.limits);
            },
        .key_checks = kernel_key_checks<typename Op::Kernel>};
    return entry;
}

// Every registered op (ops/registered_ops.def), in registration order.
const std::vector<const RegisteredOp *> &registered_ops();

} // namespace tpurt::detail

// At namespace tpurt scope, in the op's source file: the op's registry entry, listed in
// ops/registered_ops.def as TPURT_OP(function).
#define TPURT_REGISTER_OP(function, Op)                                                            \
    namespace detail {                                                                             \
    const RegisteredOp &function() {                                                               \
        return registered_op<Op>();                                                                \
    }                                                                                              \
    }                                                                                              \
    static_assert(true)
