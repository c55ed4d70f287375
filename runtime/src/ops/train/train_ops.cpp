// SPDX-License-Identifier: MIT
// train_ops.cpp - the training ops made of other ops (see train_ops.hpp): divide (the
// elementwise op's DIV) and the backward matmuls as sequences of registered ops (a TRANSPOSE into
// a scratch tensor first), and their blocking and stream forms (column_sums' too, whose launch
// reduce_rows_op.cpp makes).
#include "tpurt/ops/train_ops.hpp"

#include "memory/scratch.hpp"
#include "ops/op_checks.hpp"
#include "tpurt/error.hpp"
#include "tpurt/ops/tensor_ops.hpp"

#include <string>

namespace tpurt {

using detail::refuse;

OpLaunch prepare_divide(Device &device, const Tensor &a, const Tensor &b, const Tensor &out) {
    if (!(device.info().caps & TPU_CAP_VPU_TRAIN))
        throw Error(ErrorCode::Unsupported, "divide needs a card with the spec 1.4 VECTOR DIV");
    return prepare_elementwise(device, VectorOp::Div, a, b, out);
}

namespace {

// A contiguous scratch tensor for matrix a transposed by the card's TRANSPOSE (which writes all
// of it); the launches that write and read it hold its buffer until their jobs have ended.
Tensor transposed_scratch(Device &device, const Tensor &a, const char *op) {
    if (a.rank() != 2)
        refuse(op, a.layout().describe() + " is not a matrix");
    return detail::scratch_tensor(device, a.dtype(), {a.size(1), a.size(0)});
}

// The operands of a product with one transposed operand, checked under the op's own name before
// its parts (TRANSPOSE into a scratch tensor, then matmul) check theirs on the scratch tensor,
// which the caller never saw: matrices of one matrix-unit dtype and C of its accumulator type,
// shapes that chain.
void require_transposed_product(const std::string &op, const Tensor &a, bool a_transposed,
                                const Tensor &b, bool b_transposed, const Tensor &c) {
    for (auto [name, t] : {std::pair{"a", &a}, {"b", &b}, {"c", &c}})
        if (t->rank() != 2)
            refuse(op, std::string(name) + " " + t->layout().describe() + " is not a matrix");
    const DType type = a.dtype();
    if (!is_matmul_input(type) || b.dtype() != type || c.dtype() != accumulator_type(type))
        refuse(op, "a " + a.layout().describe() + ", b " + b.layout().describe() + " and c " +
                       c.layout().describe() +
                       ": a and b must both be int8, bf16 or fp32, c int32 for int8 and fp32 "
                       "otherwise");
    const std::size_t m = a.size(a_transposed ? 1 : 0), k = a.size(a_transposed ? 0 : 1);
    const std::size_t kb = b.size(b_transposed ? 1 : 0), n = b.size(b_transposed ? 0 : 1);
    if (k != kb || c.size(0) != m || c.size(1) != n)
        refuse(op, std::string("shapes do not chain: a") + (a_transposed ? "^T " : " ") +
                       a.layout().describe() + " x b" + (b_transposed ? "^T " : " ") +
                       b.layout().describe() + " -> c " + c.layout().describe() + " (c must be [" +
                       std::to_string(m) + ", " + std::to_string(n) + "])");
}

} // namespace

OpSequence prepare_matmul_tn(Device &device, const Tensor &a, const Tensor &b, const Tensor &c) {
    require_transposed_product("matmul_tn", a, true, b, false, c);
    const Tensor at = transposed_scratch(device, a, "matmul_tn");
    return {{prepare_transpose(device, a, at), prepare_matmul(device, at, b, c)}};
}

OpSequence prepare_matmul_nt(Device &device, const Tensor &a, const Tensor &b, const Tensor &c) {
    require_transposed_product("matmul_nt", a, false, b, true, c);
    const Tensor bt = transposed_scratch(device, b, "matmul_nt");
    return {{prepare_transpose(device, b, bt), prepare_matmul(device, a, bt, c)}};
}

MatmulStats divide(Device &device, const Tensor &a, const Tensor &b, Tensor &out,
                   std::chrono::nanoseconds timeout) {
    return prepare_divide(device, a, b, out).run(device, timeout);
}
void divide(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &out) {
    stream.enqueue(prepare_divide(stream.device(), a, b, out));
}

MatmulStats matmul_tn(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                      std::chrono::nanoseconds timeout) {
    return prepare_matmul_tn(device, a, b, c).run(device, timeout);
}
void matmul_tn(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c) {
    stream.enqueue(prepare_matmul_tn(stream.device(), a, b, c));
}

MatmulStats matmul_nt(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                      std::chrono::nanoseconds timeout) {
    return prepare_matmul_nt(device, a, b, c).run(device, timeout);
}
void matmul_nt(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c) {
    stream.enqueue(prepare_matmul_nt(stream.device(), a, b, c));
}

MatmulStats column_sums(Device &device, const Tensor &a, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return prepare_column_sums(device, a, out).run(device, timeout);
}
void column_sums(Stream &stream, const Tensor &a, const Tensor &out) {
    stream.enqueue(prepare_column_sums(stream.device(), a, out));
}

} // namespace tpurt
