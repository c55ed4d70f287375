// SPDX-License-Identifier: MIT
// Fast mode vs cycle-accurate mode on random valid programs that mix every instruction: results,
// cycle counts and every byte written to host memory (including the final UB and ACC state)
// must be identical. Also checks that the generated programs really run to completion and
// cover every opcode, so the comparison is not vacuous.
#include <catch2/catch.hpp>

#include <set>

#include "tpu_test/card.hpp"
#include "tpu_test/equivalence.hpp"
#include "tpu_test/random_program.hpp"

using namespace tpu::test;

TEST_CASE("random valid programs give identical results in both engine modes", "[equivalence]") {
    const uint32_t threads = GENERATE(1u, 2u);
    EquivalenceRig rig(ProgramLimits{}, threads);
    for (uint64_t seed = 1; seed <= 300; seed++) {
        Program p = random_program(seed, rig.limits());
        CAPTURE(threads, seed, p.size());
        REQUIRE(rig.compare(p, seed * 7919) == "");
    }
}

TEST_CASE("random programs on a 1x1 and a 16x4 array agree too", "[equivalence]") {
    for (auto [rows, cols] : {std::pair{1u, 1u}, std::pair{16u, 4u}}) {
        ProgramLimits lim;
        lim.mxu_rows = rows;
        lim.mxu_cols = cols;
        lim.ub_bytes = 4096;
        lim.acc_bytes = 2048;
        EquivalenceRig rig(lim);
        for (uint64_t seed = 1000; seed < 1100; seed++) {
            CAPTURE(rows, cols, seed);
            REQUIRE(rig.compare(random_program(seed, lim), seed) == "");
        }
    }
}

TEST_CASE("generated programs are valid and use every instruction", "[equivalence]") {
    ProgramLimits lim;
    HostMemory mem(256ull << 20);
    tpu_engine_config cfg = Card::default_config();
    cfg.mxu_rows = lim.mxu_rows;
    cfg.mxu_cols = lim.mxu_cols;
    cfg.ub_bytes = lim.ub_bytes;
    cfg.acc_bytes = lim.acc_bytes;
    cfg.threads = 1;
    Card card(mem, cfg);
    AddressSpace space = card.address_space(1);
    space.map(lim.input_va, lim.input_bytes, kRead);
    space.map(lim.output_va, lim.output_bytes, kReadWrite);
    space.map(lim.dump_va, lim.ub_bytes + lim.acc_bytes, kReadWrite);
    std::set<int> opcodes;
    std::set<int> load_flags;
    bool grouped = false;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        Program p = random_program(seed, lim);
        tpu_job_result r = card.run(space, p);
        CAPTURE(seed);
        REQUIRE(r.status == TPU_ERR_NONE);
        for (const tpu_insn &i : p) {
            opcodes.insert(i.hdr.opcode);
            if (i.hdr.opcode == TPU_OP_LOAD_W)
                load_flags.insert(i.hdr.flags);
            grouped |= i.hdr.opcode == TPU_OP_MATMUL && i.mxu.row_group != 0;
        }
    }
    CHECK(opcodes.size() == 13);
    CHECK(load_flags.size() == 4);
    CHECK(grouped);
}

TEST_CASE("the fuzzing entry point accepts any bytes", "[equivalence]") {
    const uint8_t empty[1] = {};
    CHECK(tpu_test_equivalence_one(empty, 0) == 0);
    std::vector<uint8_t> bytes(512);
    for (uint64_t seed = 0; seed < 40; seed++) {
        std::mt19937_64 rng(seed);
        for (uint8_t &b : bytes)
            b = uint8_t(rng());
        CHECK(tpu_test_equivalence_one(bytes.data(), bytes.size()) == 0);
    }
}
