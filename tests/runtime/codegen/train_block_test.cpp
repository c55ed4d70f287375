// SPDX-License-Identifier: MIT
// train_block_test.cpp - the training compilers' rounding of fp32 to bf16 on the vector unit
// alone (train_block.hpp's Block::round_to_bf16_vpu) on the engine: every upper half with the
// lower halves around a rounding tie, signed zeros, subnormals, infinities and NaNs of any
// payload and sign, several calls in one program, equal round to nearest even with NaN 0x7fc0.
#include "codegen/program_splitter.hpp"
#include "codegen/train_block.hpp"
#include "engine_runner.hpp"

#include <tpurt/types/bf16.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

using runtime_test::engine_config;
using runtime_test::run_bytes_on_engine;
using runtime_test::va;
using tpurt::DType;

TEST_CASE("fp32 to bf16 rounding on the vector unit: nearest even for every upper half",
          "[train][bf16]") {
    const tpu_engine_config cfg = engine_config(128, 128, 8u << 20, 4u << 20);
    // Every upper half with lower halves around the tie and at the ends: 393,216 values.
    std::vector<std::uint32_t> in;
    for (std::uint32_t hi = 0; hi < 0x10000; ++hi)
        for (std::uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu})
            in.push_back(hi << 16 | lo);
    constexpr std::uint32_t capacity = 50000; // calls of up to this many values, the last short
    const auto n = static_cast<std::uint32_t>(in.size());
    using tpurt::train_detail::Block;
    using tpurt::train_detail::data_ub;
    const std::uint32_t work = data_ub + 4 * capacity,
                        bf16 = work + Block::round_vpu_work_bytes(capacity) - 2 * capacity;
    tpurt::ProgramSplitter programs(TPU_PROGRAM_MAX_BYTES, tpurt::train_detail::start_program());
    for (std::uint32_t at = 0; at < n; at += capacity) {
        const std::uint32_t count = std::min(capacity, n - at);
        Block b(cfg.mxu_cols);
        b.load(va(0) + 4ull * at, data_ub, 1, count);
        b.round_to_bf16_vpu(data_ub, work, capacity, count);
        b.store(va(1) + 2ull * at, bf16, 1, count, DType::Bf16);
        programs.add(b.finish());
    }
    std::vector<std::byte> bytes(4 * in.size());
    std::memcpy(bytes.data(), in.data(), bytes.size());
    const auto out = run_bytes_on_engine(cfg, programs.finish(),
                                         {bytes, std::vector<std::byte>(2 * in.size())})[1];
    std::vector<std::uint16_t> got(in.size());
    std::memcpy(got.data(), out.data(), out.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const bool nan = (in[i] & 0x7fffffffu) > 0x7f800000u;
        const std::uint16_t want =
            nan ? 0x7fc0 : tpurt::Bf16::from_float(std::bit_cast<float>(in[i])).bits;
        if (got[i] != want && wrong++ < 10)
            FAIL_CHECK("0x" << std::hex << in[i] << ": 0x" << got[i] << " for 0x" << want);
    }
    REQUIRE(wrong == 0);
}
