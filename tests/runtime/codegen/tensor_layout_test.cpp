// SPDX-License-Identifier: MIT
// tensor_layout_test.cpp - tensor layouts without a device: strides of contiguous layouts,
// the element offsets and shapes of slices, selects, transposes, permutes and reshapes
// (checked against index arithmetic written out here), the bytes a layout needs, strided
// scatter and gather against a plain element-by-element loop, and every refusal.
#include <tpurt/error.hpp>
#include <tpurt/types/tensor_layout.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

using tpurt::DType;
using tpurt::TensorLayout;

namespace {

using Shape = std::vector<std::size_t>;

void require_refused(auto &&make) {
    try {
        make();
        FAIL("the layout was accepted");
    } catch (const tpurt::Error &error) {
        CHECK(error.code() == tpurt::ErrorCode::InvalidArgument);
        CHECK(std::string(error.what()).find("tensor") != std::string::npos);
    }
}

} // namespace

TEST_CASE("contiguous layouts are row-major", "[tensor]") {
    const TensorLayout l = TensorLayout::contiguous(DType::Bf16, {2, 3, 5});
    CHECK(l.strides() == Shape{15, 5, 1});
    CHECK(l.element_count() == 30);
    CHECK(l.data_bytes() == 60);
    CHECK(l.required_bytes() == 60);
    CHECK(l.is_contiguous());
    const std::size_t index[] = {1, 2, 3};
    CHECK(l.element_offset(index) == 15 + 10 + 3);
    CHECK(l.describe() == "bf16[2, 3, 5]");
}

TEST_CASE("views: slice, select, transpose, permute, reshape", "[tensor]") {
    const TensorLayout l = TensorLayout::contiguous(DType::Fp32, {4, 6});
    const TensorLayout s = l.slice(1, 2, 5); // columns 2..4
    CHECK(s.shape() == Shape{4, 3});
    CHECK(s.strides() == Shape{6, 1});
    CHECK(s.offset() == 2);
    CHECK_FALSE(s.is_contiguous());
    CHECK(s.required_bytes() == (2 + 3 * 6 + 2 + 1) * 4);
    const std::size_t at[] = {3, 1};
    CHECK(s.element_offset(at) == 3 * 6 + 2 + 1);

    const TensorLayout row = l.select(0, 2);
    CHECK(row.shape() == Shape{6});
    CHECK(row.offset() == 12);
    CHECK(row.is_contiguous());

    const TensorLayout t = l.transpose(0, 1);
    CHECK(t.shape() == Shape{6, 4});
    CHECK(t.strides() == Shape{1, 6});
    CHECK(t.describe() == "fp32[6, 4] strides [1, 6]");

    const TensorLayout cube = TensorLayout::contiguous(DType::Int8, {2, 3, 4});
    const std::size_t order[] = {2, 0, 1};
    const TensorLayout p = cube.permute(order);
    CHECK(p.shape() == Shape{4, 2, 3});
    CHECK(p.strides() == Shape{1, 12, 4});

    const TensorLayout r = l.slice(0, 1, 3).reshape({3, 4});
    CHECK(r.shape() == Shape{3, 4});
    CHECK(r.offset() == 6);
    CHECK(r.is_contiguous());
}

TEST_CASE("scatter and gather follow the strides", "[tensor]") {
    // A 5 x 7 int32 buffer; the view is rows 1..3, columns 2..6 step through a transpose.
    const TensorLayout base = TensorLayout::contiguous(DType::Int32, {5, 7});
    for (const TensorLayout &view :
         {base.slice(0, 1, 4).slice(1, 2, 6), base.transpose(0, 1).slice(0, 1, 5), base}) {
        INFO(view.describe());
        std::vector<std::int32_t> buffer(35, -1);
        std::vector<std::int32_t> dense(view.element_count());
        std::iota(dense.begin(), dense.end(), 100);
        view.scatter(dense.data(), buffer.data());
        // Element (i, j) of the view is at offset + i * s0 + j * s1.
        std::size_t next = 0, written = 0;
        for (std::size_t i = 0; i < view.shape()[0]; ++i)
            for (std::size_t j = 0; j < view.shape()[1]; ++j) {
                const std::size_t at =
                    view.offset() + i * view.strides()[0] + j * view.strides()[1];
                CHECK(buffer[at] == dense[next++]);
            }
        for (std::int32_t v : buffer)
            written += v != -1;
        CHECK(written == view.element_count());
        std::vector<std::int32_t> back(view.element_count(), 0);
        view.gather(buffer.data(), back.data());
        CHECK(back == dense);
    }
}

TEST_CASE("bad layouts and views are refused with a reason", "[tensor]") {
    const TensorLayout l = TensorLayout::contiguous(DType::Fp32, {4, 6});
    require_refused([] { TensorLayout::contiguous(DType::Fp32, {}); });
    require_refused([] { TensorLayout::contiguous(DType::Fp32, {3, 0}); });
    require_refused([] { TensorLayout::contiguous(DType::Fp32, Shape(9, 2)); });
    require_refused([] { TensorLayout::contiguous(DType::Fp32, {1ull << 40, 1ull << 40}); });
    require_refused([] { TensorLayout(DType::Fp32, {2, 2}, {1}); });
    require_refused([&] { l.slice(1, 4, 4); });
    require_refused([&] { l.slice(1, 2, 7); });
    require_refused([&] { l.slice(2, 0, 1); });
    require_refused([&] { l.transpose(0, 2); });
    const std::size_t twice[] = {0, 0};
    require_refused([&] { l.permute(twice); });
    require_refused([&] { l.reshape({5, 5}); });
    require_refused([&] { l.transpose(0, 1).reshape({24}); });
    const std::size_t outside[] = {4, 0};
    require_refused([&] { l.element_offset(outside); });
    CHECK(TensorLayout(DType::Fp32, {3, 4}, {0, 1}).repeats_elements());
    CHECK_FALSE(l.repeats_elements());
}
