// SPDX-License-Identifier: MIT
// tensor_layout.cpp - shapes, strides and views of tensors (see tensor_layout.hpp).
#include "tpurt/types/tensor_layout.hpp"

#include "tpurt/error.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>

namespace tpurt {

namespace {

[[noreturn]] void refuse(const std::string &message) {
    throw Error(ErrorCode::InvalidArgument, "tensor: " + message);
}

std::string list(const std::vector<std::size_t> &values) {
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        out += (i ? ", " : "") + std::to_string(values[i]);
    return out + "]";
}

std::vector<std::size_t> row_major_strides(const std::vector<std::size_t> &shape) {
    std::vector<std::size_t> strides(shape.size());
    std::size_t step = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = step;
        step *= shape[i];
    }
    return strides;
}

// Calls copy(element offset in the layout, row-major position, elements) for every run of
// elements contiguous in both: whole rows of the last dimension when its stride is 1, else
// single elements.
template <typename Copy>
void for_each_run(const std::vector<std::size_t> &shape, const std::vector<std::size_t> &strides,
                  std::size_t offset, std::uint64_t count, Copy copy) {
    const std::size_t last = shape.size() - 1;
    const bool unit = strides[last] == 1;
    const std::size_t run = unit ? shape[last] : 1;
    const std::size_t outer = unit ? last : shape.size(); // dimensions the index walks
    std::vector<std::size_t> index(shape.size(), 0);
    for (std::uint64_t position = 0; position < count; position += run) {
        std::size_t at = offset;
        for (std::size_t i = 0; i < outer; ++i)
            at += index[i] * strides[i];
        copy(at, position, run);
        for (std::size_t d = outer; d-- > 0;) {
            if (++index[d] < shape[d])
                break;
            index[d] = 0;
        }
    }
}

void check_shape(const std::vector<std::size_t> &shape) {
    if (shape.empty() || shape.size() > max_tensor_rank)
        refuse("a tensor has 1.." + std::to_string(max_tensor_rank) + " dimensions, not " +
               std::to_string(shape.size()));
    // Element counts and offsets must fit 64 bits (and the device's 39-bit address space long
    // before that): refuse products that overflow.
    std::uint64_t count = 1;
    for (std::size_t extent : shape) {
        if (extent == 0)
            refuse("shape " + list(shape) + " has an empty dimension");
        if (count > std::numeric_limits<std::uint64_t>::max() / 16 / extent)
            refuse("shape " + list(shape) + " is too large");
        count *= extent;
    }
}

} // namespace

TensorLayout TensorLayout::contiguous(DType type, std::vector<std::size_t> shape) {
    check_shape(shape);
    std::vector<std::size_t> strides = row_major_strides(shape);
    return TensorLayout(type, std::move(shape), std::move(strides), 0);
}

TensorLayout::TensorLayout(DType type, std::vector<std::size_t> shape,
                           std::vector<std::size_t> strides, std::size_t offset)
    : type_(type), shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset) {
    if (element_size(type_) == 0)
        refuse("unknown element type");
    check_shape(shape_);
    if (strides_.size() != shape_.size())
        refuse("shape " + list(shape_) + " and strides " + list(strides_) +
               " have different lengths");
    std::uint64_t reach = offset_;
    for (std::size_t i = 0; i < shape_.size(); ++i) {
        if (strides_[i] > (std::numeric_limits<std::uint64_t>::max() / 16 - reach) / shape_[i])
            refuse("strides " + list(strides_) + " are too large");
        reach += (shape_[i] - 1) * strides_[i];
    }
}

std::size_t TensorLayout::size(std::size_t dim) const {
    check_dim(dim, "size");
    return shape_[dim];
}

std::uint64_t TensorLayout::element_count() const {
    return std::accumulate(shape_.begin(), shape_.end(), std::uint64_t{1},
                           [](std::uint64_t a, std::size_t b) { return a * b; });
}

std::uint64_t TensorLayout::required_bytes() const {
    std::uint64_t last = offset_;
    for (std::size_t i = 0; i < shape_.size(); ++i)
        last += (shape_[i] - 1) * strides_[i];
    return (last + 1) * element_size(type_);
}

bool TensorLayout::is_contiguous() const {
    return strides_ == row_major_strides(shape_);
}

std::size_t TensorLayout::element_offset(std::span<const std::size_t> index) const {
    if (index.size() != rank())
        refuse("an index of " + std::to_string(index.size()) + " coordinates into a rank-" +
               std::to_string(rank()) + " tensor");
    std::size_t at = offset_;
    for (std::size_t i = 0; i < index.size(); ++i) {
        if (index[i] >= shape_[i])
            refuse("index " + std::to_string(index[i]) + " is outside dimension " +
                   std::to_string(i) + " of " + describe());
        at += index[i] * strides_[i];
    }
    return at;
}

TensorLayout TensorLayout::slice(std::size_t dim, std::size_t start, std::size_t stop) const {
    check_dim(dim, "slice");
    if (start >= stop || stop > shape_[dim])
        refuse("slice [" + std::to_string(start) + ", " + std::to_string(stop) + ") of dimension " +
               std::to_string(dim) + " of " + describe() + " is empty or out of range");
    TensorLayout out = *this;
    out.offset_ += start * strides_[dim];
    out.shape_[dim] = stop - start;
    return out;
}

TensorLayout TensorLayout::select(std::size_t dim, std::size_t index) const {
    TensorLayout out = slice(dim, index, index + 1);
    if (out.rank() > 1) {
        out.shape_.erase(out.shape_.begin() + static_cast<std::ptrdiff_t>(dim));
        out.strides_.erase(out.strides_.begin() + static_cast<std::ptrdiff_t>(dim));
    }
    return out;
}

TensorLayout TensorLayout::transpose(std::size_t d0, std::size_t d1) const {
    check_dim(d0, "transpose");
    check_dim(d1, "transpose");
    TensorLayout out = *this;
    std::swap(out.shape_[d0], out.shape_[d1]);
    std::swap(out.strides_[d0], out.strides_[d1]);
    return out;
}

TensorLayout TensorLayout::permute(std::span<const std::size_t> order) const {
    std::vector<std::size_t> sorted(order.begin(), order.end());
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::size_t> identity(rank());
    std::iota(identity.begin(), identity.end(), std::size_t{0});
    if (sorted != identity)
        refuse("permute order " + list(std::vector<std::size_t>(order.begin(), order.end())) +
               " is not a permutation of the " + std::to_string(rank()) + " dimensions of " +
               describe());
    TensorLayout out = *this;
    for (std::size_t i = 0; i < order.size(); ++i) {
        out.shape_[i] = shape_[order[i]];
        out.strides_[i] = strides_[order[i]];
    }
    return out;
}

TensorLayout TensorLayout::reshape(std::vector<std::size_t> shape) const {
    if (!is_contiguous())
        refuse("cannot reshape the non-contiguous " + describe() + ": copy it first");
    TensorLayout out = contiguous(type_, std::move(shape));
    if (out.element_count() != element_count())
        refuse("cannot reshape " + describe() + " (" + std::to_string(element_count()) +
               " elements) to " + list(out.shape_) + " (" + std::to_string(out.element_count()) +
               ")");
    out.offset_ = offset_;
    return out;
}

bool TensorLayout::repeats_elements() const {
    for (std::size_t i = 0; i < rank(); ++i)
        if (strides_[i] == 0 && shape_[i] > 1)
            return true;
    return false;
}

void TensorLayout::scatter(const void *dense, void *base) const {
    const std::size_t elem = element_size(type_);
    const auto *src = static_cast<const std::byte *>(dense);
    auto *dst = static_cast<std::byte *>(base);
    for_each_run(shape_, strides_, offset_, element_count(),
                 [&](std::size_t at, std::uint64_t position, std::size_t run) {
                     std::memcpy(dst + at * elem, src + position * elem, run * elem);
                 });
}

void TensorLayout::gather(const void *base, void *dense) const {
    const std::size_t elem = element_size(type_);
    const auto *src = static_cast<const std::byte *>(base);
    auto *dst = static_cast<std::byte *>(dense);
    for_each_run(shape_, strides_, offset_, element_count(),
                 [&](std::size_t at, std::uint64_t position, std::size_t run) {
                     std::memcpy(dst + position * elem, src + at * elem, run * elem);
                 });
}

std::string TensorLayout::describe() const {
    std::string out = std::string(dtype_name(type_)) + list(shape_);
    if (!is_contiguous())
        out += " strides " + list(strides_);
    if (offset_)
        out += " offset " + std::to_string(offset_);
    return out;
}

void TensorLayout::check_dim(std::size_t dim, const char *what) const {
    if (dim >= rank())
        refuse(std::string(what) + " of dimension " + std::to_string(dim) + " of the rank-" +
               std::to_string(rank()) + " " + describe());
}

} // namespace tpurt
