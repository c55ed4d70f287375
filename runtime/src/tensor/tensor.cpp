// SPDX-License-Identifier: MIT
// tensor.cpp - tensors over device buffers and their strided host copies (see tensor.hpp).
#include "tpurt/tensor.hpp"

#include <string>
#include <utility>

namespace tpurt {

Tensor Tensor::empty(Device &device, DType type, std::vector<std::size_t> shape) {
    TensorLayout layout = TensorLayout::contiguous(type, std::move(shape));
    auto storage = std::make_shared<Buffer>(device.allocate(layout.required_bytes()));
    return Tensor(std::move(storage), std::move(layout));
}

Tensor::Tensor(std::shared_ptr<Buffer> storage, TensorLayout layout)
    : storage_(std::move(storage)), layout_(std::move(layout)) {
    if (!storage_)
        throw Error(ErrorCode::InvalidArgument, "tensor " + layout_.describe() + " has no buffer");
    if (layout_.required_bytes() > storage_->size())
        throw Error(ErrorCode::InvalidArgument, "tensor " + layout_.describe() + " needs " +
                                                    std::to_string(layout_.required_bytes()) +
                                                    " bytes, its buffer holds " +
                                                    std::to_string(storage_->size()));
}

Tensor Tensor::slice(std::size_t dim, std::size_t start, std::size_t stop) const {
    return Tensor(storage_, layout_.slice(dim, start, stop));
}

Tensor Tensor::select(std::size_t dim, std::size_t index) const {
    return Tensor(storage_, layout_.select(dim, index));
}

Tensor Tensor::transpose(std::size_t d0, std::size_t d1) const {
    return Tensor(storage_, layout_.transpose(d0, d1));
}

Tensor Tensor::permute(std::span<const std::size_t> order) const {
    return Tensor(storage_, layout_.permute(order));
}

Tensor Tensor::reshape(std::vector<std::size_t> shape) const {
    return Tensor(storage_, layout_.reshape(std::move(shape)));
}

void Tensor::copy_from_host(const void *data, std::size_t bytes) {
    if (bytes != layout_.data_bytes())
        throw Error(ErrorCode::InvalidArgument,
                    "copy into tensor " + layout_.describe() + ": " + std::to_string(bytes) +
                        " bytes given, it holds " + std::to_string(layout_.data_bytes()));
    if (layout_.repeats_elements())
        throw Error(ErrorCode::InvalidArgument,
                    "copy into tensor " + layout_.describe() +
                        ": a dimension has stride 0, so its elements are one and the same");
    layout_.scatter(data, storage_->data());
}

void Tensor::copy_to_host(void *data, std::size_t bytes) const {
    if (bytes != layout_.data_bytes())
        throw Error(ErrorCode::InvalidArgument,
                    "copy out of tensor " + layout_.describe() + ": " + std::to_string(bytes) +
                        " bytes given, it holds " + std::to_string(layout_.data_bytes()));
    layout_.gather(storage_->data(), data);
}

void Tensor::require_type(DType host_type) const {
    if (host_type != dtype())
        throw Error(ErrorCode::InvalidArgument, std::string("tensor ") + layout_.describe() +
                                                    " holds " + dtype_name(dtype()) + ", not " +
                                                    dtype_name(host_type));
}

} // namespace tpurt
