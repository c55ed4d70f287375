// SPDX-License-Identifier: MIT
// Card: an engine instance on simulated host memory with its context table installed, as the
// QEMU device sets it up. Tests create address spaces on it, stage data, and run programs:
//
//   tpu::test::HostMemory mem;
//   tpu::test::Card card(mem);
//   tpu::test::AddressSpace space = card.address_space(1);
//   space.map(0x100000, bytes, tpu::test::kReadWrite);
//   space.write(0x100000, data, bytes);
//   tpu_job_result r = card.run(space, program);  // program mapped read-only at kProgramVa
#pragma once

#include <cstdint>
#include <memory>

#include "tpu_engine.h"
#include "tpu_test/address_space.hpp"
#include "tpu_test/context_table.hpp"
#include "tpu_test/host_memory.hpp"
#include "tpu_test/program.hpp"

namespace tpu::test {

class Card {
  public:
    // Where run(space, program) places programs unless told otherwise.
    static constexpr uint64_t kProgramVa = 0x7f0000000ull;
    static constexpr uint32_t kDefaultContexts = 16;

    // 128 x 128 array, 16 MiB unified buffer, 8 MiB accumulators, 940 MHz, one thread per CPU.
    static tpu_engine_config default_config();

    // Throws std::runtime_error with the engine's message if the engine cannot be created.
    explicit Card(HostMemory &mem, const tpu_engine_config &cfg = default_config(),
                  uint32_t contexts = kDefaultContexts);

    tpu_engine *engine() { return engine_.get(); }
    // Whether DMA may copy through mapped pages (tpu_engine_set_phys_map(), as QEMU's device
    // does; the default) or only through the memory callback.
    void use_phys_map(bool on);
    const tpu_engine_config &config() const { return cfg_; }
    HostMemory &memory() { return mem_; }
    ContextTable &contexts() { return contexts_; }

    // A fresh, empty address space installed as context ctx_id.
    AddressSpace address_space(uint32_t ctx_id) { return AddressSpace(mem_, contexts_, ctx_id); }

    // Runs a program that is already in device memory.
    tpu_job_result run(uint32_t ctx_id, uint64_t program_va, uint32_t program_bytes);
    // Maps program read-only at va in space (replacing what was there), writes it and runs it.
    tpu_job_result run(AddressSpace &space, const Program &program, uint64_t va = kProgramVa);

  private:
    struct Destroy {
        void operator()(tpu_engine *e) const { tpu_engine_destroy(e); }
    };

    HostMemory &mem_;
    tpu_engine_config cfg_;
    ContextTable contexts_;
    std::unique_ptr<tpu_engine, Destroy> engine_;
};

} // namespace tpu::test
