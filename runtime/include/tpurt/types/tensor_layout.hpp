// SPDX-License-Identifier: MIT
// tensor_layout.hpp - where a tensor's elements live in its buffer: element type, shape,
// strides (in elements, one per dimension) and the offset of the first element. A pure value:
// views (slice, select, transpose, permute, reshape) are new layouts over the same bytes, and
// nothing here needs a device, so it is tested on its own.
#pragma once

#include "tpurt/types/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tpurt {

// Most dimensions a tensor may have.
inline constexpr std::size_t max_tensor_rank = 8;

class TensorLayout {
  public:
    // A row-major, densely packed layout of `shape` (the last dimension varies fastest).
    // Throws Error(InvalidArgument) for a zero dimension or more than max_tensor_rank of them.
    static TensorLayout contiguous(DType type, std::vector<std::size_t> shape);

    // Any layout: strides in elements (0 repeats an element along that dimension, which only
    // reading ops accept), offset in elements. Same checks as contiguous(), and shape and
    // strides must have the same length.
    TensorLayout(DType type, std::vector<std::size_t> shape, std::vector<std::size_t> strides,
                 std::size_t offset = 0);

    DType dtype() const { return type_; }
    const std::vector<std::size_t> &shape() const { return shape_; }
    const std::vector<std::size_t> &strides() const { return strides_; }
    std::size_t rank() const { return shape_.size(); }
    std::size_t size(std::size_t dim) const; // throws for dim >= rank()
    std::size_t offset() const { return offset_; }
    std::uint64_t offset_bytes() const { return std::uint64_t{offset_} * element_size(type_); }
    std::uint64_t element_count() const;
    // Bytes of the elements themselves (element_count() x element size).
    std::uint64_t data_bytes() const { return element_count() * element_size(type_); }
    // Bytes a buffer needs to hold every element of this layout: one past the last byte touched.
    std::uint64_t required_bytes() const;
    // Row-major and densely packed (strides of contiguous(shape)); the offset may be anything.
    bool is_contiguous() const;
    // Element offset (from the buffer's start) of the element at `index` (rank() coordinates).
    std::size_t element_offset(std::span<const std::size_t> index) const;

    // Elements [start, stop) of dimension `dim`; the rank stays.
    TensorLayout slice(std::size_t dim, std::size_t start, std::size_t stop) const;
    // Element `index` of dimension `dim`; the rank drops by one (rank 1 gives a rank-1 view of
    // one element: a tensor has at least one dimension).
    TensorLayout select(std::size_t dim, std::size_t index) const;
    // Dimensions d0 and d1 swapped.
    TensorLayout transpose(std::size_t d0, std::size_t d1) const;
    // Dimension i of the result is dimension order[i] of this layout; order is a permutation.
    TensorLayout permute(std::span<const std::size_t> order) const;
    // The same elements in row-major order with another shape of the same element count; only
    // a contiguous layout can be reshaped (otherwise make a contiguous copy first).
    TensorLayout reshape(std::vector<std::size_t> shape) const;

    // True if a dimension of more than one element has stride 0 (a broadcast view).
    bool repeats_elements() const;
    // Copies data_bytes() bytes of row-major elements at `dense` into the layout's places
    // in the buffer at `base` (scatter), or the other way round (gather).
    void scatter(const void *dense, void *base) const;
    void gather(const void *base, void *dense) const;

    // "bf16[64, 128] strides [256, 1] offset 3"
    std::string describe() const;

    friend bool operator==(const TensorLayout &, const TensorLayout &) = default;

  private:
    TensorLayout() = default;
    void check_dim(std::size_t dim, const char *what) const;

    DType type_ = DType::Fp32;
    std::vector<std::size_t> shape_;
    std::vector<std::size_t> strides_;
    std::size_t offset_ = 0;
};

} // namespace tpurt
