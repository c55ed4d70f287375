// SPDX-License-Identifier: MIT
// guest_programs.hpp - shorthands the guest fault, uapi and raw-device tests build their
// programs with (through tpurt::ProgramBuilder, the one instruction encoder): packed int8 DMA
// transfers, and the "long job" the reset, queue-reset and priority tests keep the card busy
// with.
#pragma once

#include <tpurt/codegen/program_builder.hpp>

#include <cstdint>

namespace guest {

// rows x cols int8 elements between host_addr and the unified buffer at ub_addr, rows packed
// at both ends.
inline tpurt::DmaTransfer int8_rows(std::uint64_t host_addr, std::uint32_t ub_addr,
                                    std::uint32_t rows, std::uint32_t cols) {
    return {.type = tpurt::DType::Int8,
            .host_addr = host_addr,
            .host_stride = cols,
            .local_addr = ub_addr,
            .local_stride = cols,
            .rows = rows,
            .cols = cols};
}

// A K x N weight tile of `type` from the unified buffer at 0, rows packed.
inline tpurt::WeightLoad packed_weights(tpurt::DType type, std::uint32_t k, std::uint32_t n) {
    return {.type = type,
            .src_addr = 0,
            .src_stride = n * static_cast<std::uint32_t>(tpurt::element_size(type)),
            .rows = k,
            .cols = n};
}

// M x K activations of `type` at UB 0 through the loaded K x N tile into the accumulators at 0.
inline tpurt::MatmulStep packed_matmul(tpurt::DType type, std::uint32_t m, std::uint32_t k,
                                       std::uint32_t n) {
    return {.type = type,
            .src_addr = 0,
            .src_stride = k * static_cast<std::uint32_t>(tpurt::element_size(type)),
            .rows = m,
            .cols = k,
            .acc_addr = 0,
            .acc_stride = 4 * n};
}

// A program that keeps the card busy without touching host memory: `matmuls` int8 MATMULs of
// 8192 x 128 x 128 (2^27 MACs each) on the zeroed unified buffer, then HALT.
inline tpurt::Program busy_program(unsigned matmuls) {
    tpurt::ProgramBuilder builder;
    builder.load_weights(packed_weights(tpurt::DType::Int8, 128, 128));
    for (unsigned i = 0; i < matmuls; i++)
        builder.matmul(packed_matmul(tpurt::DType::Int8, 8192, 128, 128));
    return builder.halt().finish();
}

// The tests' hung jobs: busy_program(kHangMatmuls), held by the card (uapi::CardHold, the
// test-only hold of QEMU's x-test-hold) before instruction kHangAt, its third MATMUL, until the
// driver's job timeout resets its queue or the card, which aborts it: a job that does not end, on
// any host however fast (unheld it would end in well under a millisecond). The short jobs run
// beside it (a copy: DMA_IN, DMA_OUT, HALT) end before instruction kHangAt and so never take the
// hold; they need no more than the hold armed once per hung job.
constexpr unsigned kHangMatmuls = 4;
constexpr unsigned kHangAt = 3;

// A program of one instruction: HALT.
inline tpurt::Program halt_program() {
    return tpurt::ProgramBuilder().halt().finish();
}

} // namespace guest
