// SPDX-License-Identifier: MIT
// square_test.cpp - the square op (runtime/src/ops/square/, the README's "Adding an op"),
// compiled by name from tensor layouts and run on the engine: out = a x a equals the golden
// reference below (docs/hardware.md's VECTOR MUL: int8 saturating, int32 wrapping, bf16 the
// binary32 product rounded to nearest even, fp32) for every dtype, dense and with strided rows.
#include "engine_runner.hpp"

#include <tpurt/ops/op_registry.hpp>
#include <tpurt/types/bf16.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

using runtime_test::engine_config;
using runtime_test::limits_of;
using tpurt::DType;

namespace {

const tpu_engine_config cfg = engine_config(128, 128, 64u << 10, 64u << 10);

// The golden reference: one element squared as the card's VECTOR MUL does it.
void reference_square(DType type, const std::byte *a, std::byte *out) {
    switch (type) {
    case DType::Int8: {
        const auto v = static_cast<std::int32_t>(static_cast<std::int8_t>(a[0]));
        const auto sq = static_cast<std::int8_t>(std::min(v * v, 127));
        std::memcpy(out, &sq, 1);
        return;
    }
    case DType::Int32: {
        std::int32_t v;
        std::memcpy(&v, a, 4);
        const auto sq = static_cast<std::int32_t>(static_cast<std::uint32_t>(v) *
                                                  static_cast<std::uint32_t>(v));
        std::memcpy(out, &sq, 4);
        return;
    }
    case DType::Bf16: {
        tpurt::Bf16 v;
        std::memcpy(&v, a, 2);
        const tpurt::Bf16 sq = tpurt::Bf16::from_float(v.to_float() * v.to_float());
        std::memcpy(out, &sq, 2);
        return;
    }
    default: {
        float v;
        std::memcpy(&v, a, 4);
        const float sq = v * v;
        std::memcpy(out, &sq, 4);
        return;
    }
    }
}

// Deterministic values of `type` whose squares stay normal numbers (or wrap, for int32).
std::vector<std::byte> values(DType type, std::size_t count) {
    const std::size_t elem = tpurt::element_size(type);
    std::vector<std::byte> bytes(count * elem);
    for (std::size_t i = 0; i < count; ++i) {
        const int k = static_cast<int>((i * 7919) % 257) - 128;
        std::byte *p = &bytes[i * elem];
        if (type == DType::Int8) {
            const auto v = static_cast<std::int8_t>(k);
            std::memcpy(p, &v, 1);
        } else if (type == DType::Int32) {
            const std::int32_t v = k * 977 + static_cast<std::int32_t>(i) * 3001;
            std::memcpy(p, &v, 4);
        } else if (type == DType::Bf16) {
            const tpurt::Bf16 v = tpurt::Bf16::from_float(k / 7.0f);
            std::memcpy(p, &v, 2);
        } else {
            const float v = k / 7.0f;
            std::memcpy(p, &v, 4);
        }
    }
    return bytes;
}

void check_square(DType type, std::size_t rows, std::size_t cols, std::size_t row_stride) {
    INFO(tpurt::dtype_name(type) << " " << rows << "x" << cols << " stride " << row_stride);
    const tpurt::TensorLayout a(type, {rows, cols}, {row_stride, 1});
    const tpurt::TensorLayout out = tpurt::TensorLayout::contiguous(type, {rows, cols});
    tpurt::DeviceInfo info;
    info.caps = TPU_CAP_INT8 | TPU_CAP_BF16 | TPU_CAP_FP32 | TPU_CAP_VPU;
    info.limits = limits_of(cfg);
    const std::array<const tpurt::TensorLayout *, 2> operands{&a, &out};
    const tpurt::Executable exe = tpurt::compile_op(info, "square", operands);
    CHECK(exe.name() == "square " + std::string(tpurt::dtype_name(type)) + " " +
                            std::to_string(rows) + "x" + std::to_string(cols));
    std::vector<tpurt::Program> programs;
    const std::array<std::uint64_t, 2> bases{runtime_test::va(0), runtime_test::va(1)};
    for (std::size_t p = 0; p < exe.program_count(); ++p)
        programs.push_back(exe.patched(p, bases));
    const std::size_t elem = tpurt::element_size(type);
    const std::vector<std::byte> input = values(type, a.required_bytes() / elem);
    const std::vector<std::vector<std::byte>> result = runtime_test::run_bytes_on_engine(
        cfg, programs, {input, std::vector<std::byte>(out.data_bytes())});
    std::vector<std::byte> expected(elem);
    std::size_t wrong = 0;
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
            reference_square(type, &input[(r * row_stride + c) * elem], expected.data());
            wrong += std::memcmp(expected.data(), &result[1][(r * cols + c) * elem], elem) != 0;
        }
    CHECK(wrong == 0);
}

} // namespace

TEST_CASE("square by name equals its golden reference on the engine", "[registry][square]") {
    for (DType type : {DType::Int8, DType::Int32, DType::Bf16, DType::Fp32}) {
        check_square(type, 37, 300, 300);
        check_square(type, 20, 64, 100); // rows 100 elements apart
        check_square(type, 1, 5000, 5000);
    }
}
