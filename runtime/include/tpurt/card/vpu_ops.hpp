// SPDX-License-Identifier: MIT
// vpu_ops.hpp - the operations of the card's vector unit, with the values tpu_hw.h gives them:
// ACTIVATE's functions, VECTOR's elementwise operations, REDUCE's and POOL's reductions.
#pragma once

#include <tpu_hw.h>

namespace tpurt {

enum class Activation : unsigned char {
    None = TPU_ACT_NONE,
    Relu = TPU_ACT_RELU,
    Relu6 = TPU_ACT_RELU6,
    Gelu = TPU_ACT_GELU, // tanh approximation
    Sigmoid = TPU_ACT_SIGMOID,
    Tanh = TPU_ACT_TANH,
    Exp = TPU_ACT_EXP,
    Log = TPU_ACT_LOG,     // spec 1.4 (TPU_CAP_VPU_TRAIN)
    Sqrt = TPU_ACT_SQRT,   // spec 1.4
    Rsqrt = TPU_ACT_RSQRT, // spec 1.4
    Recip = TPU_ACT_RECIP, // spec 1.4
    Erf = TPU_ACT_ERF,     // spec 2.3 (TPU_CAP_ACT_ERF)
};

// The CAPS bit a card needs for ACTIVATE to compute f (0: every card with a vector unit).
constexpr unsigned activation_cap(Activation f) {
    if (f == Activation::Erf)
        return TPU_CAP_ACT_ERF;
    if (f >= Activation::Log)
        return TPU_CAP_VPU_TRAIN;
    return 0;
}

enum class VectorOp : unsigned char {
    Add = TPU_VOP_ADD,
    Sub = TPU_VOP_SUB,
    Mul = TPU_VOP_MUL,
    Max = TPU_VOP_MAX,
    Min = TPU_VOP_MIN,
    Div = TPU_VOP_DIV,   // spec 1.4 (TPU_CAP_VPU_TRAIN)
    Gate = TPU_VOP_GATE, // spec 1.4: a > 0 ? b : 0
    Gt = TPU_VOP_GT,     // spec 1.4: a > b ? 1 : 0
    Eq = TPU_VOP_EQ,     // spec 1.4: a == b ? 1 : 0
};

enum class ReduceOp : unsigned char {
    Sum = TPU_ROP_SUM,
    Max = TPU_ROP_MAX,
};

enum class PoolOp : unsigned char {
    Max = TPU_POOL_MAX,
    Avg = TPU_POOL_AVG,
};

constexpr const char *activation_name(Activation f) {
    switch (f) {
    case Activation::None:
        return "none";
    case Activation::Relu:
        return "relu";
    case Activation::Relu6:
        return "relu6";
    case Activation::Gelu:
        return "gelu";
    case Activation::Sigmoid:
        return "sigmoid";
    case Activation::Tanh:
        return "tanh";
    case Activation::Exp:
        return "exp";
    case Activation::Log:
        return "log";
    case Activation::Sqrt:
        return "sqrt";
    case Activation::Rsqrt:
        return "rsqrt";
    case Activation::Recip:
        return "recip";
    case Activation::Erf:
        return "erf";
    }
    return "?";
}

} // namespace tpurt
