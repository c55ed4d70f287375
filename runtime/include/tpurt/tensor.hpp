// SPDX-License-Identifier: MIT
// tensor.hpp - tpurt::Tensor: a TensorLayout (dtype, shape, strides, offset) over a device
// buffer. Copies of a Tensor and its views (slice, select, transpose, permute, reshape) share
// the buffer, which lives as long as any of them. Buffers are mapped into the process, so host
// <-> device copies are plain memory copies that follow the strides; the card reads and writes
// the same pages.
#pragma once

#include "tpurt/card/buffer.hpp"
#include "tpurt/device.hpp"
#include "tpurt/error.hpp"
#include "tpurt/types/dtype_of.hpp"
#include "tpurt/types/tensor_layout.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace tpurt {

class Tensor {
  public:
    // A new, densely packed tensor in its own buffer (contents zero, as the driver hands out
    // fresh pages).
    static Tensor empty(Device &device, DType type, std::vector<std::size_t> shape);
    // A new, densely packed tensor holding `values` (row-major, exactly as many as the shape).
    template <typename T>
    static Tensor from_host(Device &device, std::span<const T> values,
                            std::vector<std::size_t> shape) {
        Tensor t = empty(device, DTypeOf<T>::value, std::move(shape));
        t.copy_from_host(values);
        return t;
    }
    // A view of `layout` over an existing buffer; throws Error(InvalidArgument) if the layout
    // reaches beyond the buffer.
    Tensor(std::shared_ptr<Buffer> storage, TensorLayout layout);

    const TensorLayout &layout() const { return layout_; }
    DType dtype() const { return layout_.dtype(); }
    const std::vector<std::size_t> &shape() const { return layout_.shape(); }
    const std::vector<std::size_t> &strides() const { return layout_.strides(); }
    std::size_t rank() const { return layout_.rank(); }
    std::size_t size(std::size_t dim) const { return layout_.size(dim); }
    std::uint64_t element_count() const { return layout_.element_count(); }
    bool is_contiguous() const { return layout_.is_contiguous(); }

    const Buffer &buffer() const { return *storage_; }
    Buffer &buffer() { return *storage_; }
    const std::shared_ptr<Buffer> &storage() const { return storage_; }
    // Device virtual address of the first element, for card programs.
    std::uint64_t device_addr() const { return storage_->device_addr() + layout_.offset_bytes(); }

    // Views sharing this tensor's buffer (see TensorLayout).
    Tensor slice(std::size_t dim, std::size_t start, std::size_t stop) const;
    Tensor select(std::size_t dim, std::size_t index) const;
    Tensor transpose(std::size_t d0, std::size_t d1) const;
    Tensor permute(std::span<const std::size_t> order) const;
    Tensor reshape(std::vector<std::size_t> shape) const;

    // Host -> device: `bytes` bytes of row-major data of this tensor's shape and dtype
    // (element_count() elements) into its elements, following the strides. Throws
    // Error(InvalidArgument) when the size does not match or the layout repeats an element
    // (a zero stride), which would make the result depend on the order of the writes.
    void copy_from_host(const void *data, std::size_t bytes);
    // Device -> host: the elements in row-major order into `bytes` bytes at `data`.
    void copy_to_host(void *data, std::size_t bytes) const;

    template <typename T> void copy_from_host(std::span<const T> values) {
        require_type(DTypeOf<T>::value);
        copy_from_host(values.data(), values.size_bytes());
    }
    template <typename T> void copy_from_host(const std::vector<T> &values) {
        copy_from_host(std::span<const T>(values));
    }
    template <typename T> void copy_to_host(std::span<T> values) const {
        require_type(DTypeOf<T>::value);
        copy_to_host(values.data(), values.size_bytes());
    }
    // The elements in row-major order.
    template <typename T> std::vector<T> to_vector() const {
        std::vector<T> out(element_count());
        copy_to_host(std::span<T>(out));
        return out;
    }

  private:
    void require_type(DType host_type) const;

    std::shared_ptr<Buffer> storage_;
    TensorLayout layout_;
};

} // namespace tpurt
