// SPDX-License-Identifier: MIT
// LinkRig: n cards joined by an inter-chip fabric (spec 2.0), each with its own simulated host
// memory and one read-write host region, for the link tests. run_all() runs one program per
// card at once, each on a thread of its own (as each QEMU card runs its jobs on its worker), and
// returns their results in card order.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tpu_test/card.hpp"

namespace tpu::test {

struct LinkRig {
    static constexpr uint64_t kHost = 0x10000000;
    static constexpr uint32_t kUb = 4u << 20;

    struct Fabric {
        void operator()(tpu_fabric *f) const { tpu_fabric_destroy(f); }
    };

    static tpu_fabric_config ring(uint32_t cards, uint32_t credits = 256) {
        return tpu_fabric_config{TPU_ICI_TOPO_RING, cards, 1, 400, 1000, credits, 0, 0};
    }

    // Cards at x = 0 .. on a ring (or y-major on a torus), host regions of host_bytes.
    LinkRig(const tpu_fabric_config &cfg, uint32_t mode, uint64_t host_bytes = 4u << 20,
            uint32_t clock_mhz = 700) {
        char err[256] = "";
        fabric.reset(tpu_fabric_create(&cfg, err, sizeof(err)));
        if (!fabric)
            throw std::runtime_error(err);
        const uint32_t n = cfg.dim_x * cfg.dim_y;
        for (uint32_t i = 0; i < n; i++) {
            tpu_engine_config ec = Card::default_config();
            ec.mxu_rows = 16;
            ec.mxu_cols = 16;
            ec.ub_bytes = kUb;
            ec.acc_bytes = 64 * 1024;
            ec.clock_mhz = clock_mhz;
            ec.threads = 1;
            ec.mode = mode;
            mems.push_back(std::make_unique<HostMemory>(host_bytes + (64ull << 20)));
            cards.push_back(std::make_unique<Card>(*mems.back(), ec));
            spaces.push_back(std::make_unique<AddressSpace>(cards.back()->address_space(1)));
            spaces.back()->map(kHost, host_bytes, kReadWrite);
            if (tpu_engine_attach(engine(i), fabric.get(), i % cfg.dim_x, i / cfg.dim_x, err,
                                  sizeof(err)))
                throw std::runtime_error(err);
        }
    }

    tpu_engine *engine(uint32_t i) { return cards[i]->engine(); }
    AddressSpace &space(uint32_t i) { return *spaces[i]; }
    tpu_job_result run(uint32_t i, const Program &p) { return cards[i]->run(*spaces[i], p); }

    std::vector<tpu_job_result> run_all(const std::vector<Program> &programs) {
        std::vector<tpu_job_result> results(programs.size());
        std::vector<std::thread> threads;
        for (uint32_t i = 0; i < programs.size(); i++)
            threads.emplace_back([&, i] { results[i] = run(i, programs[i]); });
        for (std::thread &t : threads)
            t.join();
        return results;
    }

    std::unique_ptr<tpu_fabric, Fabric> fabric;
    std::vector<std::unique_ptr<HostMemory>> mems;
    std::vector<std::unique_ptr<Card>> cards;
    std::vector<std::unique_ptr<AddressSpace>> spaces;
};

} // namespace tpu::test
