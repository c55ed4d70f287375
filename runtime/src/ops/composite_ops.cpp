// SPDX-License-Identifier: MIT
// composite_ops.cpp - the ops made of other ops' launches or with an executable and scratch of
// their own, registered by name on top of their typed prepare functions: divide (elementwise
// DIV), matmul_tn and matmul_nt (a TRANSPOSE into scratch, then the matmul), column_sums (the
// reduction over columns), the pooling gradients (scratch of the padded image), batched_matmul, the
// convolution gradients and grouped convolutions. Each composite op is named, its operands and
// attributes declared, and its prepare() calls the typed form (exec/op_registry.hpp).
#include "exec/op_registry.hpp"
#include "tpurt/ops/grouped_conv2d.hpp"
#include "tpurt/ops/shape_ops.hpp"
#include "tpurt/ops/train_ops.hpp"

namespace tpurt {

namespace detail {

namespace {

struct NoAttributes {};
constexpr std::array<const char *, 0> no_attributes{};

// Window attributes of the pooling gradients, as pool2d's.
struct WindowAttributes {
    std::uint32_t window_h = 2, window_w = 2, stride_h = 2, stride_w = 2, pad_h = 0, pad_w = 0;
};
constexpr std::array<const char *, 6> window_attributes{"window_h", "window_w", "stride_h",
                                                        "stride_w", "pad_h",    "pad_w"};
PoolWindow window_of(const WindowAttributes &a) {
    return {a.window_h, a.window_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w};
}

// Strides, padding and dilation of the convolution gradients and grouped convolutions.
struct ConvAttributes {
    std::uint32_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
};
constexpr std::array<const char *, 6> conv_attributes{"stride_h", "stride_w",   "pad_h",
                                                      "pad_w",    "dilation_h", "dilation_w"};
Conv2dParams params_of(const ConvAttributes &a) {
    return {a.stride_h, a.stride_w, a.pad_h, a.pad_w};
}

struct DivideOp {
    static constexpr const char *name = "divide";
    static constexpr std::array<OpOperand, 3> operands{{{"a"}, {"b"}, {"out"}}};
    using Attributes = NoAttributes;
    static constexpr auto attributes = no_attributes;
    static OpSequence prepare(Device &d, const Tensors<DivideOp> &t, const Attributes &) {
        return {{prepare_divide(d, *t[0], *t[1], *t[2])}};
    }
};

struct MatmulTnOp {
    static constexpr const char *name = "matmul_tn";
    static constexpr std::array<OpOperand, 3> operands{{{"a"}, {"b"}, {"c"}}};
    using Attributes = NoAttributes;
    static constexpr auto attributes = no_attributes;
    static OpSequence prepare(Device &d, const Tensors<MatmulTnOp> &t, const Attributes &) {
        return prepare_matmul_tn(d, *t[0], *t[1], *t[2]);
    }
};

struct MatmulNtOp {
    static constexpr const char *name = "matmul_nt";
    static constexpr std::array<OpOperand, 3> operands{{{"a"}, {"b"}, {"c"}}};
    using Attributes = NoAttributes;
    static constexpr auto attributes = no_attributes;
    static OpSequence prepare(Device &d, const Tensors<MatmulNtOp> &t, const Attributes &) {
        return prepare_matmul_nt(d, *t[0], *t[1], *t[2]);
    }
};

struct ColumnSumsOp {
    static constexpr const char *name = "column_sums";
    static constexpr std::array<OpOperand, 2> operands{{{"a"}, {"out"}}};
    using Attributes = NoAttributes;
    static constexpr auto attributes = no_attributes;
    static OpSequence prepare(Device &d, const Tensors<ColumnSumsOp> &t, const Attributes &) {
        return prepare_column_sums(d, *t[0], *t[1]);
    }
};

struct MaxPoolGradOp {
    static constexpr const char *name = "max_pool2d_grad";
    static constexpr std::array<OpOperand, 4> operands{{{"x"}, {"y"}, {"dy"}, {"dx"}}};
    using Attributes = WindowAttributes;
    static constexpr auto attributes = window_attributes;
    static OpSequence prepare(Device &d, const Tensors<MaxPoolGradOp> &t, const Attributes &a) {
        return {{prepare_max_pool2d_grad(d, *t[0], *t[1], *t[2], *t[3], window_of(a))}};
    }
};

struct AvgPoolGradOp {
    static constexpr const char *name = "avg_pool2d_grad";
    static constexpr std::array<OpOperand, 2> operands{{{"dy"}, {"dx"}}};
    using Attributes = WindowAttributes;
    static constexpr auto attributes = window_attributes;
    static OpSequence prepare(Device &d, const Tensors<AvgPoolGradOp> &t, const Attributes &a) {
        return {{prepare_avg_pool2d_grad(d, *t[0], *t[1], window_of(a))}};
    }
};

struct BatchedMatmulOp {
    static constexpr const char *name = "batched_matmul";
    static constexpr std::array<OpOperand, 3> operands{{{"a"}, {"b"}, {"c"}}};
    using Attributes = NoAttributes;
    static constexpr auto attributes = no_attributes;
    static OpSequence prepare(Device &d, const Tensors<BatchedMatmulOp> &t, const Attributes &) {
        return {{prepare_batched_matmul(d, *t[0], *t[1], *t[2])}};
    }
};

struct ConvInputGradOp {
    static constexpr const char *name = "conv2d_input_grad";
    static constexpr std::array<OpOperand, 3> operands{{{"dy"}, {"weights"}, {"dx"}}};
    using Attributes = ConvAttributes;
    static constexpr auto attributes = conv_attributes;
    static OpSequence prepare(Device &d, const Tensors<ConvInputGradOp> &t, const Attributes &a) {
        return {{prepare_conv2d_input_grad(d, *t[0], *t[1], *t[2], params_of(a),
                                           {a.dilation_h, a.dilation_w})}};
    }
};

struct ConvWeightGradOp {
    static constexpr const char *name = "conv2d_weight_grad";
    static constexpr std::array<OpOperand, 3> operands{{{"x"}, {"dy"}, {"dw"}}};
    using Attributes = ConvAttributes;
    static constexpr auto attributes = conv_attributes;
    static OpSequence prepare(Device &d, const Tensors<ConvWeightGradOp> &t, const Attributes &a) {
        return {{prepare_conv2d_weight_grad(d, *t[0], *t[1], *t[2], params_of(a),
                                            {a.dilation_h, a.dilation_w})}};
    }
};

struct GroupedConvAttributes {
    std::uint32_t groups = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1,
                  dilation_w = 1;
};

struct GroupedConvOp {
    static constexpr const char *name = "grouped_conv2d";
    static constexpr std::array<OpOperand, 3> operands{{{"input"}, {"weights"}, {"output"}}};
    using Attributes = GroupedConvAttributes;
    static constexpr std::array<const char *, 7> attributes{
        "groups", "stride_h", "stride_w", "pad_h", "pad_w", "dilation_h", "dilation_w"};
    static OpSequence prepare(Device &d, const Tensors<GroupedConvOp> &t, const Attributes &a) {
        return {
            {prepare_grouped_conv2d(d, *t[0], *t[1], *t[2], {a.groups, a.dilation_h, a.dilation_w},
                                    {a.stride_h, a.stride_w, a.pad_h, a.pad_w})}};
    }
};

} // namespace

} // namespace detail

TPURT_REGISTER_OP(divide_op, DivideOp);
TPURT_REGISTER_OP(matmul_tn_op, MatmulTnOp);
TPURT_REGISTER_OP(matmul_nt_op, MatmulNtOp);
TPURT_REGISTER_OP(column_sums_op, ColumnSumsOp);
TPURT_REGISTER_OP(max_pool2d_grad_op, MaxPoolGradOp);
TPURT_REGISTER_OP(avg_pool2d_grad_op, AvgPoolGradOp);
TPURT_REGISTER_OP(batched_matmul_op, BatchedMatmulOp);
TPURT_REGISTER_OP(conv2d_input_grad_op, ConvInputGradOp);
TPURT_REGISTER_OP(conv2d_weight_grad_op, ConvWeightGradOp);
TPURT_REGISTER_OP(grouped_conv2d_op, GroupedConvOp);

} // namespace tpurt
