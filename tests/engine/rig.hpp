// SPDX-License-Identifier: MIT
// Rig: a small card (16 x 16 array, 64 KiB unified buffer, 16 KiB accumulators) in a chosen
// engine mode with one read-write host region, for the instruction tests that run every case in
// both modes. kModes lists the modes for GENERATE.
#pragma once

#include <cstdint>
#include <vector>

#include "tpu_test/card.hpp"

namespace tpu::test {

inline constexpr uint32_t kModes[] = {TPU_ENGINE_FAST, TPU_ENGINE_CYCLE_ACCURATE};

struct Rig {
    static constexpr uint64_t kHost = 0x100000;
    static constexpr uint64_t kHostBytes = 1 << 20;
    static constexpr uint32_t kUb = 64 * 1024;
    static constexpr uint32_t kAcc = 16 * 1024;

    static tpu_engine_config config(uint32_t mode) {
        tpu_engine_config cfg = Card::default_config();
        cfg.mxu_rows = 16;
        cfg.mxu_cols = 16;
        cfg.ub_bytes = kUb;
        cfg.acc_bytes = kAcc;
        cfg.threads = 2;
        cfg.mode = mode;
        return cfg;
    }

    explicit Rig(uint32_t mode, const tpu_engine_config &cfg_override = {})
        : card(mem, cfg_override.mxu_rows ? cfg_override : config(mode)),
          space(card.address_space(0)) {
        space.map(kHost, kHostBytes, kReadWrite);
    }

    template <class T> void put(uint64_t offset, const std::vector<T> &v) {
        space.write_vector(kHost + offset, v);
    }
    template <class T> std::vector<T> get(uint64_t offset, uint64_t count) {
        return space.read_vector<T>(kHost + offset, count);
    }
    tpu_job_result run(const Program &p) { return card.run(space, p); }

    HostMemory mem{64ull << 20};
    Card card;
    AddressSpace space;
};

} // namespace tpu::test
