// SPDX-License-Identifier: MIT
// card_lowering.hpp - each op's forward and vector-Jacobian product lowered to libtpurt ops
// queued on a stream (src/card/<op>.cpp): dense (dense, matmul_tn, column_sums, matmul_nt),
// conv2d (conv2d_layer, column_sums, conv2d_weight_grad, conv2d_input_grad), pooling (pool2d,
// max_pool2d_grad / avg_pool2d_grad), flatten (a copy each way, unless the trainer makes it a
// view), activations (unary, activation_grad), layer norm (layer_norm, layer_norm_grad), add
// (add, copies back).
// Tensors carry the batch as their first dimension. Each rule says which dtypes its operands
// need (the card's ops take bf16 or fp32 operands, with constraints between them): the trainer
// converts an input or a gradient (a cast on the card) where the producer's dtype differs.
#pragma once

#include "tpu_nn/graph.hpp"

#include <tpurt/tpurt.hpp>

#include <vector>

namespace tpu_nn {

// A parameter on the card: the tensor the ops read and its gradient (written, not added to:
// each parameter belongs to one node).
struct CardParamRef {
    const tpurt::Tensor *value = nullptr;
    const tpurt::Tensor *grad = nullptr;
};

struct CardCall {
    tpurt::Stream &stream;
    const Attrs &attrs;
    std::vector<const tpurt::Tensor *> in;
    std::vector<CardParamRef> params;
    const tpurt::Tensor &out;
    const tpurt::Tensor *dout = nullptr;
    // Each input's gradient is written (overwritten) there; null where none is wanted, except
    // for ops that always compute it (layer norm), which get a scratch tensor.
    std::vector<const tpurt::Tensor *> din;
    // Dense and conv2d: the activation their epilogue applies (the trainer fuses a ReLU that
    // reads nothing else), and whether their bias gradient was already written (a conv block's,
    // at the pooled size).
    tpurt::Activation epilogue = tpurt::Activation::None;
    bool bias_grad_written = false;
};

// The dtype an operand needs: the precision's compute dtype (bf16 in mixed precision: what the
// matmuls and convolutions read), fp32, the node's output dtype, or whatever it is given.
enum class Needs { Compute, Fp32, Output, Any };

struct CardRule {
    // Throws std::invalid_argument for what the card's ops cannot do (named by the caller).
    void (*check)(const Attrs &);
    void (*forward)(const CardCall &);
    void (*vjp)(const CardCall &);
    bool always_din; // the vjp needs every din, wanted or not
    Needs in;        // its inputs (also as the vjp reads them)
    Needs dout;      // its output's gradient (Any: fp32)
    bool fp32_out;   // its output is fp32 (else the compute dtype)
    bool fp32_din;   // the vjp writes its input gradients in fp32 (else in any dtype)
};

const CardRule &card_rule(OpKind kind);

// The dtypes of a graph's forward pass in compute dtype `compute` (fp32, or bf16 in mixed
// precision): each node's output (the compute dtype unless its op gives fp32, it is the
// logits, or every reader needs fp32 and its op does not keep its input's dtype) and the dtype
// it reads each input in (its rule's Needs; the input node reads nothing).
struct ForwardTypes {
    std::vector<tpurt::DType> act;
    std::vector<std::vector<tpurt::DType>> in;
};
ForwardTypes forward_types(const Graph &g, tpurt::DType compute);

// The backward of a conv block, relu(conv(x) + b) max-pooled by `pool`, from the pooled output
// y's gradient dy: the ReLU's gradient from y into `scratch` (fp32, y's shape), the bias's as
// its column sums, then the convolution output's (`dconv`) by max_pool2d_grad from `conv_out`
// (after the ReLU). A ReLU and a per-channel bias commute with a window's maximum, so this is
// the three nodes' vjps with the vector work of two of them done at the pooled size.
void conv_block_vjp(tpurt::Stream &s, const Attrs &pool, const tpurt::Tensor &conv_out,
                    const tpurt::Tensor &y, const tpurt::Tensor &dy, const tpurt::Tensor &scratch,
                    const tpurt::Tensor &bias_grad, const tpurt::Tensor &dconv);

} // namespace tpu_nn
