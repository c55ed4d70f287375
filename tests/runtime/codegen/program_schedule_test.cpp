// SPDX-License-Identifier: MIT
// program_schedule_test.cpp - the reordering of a captured graph's programs (exec/
// program_schedule.hpp) on the engine: the runtime's cycle model gives the engine's cycles, a
// program of independent tiles (load, compute, store each) gets shorter as the next tile's load
// moves ahead of the current tile's vector work, and the results stay the same bits; a
// program whose steps depend on each other keeps its order.
#include "engine_runner.hpp"
#include "graph/program_schedule.hpp"

#include <tpu_test/card.hpp>
#include <tpu_test/host_memory.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using runtime_test::engine_config;
using runtime_test::limits_of;
using runtime_test::va;
using tpurt::DType;

namespace {

const tpu_engine_config card_config = engine_config(128, 128, 1u << 20, 1u << 18);
constexpr std::uint32_t tile = 4096; // fp32 values of a tile

struct Run {
    std::uint64_t cycles;
    std::vector<float> out;
};

// The program on a fresh card with `in` at va(0) and an output of the same size at va(1).
Run run(const tpurt::Program &program, const std::vector<float> &in) {
    tpu::test::HostMemory memory;
    tpu::test::Card card(memory, card_config);
    tpu::test::AddressSpace space = card.address_space(1);
    const std::size_t bytes = in.size() * 4;
    space.map(va(0), bytes, tpu::test::kReadWrite);
    space.map(va(1), bytes, tpu::test::kReadWrite);
    space.write(va(0), in.data(), bytes);
    const tpu_job_result result = card.run(space, program.insns);
    REQUIRE(result.status == TPU_ERR_NONE);
    Run r{result.cycles, std::vector<float>(in.size())};
    space.read(va(1), r.out.data(), bytes);
    return r;
}

// Per tile: DMA_IN, `steps` VECTOR MULs of it by itself (in place, each after the last), DMA_OUT;
// `shared`: every tile in the same unified-buffer bytes, else each in its own.
tpurt::Program tiles(std::uint32_t count, std::uint32_t steps, bool shared) {
    tpurt::ProgramBuilder b;
    for (std::uint32_t t = 0; t < count; ++t) {
        const std::uint32_t ub = shared ? 0 : t * tile * 4;
        const tpurt::DmaTransfer io{.type = DType::Fp32,
                                    .host_addr = va(0) + std::uint64_t{t} * tile * 4,
                                    .host_stride = tile * 4,
                                    .local_addr = ub,
                                    .local_stride = tile * 4,
                                    .rows = 1,
                                    .cols = tile};
        b.dma_in(io);
        for (std::uint32_t s = 0; s < steps; ++s)
            b.vector({.type = DType::Fp32,
                      .op = tpurt::VectorOp::Mul,
                      .a_addr = ub,
                      .a_stride = tile * 4,
                      .b_addr = ub,
                      .b_stride = tile * 4,
                      .dst_addr = ub,
                      .dst_stride = tile * 4,
                      .rows = 1,
                      .cols = tile});
        tpurt::DmaTransfer out = io;
        out.host_addr = va(1) + std::uint64_t{t} * tile * 4;
        b.dma_out(out);
    }
    return b.halt().finish();
}

} // namespace

TEST_CASE("scheduled programs: the engine's cycles, shorter, the same results", "[schedule]") {
    const tpurt::detail::ScheduleTarget target{.limits = limits_of(card_config),
                                               .clock_mhz = card_config.clock_mhz,
                                               .dma_mbps = 44800,
                                               .arg_bases = {}};
    std::vector<float> in(8 * tile);
    for (std::size_t i = 0; i < in.size(); ++i)
        in[i] = 1.0f + float(i % 97) / 64.0f;
    for (const bool shared : {false, true}) {
        CAPTURE(shared);
        const tpurt::Program program = tiles(8, 4, shared);
        const tpurt::Program scheduled = tpurt::detail::schedule_program(program, target);
        const Run before = run(program, in), after = run(scheduled, in);
        CHECK(before.cycles == tpurt::detail::modelled_cycles(program, target));
        CHECK(after.cycles == tpurt::detail::modelled_cycles(scheduled, target));
        REQUIRE(std::memcmp(before.out.data(), after.out.data(), in.size() * 4) == 0);
        if (shared) { // every step depends on the one before: nothing moves
            CHECK(after.cycles == before.cycles);
            CHECK(std::memcmp(scheduled.insns.data(), program.insns.data(), program.size_bytes()) ==
                  0);
        } else { // loads run beside the vector work: all but the first tile's is hidden
            CHECK(after.cycles + 7 * 4 * (tile / 128) <= before.cycles);
        }
    }
}
