// SPDX-License-Identifier: MIT
// Engine-mode equivalence: one program run on a fast-mode and a cycle-accurate engine with the
// same configuration and the same host input; everything observable must be identical — the
// job result (status, error_pc, fault_addr, cycles, stall, MXU busy, MACs, DMA bytes) and every
// byte the program wrote to host memory (random_program() ends by dumping the unified buffer
// and accumulators there).
//
//   tpu::test::EquivalenceRig rig;
//   std::string diff = rig.compare(tpu::test::random_program(seed, rig.limits()), seed);
//   // diff is "" when the modes agree, else the first difference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tpu_engine.h"
#include "tpu_test/random_program.hpp"

namespace tpu::test {

class EquivalenceRig {
  public:
    // threads: worker threads of the fast-mode engine.
    explicit EquivalenceRig(const ProgramLimits &limits = ProgramLimits{}, uint32_t threads = 1);
    ~EquivalenceRig();

    const ProgramLimits &limits() const { return limits_; }

    // Fills the input region with random bytes from input_seed, clears the output regions,
    // runs program in both modes; "" if they agree, else a description of the first difference.
    std::string compare(const Program &program, uint64_t input_seed);
    // The same with the input region's first bytes given (the rest zero).
    std::string compare(const Program &program, const std::vector<uint8_t> &given);

  private:
    struct Side;
    ProgramLimits limits_;
    std::unique_ptr<Side> fast_;
    std::unique_ptr<Side> accurate_;
};

} // namespace tpu::test

// libFuzzer-style entry: the input drives random_program() (ByteDice) and seeds the host data;
// runs it in both modes and aborts with a report on any difference. Returns 0.
extern "C" int tpu_test_equivalence_one(const uint8_t *data, size_t size);
