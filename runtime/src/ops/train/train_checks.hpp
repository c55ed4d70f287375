// SPDX-License-Identifier: MIT
// train_checks.hpp - internal: the operand checks the training ops share (softmax, activation
// gradients, optimizers, layer norm, pooling gradients): a card with the spec 1.4 training
// instructions, densely packed fp32 (or fp32 or bf16) tensors, matching shapes, dimensions the
// programs can hold; each refusal names the op and the operand's dtype. And their mixed dtypes
// in profile names.
#pragma once

#include "ops/op_checks.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/error.hpp"
#include "tpurt/types/tensor_layout.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>

namespace tpurt::detail {

// The card runs spec 1.4's training instructions and fp32 matmuls (the programs move values
// through the accumulators with a 1 x 1 fp32 weight).
inline void require_train_unit(const DeviceInfo &info, const std::string &op) {
    if (!(info.caps & TPU_CAP_VPU_TRAIN) || !info.supports(DType::Fp32))
        throw Error(ErrorCode::Unsupported,
                    op +
                        " needs a card with the spec 1.4 training instructions and an fp32 "
                        "matrix unit (caps " +
                        std::to_string(info.caps) + ")");
}

inline void require_fp32_dense(const std::string &op, const char *name, const TensorLayout &t) {
    if (t.dtype() != DType::Fp32 || !t.is_contiguous() || t.rank() == 0)
        refuse(op,
               std::string(name) + " " + t.describe() + " must be a densely packed fp32 tensor");
}

// A densely packed fp32 or bf16 tensor; returns its dtype.
inline DType require_float_dense(const std::string &op, const char *name, const TensorLayout &t) {
    if ((t.dtype() != DType::Fp32 && t.dtype() != DType::Bf16) || !t.is_contiguous() ||
        t.rank() == 0)
        refuse(op, std::string(name) + " " + t.describe() + " is " + dtype_name(t.dtype()) +
                       ": it must be a densely packed fp32 or bf16 tensor");
    return t.dtype();
}

inline void require_same_shape(const std::string &op, const TensorLayout &a, const char *name,
                               const TensorLayout &b) {
    if (b.shape() != a.shape())
        refuse(op,
               std::string(name) + " " + b.describe() + " does not have the shape " + a.describe());
}

inline std::uint32_t dim32(const std::string &op, std::uint64_t v, const TensorLayout &t) {
    if (v == 0 || v > UINT32_MAX)
        refuse(op, t.describe() + " must have between 1 and 2^32 - 1 rows and columns");
    return static_cast<std::uint32_t>(v);
}

// The operands' dtypes in a profile name: "fp32" when all are, else each one's ("bf16 fp32").
inline std::string dtypes_name(std::initializer_list<DType> types) {
    std::string each;
    bool mixed = false;
    for (DType t : types) {
        mixed = mixed || t != DType::Fp32;
        each += std::string(each.empty() ? "" : " ") + dtype_name(t);
    }
    return mixed ? each : "fp32";
}

} // namespace tpurt::detail
