// SPDX-License-Identifier: MIT
// Random VALID card programs for the engine-mode equivalence tests and fuzzing: every
// instruction of spec 1.1 (DMA, LOAD_W from UB or host, plain or transposed, MATMUL with row
// groups and overlapping accumulators, ACTIVATE, VECTOR, REDUCE, POOL, TRANSPOSE, SYNC,
// TIMESTAMP, NOP) with random shapes, dtypes and aligned in-range operands, so a run executes
// the whole program. The program ends by dumping the whole unified buffer and accumulators to
// host memory, so comparing the host output compares the card's final state.
//
//   tpu::test::ProgramLimits lim;                       // small card, see below
//   tpu::test::Program p = tpu::test::random_program(seed, lim);
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

#include "tpu_test/program.hpp"

namespace tpu::test {

// The card and host regions a random program may use.
struct ProgramLimits {
    uint32_t mxu_rows = 8;
    uint32_t mxu_cols = 8;
    uint32_t ub_bytes = 16 * 1024;  // a multiple of 4, at most 4 * 65535
    uint32_t acc_bytes = 16 * 1024; // a multiple of 4, at most 4 * 65535
    uint64_t input_va = 0x100000;   // readable host data
    uint64_t input_bytes = 64 * 1024;
    uint64_t output_va = 0x200000; // writable host memory for DMA_OUT and TIMESTAMP
    uint64_t output_bytes = 64 * 1024;
    uint64_t dump_va = 0x300000; // writable, ub_bytes + acc_bytes: the final state
    uint32_t max_instructions = 32;
};

// Appends what hand-written programs end with: the whole unified buffer and accumulators dumped
// to dump_va (as bytes and as int32), then HALT.
inline void push_state_dump(Program &p, const ProgramLimits &lim) {
    p.push_back(dma_out(TPU_DT_INT8, 1, uint16_t(lim.ub_bytes), lim.dump_va, lim.ub_bytes, 0,
                        lim.ub_bytes));
    p.push_back(dma_out_acc(TPU_DT_INT32, 1, uint16_t(lim.acc_bytes / 4),
                            lim.dump_va + lim.ub_bytes, lim.acc_bytes, 0, lim.acc_bytes));
    p.push_back(halt());
}

// Where a generator's decisions come from: a seeded PRNG, or the bytes of a fuzzer input.
class Dice {
  public:
    virtual ~Dice() = default;
    virtual uint64_t next() = 0;

    uint64_t below(uint64_t n) { return n ? next() % n : 0; }
    bool chance(unsigned percent) { return below(100) < percent; }
};

class SeededDice : public Dice {
  public:
    explicit SeededDice(uint64_t seed) : rng_(seed) {}
    uint64_t next() override { return rng_(); }

  private:
    std::mt19937_64 rng_;
};

// Draws two bytes of the input per decision, then zeros once it runs out.
class ByteDice : public Dice {
  public:
    ByteDice(const uint8_t *data, size_t size) : data_(data), size_(size) {}
    uint64_t next() override;

  private:
    const uint8_t *data_;
    size_t size_;
    size_t pos_ = 0;
};

Program random_program(Dice &dice, const ProgramLimits &limits);
Program random_program(uint64_t seed, const ProgramLimits &limits);

} // namespace tpu::test
