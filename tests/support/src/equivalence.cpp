// SPDX-License-Identifier: MIT
// Runs a program on a fast-mode and a cycle-accurate engine and compares everything observable.
#include "tpu_test/equivalence.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "tpu_test/card.hpp"

namespace tpu::test {

struct EquivalenceRig::Side {
    Side(const ProgramLimits &lim, uint32_t mode, uint32_t threads)
        : mem(256ull << 20), card(mem, config(lim, mode, threads)), space(card.address_space(1)) {
        space.map(lim.input_va, lim.input_bytes, kRead);
        space.map(lim.output_va, lim.output_bytes, kReadWrite);
        space.map(lim.dump_va, uint64_t(lim.ub_bytes) + lim.acc_bytes, kReadWrite);
    }

    static tpu_engine_config config(const ProgramLimits &lim, uint32_t mode, uint32_t threads) {
        tpu_engine_config cfg = Card::default_config();
        cfg.mxu_rows = lim.mxu_rows;
        cfg.mxu_cols = lim.mxu_cols;
        cfg.ub_bytes = lim.ub_bytes;
        cfg.acc_bytes = lim.acc_bytes;
        cfg.threads = threads;
        cfg.mode = mode;
        return cfg;
    }

    // Host bytes the program may have written: the output region, then the dump region.
    std::vector<uint8_t> written(const ProgramLimits &lim) {
        std::vector<uint8_t> out(lim.output_bytes + lim.ub_bytes + lim.acc_bytes);
        space.read(lim.output_va, out.data(), lim.output_bytes);
        space.read(lim.dump_va, out.data() + lim.output_bytes,
                   uint64_t(lim.ub_bytes) + lim.acc_bytes);
        return out;
    }

    HostMemory mem;
    Card card;
    AddressSpace space;
};

EquivalenceRig::EquivalenceRig(const ProgramLimits &limits, uint32_t threads)
    : limits_(limits), fast_(std::make_unique<Side>(limits, TPU_ENGINE_FAST, threads)),
      accurate_(std::make_unique<Side>(limits, TPU_ENGINE_CYCLE_ACCURATE, 1)) {}

EquivalenceRig::~EquivalenceRig() = default;

namespace {

std::string field_difference(const tpu_job_result &a, const tpu_job_result &b) {
    struct Field {
        const char *name;
        uint64_t fast, accurate;
    };
    const Field fields[] = {
        {"status", a.status, b.status},
        {"error_pc", a.error_pc, b.error_pc},
        {"fault_addr", a.fault_addr, b.fault_addr},
        {"cycles", a.cycles, b.cycles},
        {"stall_cycles", a.stall_cycles, b.stall_cycles},
        {"mxu_busy_cycles", a.mxu_busy_cycles, b.mxu_busy_cycles},
        {"macs", a.macs, b.macs},
        {"macs_int8", a.macs_int8, b.macs_int8},
        {"macs_bf16", a.macs_bf16, b.macs_bf16},
        {"macs_fp32", a.macs_fp32, b.macs_fp32},
        {"dma_read_bytes", a.dma_read_bytes, b.dma_read_bytes},
        {"dma_write_bytes", a.dma_write_bytes, b.dma_write_bytes},
        {"mmu_faults", a.mmu_faults, b.mmu_faults},
    };
    for (const Field &f : fields)
        if (f.fast != f.accurate)
            return std::string(f.name) + ": fast " + std::to_string(f.fast) + ", cycle-accurate " +
                   std::to_string(f.accurate);
    return "";
}

} // namespace

std::string EquivalenceRig::compare(const Program &program, uint64_t input_seed) {
    std::mt19937_64 rng(input_seed);
    std::vector<uint8_t> input(limits_.input_bytes);
    for (uint8_t &b : input)
        b = uint8_t(rng());
    return compare(program, input);
}

std::string EquivalenceRig::compare(const Program &program, const std::vector<uint8_t> &given) {
    std::vector<uint8_t> input(limits_.input_bytes);
    std::copy_n(given.begin(), std::min<uint64_t>(given.size(), input.size()), input.begin());
    const std::vector<uint8_t> zeros(limits_.output_bytes + limits_.ub_bytes + limits_.acc_bytes);

    tpu_job_result results[2];
    std::vector<uint8_t> written[2];
    Side *sides[2] = {fast_.get(), accurate_.get()};
    for (int i = 0; i < 2; i++) {
        Side &s = *sides[i];
        s.space.write(limits_.input_va, input.data(), input.size());
        s.space.write(limits_.output_va, zeros.data(), limits_.output_bytes);
        s.space.write(limits_.dump_va, zeros.data(),
                      uint64_t(limits_.ub_bytes) + limits_.acc_bytes);
        results[i] = s.card.run(s.space, program);
        written[i] = s.written(limits_);
    }

    std::string diff = field_difference(results[0], results[1]);
    if (!diff.empty())
        return diff;
    for (uint64_t i = 0; i < written[0].size(); i++) {
        if (written[0][i] != written[1][i]) {
            bool dump = i >= limits_.output_bytes;
            uint64_t offset = dump ? i - limits_.output_bytes : i;
            return std::string(dump ? "final UB/ACC state" : "host output") + " byte " +
                   std::to_string(offset) + ": fast " + std::to_string(written[0][i]) +
                   ", cycle-accurate " + std::to_string(written[1][i]);
        }
    }
    return "";
}

} // namespace tpu::test

extern "C" int tpu_test_equivalence_one(const uint8_t *data, size_t size) {
    static tpu::test::EquivalenceRig rig;
    tpu::test::ByteDice dice(data, size);
    const uint64_t input_seed = dice.next();
    tpu::test::Program program = tpu::test::random_program(dice, rig.limits());
    std::string diff = rig.compare(program, input_seed);
    if (!diff.empty()) {
        std::fprintf(stderr, "tpu_test_equivalence_one: engine modes differ: %s\n", diff.c_str());
        std::abort();
    }
    return 0;
}
