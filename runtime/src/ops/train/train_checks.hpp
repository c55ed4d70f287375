// SPDX-License-Identifier: MIT
// train_checks.hpp - internal: the operand checks the training ops share (train_ops.cpp,
// layer_norm_ops.cpp): a card with the spec 1.4 training instructions, densely packed fp32 (or
// fp32 or bf16) tensors, matching shapes, dimensions the programs can hold; each refusal names
// the op and the operand's dtype.
#pragma once

#include "ops/op_checks.hpp"
#include "tpurt/device.hpp"
#include "tpurt/error.hpp"
#include "tpurt/tensor.hpp"

#include <cstdint>
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

inline void require_fp32_dense(const std::string &op, const char *name, const Tensor &t) {
    if (t.dtype() != DType::Fp32 || !t.is_contiguous() || t.rank() == 0)
        refuse(op, std::string(name) + " " + t.layout().describe() +
                       " must be a densely packed fp32 tensor");
}

// A densely packed fp32 or bf16 tensor; returns its dtype.
inline DType require_float_dense(const std::string &op, const char *name, const Tensor &t) {
    if ((t.dtype() != DType::Fp32 && t.dtype() != DType::Bf16) || !t.is_contiguous() ||
        t.rank() == 0)
        refuse(op, std::string(name) + " " + t.layout().describe() + " is " +
                       dtype_name(t.dtype()) + ": it must be a densely packed fp32 or bf16 tensor");
    return t.dtype();
}

inline void require_same_shape(const std::string &op, const Tensor &a, const char *name,
                               const Tensor &b) {
    if (b.shape() != a.shape())
        refuse(op, std::string(name) + " " + b.layout().describe() + " does not have the shape " +
                       a.layout().describe());
}

inline std::uint32_t dim32(const std::string &op, std::uint64_t v, const Tensor &t) {
    if (v == 0 || v > UINT32_MAX)
        refuse(op, t.layout().describe() + " must have between 1 and 2^32 - 1 rows and columns");
    return static_cast<std::uint32_t>(v);
}

} // namespace tpurt::detail
