// SPDX-License-Identifier: MIT
// Engine instance on simulated host memory, for tests.
#include "tpu_test/card.hpp"

#include <stdexcept>
#include <string>

namespace tpu::test {

tpu_engine_config Card::default_config() {
    tpu_engine_config cfg{};
    cfg.mxu_rows = 128;
    cfg.mxu_cols = 128;
    cfg.ub_bytes = 16u << 20;
    cfg.acc_bytes = 8u << 20;
    cfg.clock_mhz = 940;
    cfg.threads = 0;
    return cfg;
}

Card::Card(HostMemory &mem, const tpu_engine_config &cfg, uint32_t contexts)
    : mem_(mem), cfg_(cfg), contexts_(mem, contexts) {
    char err[256] = "";
    engine_.reset(tpu_engine_create(&cfg_, HostMemory::phys_rw, &mem_, err, sizeof(err)));
    if (!engine_)
        throw std::runtime_error(std::string("Card: ") + err);
    use_phys_map(true);
    tpu_engine_set_ctx_table(engine_.get(), contexts_.addr(), contexts_.entries());
}

void Card::use_phys_map(bool on) {
    tpu_engine_set_phys_map(engine_.get(), on ? HostMemory::phys_map : nullptr,
                            on ? HostMemory::phys_unmap : nullptr);
}

tpu_job_result Card::run(uint32_t ctx_id, uint64_t program_va, uint32_t program_bytes) {
    tpu_job_result result{};
    tpu_engine_run(engine_.get(), ctx_id, program_va, program_bytes, &result);
    return result;
}

tpu_job_result Card::run(AddressSpace &space, const Program &program, uint64_t va) {
    uint64_t bytes = program.size() * sizeof(tpu_insn);
    space.map(va, bytes, kRead);
    space.write(va, program.data(), bytes);
    return run(space.ctx_id(), va, uint32_t(bytes));
}

} // namespace tpu::test
