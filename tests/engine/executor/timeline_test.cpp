// SPDX-License-Identifier: MIT
// The cycle model: the Timeline's issue, unit and dependency rules on hand-built steps, the cost
// formulas, and small programs whose cycles and stalls are computed by hand in both modes
// (including the cycle-accurate array's own MATMUL cycles against the formula).
#include <catch2/catch.hpp>

#include "executor/cycle_model.hpp"
#include "executor/timeline.hpp"
#include "rig.hpp"

using namespace tpu::engine;
using tpu::test::Program;
using tpu::test::Rig;

namespace {

Step on(uint8_t units, uint64_t cost) {
    Step s;
    s.units = units;
    s.cost = cost;
    return s;
}

} // namespace

TEST_CASE("cost formulas", "[timeline]") {
    CHECK(cycles::dma(1, 940, 44800) == 1);
    CHECK(cycles::dma(44800, 940, 44800) == 940);
    CHECK(cycles::dma(44801, 940, 44800) == 941);
    CHECK(cycles::dma(65535ull * 65535 * 4, 4000000000u, 1) == 65535ull * 65535 * 4 * 4000000000u);
    CHECK(cycles::load_w(7) == 7);
    CHECK(cycles::matmul(5, 3, 4) == 11);
    CHECK(cycles::matmul(5, 3, 4, true) == 35);
    CHECK(cycles::vpu(1) == 1);
    CHECK(cycles::vpu(128) == 1);
    CHECK(cycles::vpu(129) == 2);
}

TEST_CASE("independent units overlap, and one unit runs its instructions in order", "[timeline]") {
    Timeline t;
    CHECK(t.schedule(on(kUnitDma, 10)) == 0);
    CHECK(t.schedule(on(kUnitVpu, 4)) == 1);  // other unit, no shared bytes: next cycle
    CHECK(t.schedule(on(kUnitDma, 3)) == 10); // waits for the DMA unit: 10 - 2 stalled
    CHECK(t.schedule(on(kUnitVpu, 1)) == 11); // issues after the previous start
    CHECK(t.cycles() == 13);
    CHECK(t.stall_cycles() == 8);
}

TEST_CASE("RAW, WAR and WAW on overlapping bytes wait, disjoint bytes do not", "[timeline]") {
    Timeline t;
    t.schedule(on(kUnitDma, 10).add(Space::Ub, 0, 100, true)); // 0 .. 10
    SECTION("read after write") {
        CHECK(t.schedule(on(kUnitVpu, 1).add(Space::Ub, 99, 200, false)) == 10);
    }
    SECTION("write after write") {
        CHECK(t.schedule(on(kUnitVpu, 1).add(Space::Ub, 50, 60, true)) == 10);
    }
    SECTION("disjoint") {
        CHECK(t.schedule(on(kUnitVpu, 1).add(Space::Ub, 100, 200, true)) == 1);
    }
    SECTION("another space") {
        CHECK(t.schedule(on(kUnitVpu, 1).add(Space::Acc, 0, 100, true)) == 1);
    }
    SECTION("write after read") {
        Timeline u;
        u.schedule(on(kUnitDma, 10).add(Space::Ub, 0, 100, false));
        CHECK(u.schedule(on(kUnitVpu, 1).add(Space::Ub, 0, 1, false)) == 1); // read, read
        CHECK(u.schedule(on(kUnitVpu, 1).add(Space::Ub, 0, 1, true)) == 10);
    }
}

TEST_CASE("barriers wait for everything", "[timeline]") {
    Timeline t;
    t.schedule(on(kUnitMxu, 50));
    t.schedule(on(kUnitDma, 5));
    Step sync;
    sync.barrier = true;
    CHECK(t.start_of(sync) == 50);
    CHECK(t.schedule(sync) == 50);
    CHECK(t.cycles() == 51);
}

TEST_CASE("a program's cycles and stalls follow the model in both modes", "[timeline]") {
    const uint32_t mode =
        GENERATE(from_range(std::begin(tpu::test::kModes), std::end(tpu::test::kModes)));
    Rig rig(mode);
    using namespace tpu::test;
    // DMA costs at 940 MHz, 44800 MB/s: 64 bytes -> 2 cycles. MATMUL 4 + 16 + 4 - 1 = 23.
    // Columns: issue, start, finish, stall (when not 0) of each instruction.
    Program p{dma_in(TPU_DT_INT8, 4, 16, Rig::kHost, 16, 0, 16),                //  0  0  2
              dma_in(TPU_DT_INT8, 16, 4, Rig::kHost, 4, 0x100, 4),              //  1  2  4 1
              load_w(TPU_DT_INT8, 16, 4, 0x100, 4),                             //  3  4 20 1
              matmul(TPU_DT_INT8, 4, 16, 0, 16, 0, 16),                         //  5 20 43 15
              load_w(TPU_DT_INT8, 16, 4, 0x100, 4),                             // 21 21 37
              matmul(TPU_DT_INT8, 4, 16, 0, 16, 0x100, 16),                     // 22 43 66 21
              load_w(TPU_DT_INT8, 16, 4, 0x100, 4),                             // 44 44 60
              vector(TPU_DT_INT8, TPU_VOP_ADD, 4, 16, 0, 16, 0, 16, 0x200, 16), // 45 45 46
              dma_out_acc(TPU_DT_INT32, 4, 4, Rig::kHost + 0x1000, 16, 0, 16),  // 46 46 48
              halt()};                                                          // 47 47 48
    // The DMA waits for its unit, the first LOAD_W for its bytes, the first MATMUL for its
    // weights; the second LOAD_W fills the other slot while that MATMUL runs; the second
    // MATMUL waits for the MXU, the third LOAD_W refills slot 0 once the first MATMUL is done.
    tpu_job_result r = rig.run(p);
    REQUIRE(r.status == TPU_ERR_NONE);
    CHECK(r.cycles == 66);
    CHECK(r.stall_cycles == 1 + 1 + 15 + 21);
    CHECK(r.mxu_busy_cycles == 2 * 23);
}

TEST_CASE("a third LOAD_W waits for the MATMUL that used its slot", "[timeline]") {
    const uint32_t mode =
        GENERATE(from_range(std::begin(tpu::test::kModes), std::end(tpu::test::kModes)));
    Rig rig(mode);
    using namespace tpu::test;
    //                                                  start  finish
    Program p{load_w(TPU_DT_INT8, 2, 2, 0, 2),         //   0     2  slot 0
              matmul(TPU_DT_INT8, 100, 2, 0, 2, 0, 8), //   2   105  slot 0 (stall 1)
              load_w(TPU_DT_INT8, 2, 2, 0, 2),         //   3     5  slot 1, overlaps
              load_w(TPU_DT_INT8, 2, 2, 0, 2),         // 105   107  slot 0: waits (stall 101)
              halt()};                                 // 106   107
    tpu_job_result r = rig.run(p);
    REQUIRE(r.status == TPU_ERR_NONE);
    CHECK(r.cycles == 107);
    CHECK(r.stall_cycles == 1 + 101);
}

TEST_CASE("overlapping accumulator rows pass one at a time", "[timeline]") {
    const uint32_t mode =
        GENERATE(from_range(std::begin(tpu::test::kModes), std::end(tpu::test::kModes)));
    Rig rig(mode);
    using namespace tpu::test;
    Program p{load_w(TPU_DT_INT8, 3, 4, 0, 4),        // 0 .. 3
              matmul(TPU_DT_INT8, 5, 3, 0, 3, 0, 4)}; // 3 .. 3 + 5 * (3 + 4)
    tpu_job_result r = rig.run(p);
    REQUIRE(r.status == TPU_ERR_NONE);
    CHECK(r.mxu_busy_cycles == 35);
    CHECK(r.cycles == 38);
}
