// SPDX-License-Identifier: MIT
// Random link instructions (spec 2.0) on two cards of a ring at once: well-formed and malformed
// SEND and RECV with random ports, tags, lengths, addresses, flags, reduce ops and dtypes, raw
// bytes too. Every job must end — by itself, or promptly once a watchdog aborts both cards, as
// a reset does for a job that waits on a peer that never sends — with a defined status, and the
// link must work afterwards; nothing may crash or hang.
#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <future>
#include <random>

#include "link_rig.hpp"

using namespace tpu::test;

namespace {

tpu_insn random_link_insn(std::mt19937_64 &rng) {
    auto pick = [&](std::initializer_list<uint64_t> values) {
        return *(values.begin() + rng() % values.size());
    };
    tpu_insn insn{};
    if (rng() % 8 == 0) { // raw bytes under a link opcode
        for (auto &w : insn.raw)
            w = rng();
        insn.link.opcode = uint8_t(pick({TPU_OP_SEND, TPU_OP_RECV}));
        return insn;
    }
    if (rng() % 4 != 0) { // well formed: most of them meet a partner, or wait for one
        const bool host = rng() % 4 == 0;
        const uint32_t len = uint32_t(pick({64, 4096, 8192, 65536}));
        const uint64_t addr = (host ? LinkRig::kHost : 0) + 4096 * (rng() % 16);
        const uint8_t port = uint8_t(rng() % 2);
        const uint32_t tag = uint32_t(rng() % 2);
        if (rng() % 2)
            return send(port, tag, addr, len, host ? TPU_F_LINK_HOST : 0);
        const uint8_t op = uint8_t(rng() % 4);
        return recv(port, tag, addr, len, op,
                    op == TPU_LINK_COPY ? 0
                                        : uint8_t(pick({TPU_DT_BF16, TPU_DT_INT32, TPU_DT_FP32})),
                    host ? TPU_F_LINK_HOST : 0);
    }
    const bool host = rng() % 3 == 0;
    const uint32_t len = uint32_t(pick({1, 2, 4, 64, 4096, 4100, 65536, 1u << 20, TPU_ICI_MAX_BYTES,
                                        TPU_ICI_MAX_BYTES + 1, 0, rng() % (2u << 20)}));
    const uint64_t addr =
        host ? pick({LinkRig::kHost, LinkRig::kHost + 4096 * (rng() % 1024), 0x40000000, rng()})
             : pick({0, 4096, LinkRig::kUb - 64, LinkRig::kUb, rng() % 8192});
    const uint16_t flags = uint16_t((host ? TPU_F_LINK_HOST : 0) | pick({0, 0, 1, 2, 3, 7, 0, 0}) |
                                    (rng() % 16 == 0 ? 1u << 9 : 0));
    const uint8_t port = uint8_t(pick({0, 0, 1, 1, 2, 3, 7, 8, 255}));
    const uint32_t tag = uint32_t(rng() % 3);
    if (rng() % 2)
        insn = send(port, tag, addr, len, flags);
    else
        insn = recv(port, tag, addr, len, uint8_t(flags & TPU_LINK_REDUCE_MASK),
                    uint8_t(pick({0, TPU_DT_BF16, TPU_DT_INT32, TPU_DT_FP32, TPU_DT_INT8, 9})),
                    uint16_t(flags & ~TPU_LINK_REDUCE_MASK));
    return insn;
}

} // namespace

TEST_CASE("link: random link instructions on two cards end with a status, never a hang",
          "[link][fuzz]") {
    const uint32_t mode = GENERATE(TPU_ENGINE_FAST, TPU_ENGINE_CYCLE_ACCURATE);
    LinkRig rig(LinkRig::ring(2, 4), mode, 8u << 20);
    std::mt19937_64 rng(2026 + mode);
    unsigned watchdog_aborts = 0;
    std::array<unsigned, TPU_ERR_COUNT> statuses{};
    for (unsigned round = 0; round < 100; round++) {
        std::vector<Program> programs(2);
        for (Program &p : programs) {
            const unsigned n = 1 + rng() % 6;
            for (unsigned i = 0; i < n; i++)
                p.push_back(random_link_insn(rng));
            p.push_back(halt());
        }
        auto jobs = std::async(std::launch::async, [&] { return rig.run_all(programs); });
        if (jobs.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
            // Waiting on a peer that does not send (or receive): what a reset ends.
            watchdog_aborts++;
            tpu_engine_abort(rig.engine(0));
            tpu_engine_abort(rig.engine(1));
            REQUIRE(jobs.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
        }
        for (const tpu_job_result &r : jobs.get()) {
            REQUIRE(r.status < TPU_ERR_COUNT);
            statuses[r.status]++;
        }
        tpu_engine_reset(rig.engine(0));
        tpu_engine_reset(rig.engine(1));
    }
    CHECK(statuses[TPU_ERR_NONE] > 0);
    CHECK(statuses[TPU_ERR_BAD_OPERAND] > 0);
    CHECK(statuses[TPU_ERR_LINK_DOWN] > 0);
    if (watchdog_aborts == 0)
        CHECK(statuses[TPU_ERR_ABORTED] == 0); // only the watchdog aborts
    WARN("statuses: done " << statuses[TPU_ERR_NONE] << ", bad operand "
                           << statuses[TPU_ERR_BAD_OPERAND] << ", UB range "
                           << statuses[TPU_ERR_UB_RANGE] << ", MMU fault "
                           << statuses[TPU_ERR_MMU_FAULT] << ", link down "
                           << statuses[TPU_ERR_LINK_DOWN] << ", mismatch "
                           << statuses[TPU_ERR_LINK_MISMATCH] << ", partial "
                           << statuses[TPU_ERR_LINK_PARTIAL] << ", aborted "
                           << statuses[TPU_ERR_ABORTED] << " (" << watchdog_aborts
                           << " watchdog aborts)");

    // The link works after all that.
    const auto results =
        rig.run_all({{send(0, 9, 0, 8192), halt()}, {recv(1, 9, 0, 8192), halt()}});
    CHECK(results[0].status == TPU_ERR_NONE);
    CHECK(results[1].status == TPU_ERR_NONE);
}
