// SPDX-License-Identifier: MIT
// Instruction and program validation as seen from a job: every malformed field gives its error
// code, the index of the failing instruction and the offending offset; program size limits;
// abort requests. Also the range arithmetic on its own.
#include <catch2/catch.hpp>

#include <chrono>

#include "abort_when_running.hpp"
#include "memory/extent.hpp"
#include "tpu_test/card.hpp"

using namespace tpu::test;

namespace {

constexpr uint32_t kUb = 64 * 1024;
constexpr uint32_t kAcc = 16 * 1024;
constexpr uint64_t kHost = 0x100000;

tpu_engine_config small_config() {
    tpu_engine_config cfg = Card::default_config();
    cfg.mxu_rows = 16;
    cfg.mxu_cols = 8;
    cfg.ub_bytes = kUb;
    cfg.acc_bytes = kAcc;
    cfg.threads = 1;
    return cfg;
}

struct Fixture {
    HostMemory mem{64ull << 20};
    Card card{mem, small_config()};
    AddressSpace space = card.address_space(0);

    Fixture() { space.map(kHost, 256 * 1024, kReadWrite); }

    // Runs three NOPs, then insn (at index 3), then a HALT.
    tpu_job_result run_one(const tpu_insn &insn) {
        return card.run(space, {nop(), nop(), nop(), insn, halt()});
    }
};

void check_error(const tpu_job_result &r, uint32_t status, uint64_t fault_addr = 0) {
    CHECK(r.status == status);
    CHECK(r.error_pc == 3);
    CHECK(r.fault_addr == fault_addr);
}

tpu_insn with_raw_byte(tpu_insn insn, unsigned byte, uint8_t value) {
    reinterpret_cast<uint8_t *>(&insn)[byte] = value;
    return insn;
}

} // namespace

TEST_CASE("unknown opcodes are rejected", "[decoder]") {
    Fixture f;
    for (uint8_t op : {uint8_t(15), uint8_t(0x7f), uint8_t(0xff)})
        check_error(f.run_one(with_raw_byte(nop(), 0, op)), TPU_ERR_BAD_OPCODE);
}

TEST_CASE("NOP and HALT have no operands", "[decoder]") {
    Fixture f;
    for (unsigned byte : {1u, 2u, 4u, 9u, 31u}) {
        CAPTURE(byte);
        check_error(f.run_one(with_raw_byte(nop(), byte, 1)), TPU_ERR_BAD_OPERAND);
        check_error(f.run_one(with_raw_byte(halt(), byte, 0x80)), TPU_ERR_BAD_OPERAND);
    }
}

TEST_CASE("DMA operands are validated", "[decoder]") {
    Fixture f;
    const tpu_insn good_in = dma_in(TPU_DT_BF16, 4, 8, kHost, 16, 64, 16);
    REQUIRE(f.run_one(good_in).status == TPU_ERR_NONE);

    tpu_insn i = good_in;
    SECTION("dtype") {
        i.dma.dtype = 4;
    }
    SECTION("flags on DMA_IN") {
        i.dma.flags = TPU_F_SRC_ACC;
    }
    SECTION("unknown DMA_OUT flag") {
        i = dma_out(TPU_DT_INT8, 1, 1, kHost, 0, 0, 0);
        i.dma.flags = 2;
    }
    SECTION("SRC_ACC with an 8-bit dtype") {
        i = dma_out_acc(TPU_DT_INT8, 1, 4, kHost, 0, 0, 0);
    }
    SECTION("SRC_ACC with bf16") {
        i = dma_out_acc(TPU_DT_BF16, 1, 4, kHost, 0, 0, 0);
    }
    SECTION("reserved") {
        i.dma.reserved = 1;
    }
    SECTION("zero rows") {
        i.dma.rows = 0;
    }
    SECTION("zero cols") {
        i.dma.cols = 0;
    }
    SECTION("misaligned UB address") {
        i.dma.local_addr = 65;
    }
    SECTION("misaligned UB stride") {
        i.dma.local_stride = 15;
    }
    SECTION("misaligned ACC address") {
        i = dma_out_acc(TPU_DT_FP32, 1, 4, kHost, 0, 2, 0);
    }
    check_error(f.run_one(i), TPU_ERR_BAD_OPERAND);
}

TEST_CASE("DMA ranges are checked against the unified buffer and accumulators", "[decoder]") {
    Fixture f;
    // Last byte of the UB is fine, one more is not.
    REQUIRE(f.run_one(dma_in(TPU_DT_INT8, 1, 8, kHost, 0, kUb - 8, 0)).status == TPU_ERR_NONE);
    check_error(f.run_one(dma_in(TPU_DT_INT8, 1, 9, kHost, 0, kUb - 8, 0)), TPU_ERR_UB_RANGE, kUb);
    // Third row starts beyond the UB: the fault address is that row's start.
    check_error(f.run_one(dma_in(TPU_DT_INT8, 3, 16, kHost, 16, 0x100, 0x8000)), TPU_ERR_UB_RANGE,
                0x10100);
    // A start offset far out of range.
    check_error(f.run_one(dma_out(TPU_DT_INT32, 1, 1, kHost, 0, 0xfffffffc, 0)), TPU_ERR_UB_RANGE,
                0xfffffffc);
    // Large row counts and strides do not overflow the range arithmetic (65535 one-byte rows
    // are within the work limit; the second row starts beyond the UB).
    check_error(f.run_one(dma_in(TPU_DT_INT8, 65535, 1, kHost, 0, 0, 0xffffffff)), TPU_ERR_UB_RANGE,
                0xffffffff);
    check_error(f.run_one(dma_out_acc(TPU_DT_INT32, 2, 4, kHost, 0, kAcc - 16, 16)),
                TPU_ERR_ACC_RANGE, kAcc);
}

TEST_CASE("LOAD_W operands are validated", "[decoder]") {
    Fixture f;
    const tpu_insn good = load_w(TPU_DT_BF16, 16, 8, 0, 16);
    REQUIRE(f.run_one(good).status == TPU_ERR_NONE);

    tpu_insn i = good;
    SECTION("dtype INT32") {
        i.mxu.dtype = TPU_DT_INT32;
    }
    SECTION("flags") {
        i.mxu.flags = 4;
    }
    SECTION("acc_addr is reserved") {
        i.mxu.acc_addr = 4;
    }
    SECTION("acc_stride is reserved") {
        i.mxu.acc_stride = 4;
    }
    SECTION("reserved field") {
        i.mxu.reserved = 1;
    }
    SECTION("row_group is reserved") {
        i.mxu.row_group = 1;
    }
    SECTION("group_stride is reserved") {
        i.mxu.group_stride = 16;
    }
    SECTION("K beyond the array rows") {
        i.mxu.rows = 17;
    }
    SECTION("N beyond the array cols") {
        i.mxu.cols = 9;
    }
    SECTION("zero K") {
        i.mxu.rows = 0;
    }
    SECTION("misaligned source") {
        i.mxu.src_addr = 1;
    }
    SECTION("misaligned stride") {
        i.mxu.src_stride = 17;
    }
    check_error(f.run_one(i), TPU_ERR_BAD_OPERAND);
}

TEST_CASE("LOAD_W source must lie in the unified buffer", "[decoder]") {
    Fixture f;
    check_error(f.run_one(load_w(TPU_DT_INT8, 16, 8, kUb - 64, 8)), TPU_ERR_UB_RANGE, kUb);
}

TEST_CASE("MATMUL operands and weights are validated", "[decoder]") {
    Fixture f;
    const tpu_insn weights = load_w(TPU_DT_INT8, 16, 8, 0, 8);
    const tpu_insn good = matmul(TPU_DT_INT8, 4, 16, 0, 16, 0, 32);
    auto run = [&](std::initializer_list<tpu_insn> before, const tpu_insn &insn) {
        Program p{nop()};
        p.insert(p.end(), before);
        while (p.size() < 3)
            p.push_back(nop());
        p.push_back(insn);
        p.push_back(halt());
        return f.card.run(f.space, p);
    };
    REQUIRE(run({weights}, good).status == TPU_ERR_NONE);

    SECTION("no weights loaded") {
        check_error(run({}, good), TPU_ERR_NO_WEIGHTS);
    }
    SECTION("dtype differs from the weights") {
        tpu_insn i = matmul(TPU_DT_BF16, 4, 16, 0, 32, 0, 32);
        check_error(run({weights}, i), TPU_ERR_NO_WEIGHTS);
    }
    SECTION("K differs from the weights") {
        check_error(run({weights}, matmul(TPU_DT_INT8, 4, 15, 0, 16, 0, 32)), TPU_ERR_NO_WEIGHTS);
    }
    SECTION("format errors come before the weights check") {
        tpu_insn i = good;
        SECTION("flags") {
            i.mxu.flags = 2;
        }
        SECTION("dtype") {
            i.mxu.dtype = TPU_DT_INT32;
        }
        SECTION("reserved") {
            i.mxu.reserved = 1;
        }
        SECTION("group_stride without row_group") {
            i.mxu.group_stride = 16;
        }
        SECTION("zero M") {
            i.mxu.rows = 0;
        }
        SECTION("zero K") {
            i.mxu.cols = 0;
        }
        SECTION("misaligned accumulator address") {
            i.mxu.acc_addr = 2;
        }
        SECTION("misaligned accumulator stride") {
            i.mxu.acc_stride = 6;
        }
        SECTION("misaligned bf16 source") {
            i = matmul(TPU_DT_BF16, 4, 16, 1, 32, 0, 32);
        }
        check_error(run({}, i), TPU_ERR_BAD_OPERAND);
    }
    SECTION("activations beyond the unified buffer") {
        check_error(run({weights}, matmul(TPU_DT_INT8, 4, 16, kUb - 32, 16, 0, 32)),
                    TPU_ERR_UB_RANGE, kUb);
    }
    SECTION("results beyond the accumulators (N = 8 from the weights)") {
        check_error(run({weights}, matmul(TPU_DT_INT8, 2, 16, 0, 16, kAcc - 32, 8)),
                    TPU_ERR_ACC_RANGE, kAcc);
    }
}

TEST_CASE("program size is checked before anything runs", "[decoder]") {
    Fixture f;
    Program big(TPU_PROGRAM_MAX_BYTES / sizeof(tpu_insn) + 1, nop());
    f.space.map(Card::kProgramVa, big.size() * sizeof(tpu_insn), kRead);
    f.space.write(Card::kProgramVa, big.data(), big.size() * sizeof(tpu_insn));
    for (uint32_t size : {0u, 31u, 33u, TPU_PROGRAM_MAX_BYTES + 32}) {
        CAPTURE(size);
        tpu_job_result r = f.card.run(0, Card::kProgramVa, size);
        CHECK(r.status == TPU_ERR_PROGRAM);
        CHECK(r.error_pc == 0);
        CHECK(r.cycles == 0);
    }
    // The largest program runs to its end (no HALT needed).
    tpu_job_result r = f.card.run(0, Card::kProgramVa, TPU_PROGRAM_MAX_BYTES);
    CHECK(r.status == TPU_ERR_NONE);
    CHECK(r.cycles == TPU_PROGRAM_MAX_BYTES / sizeof(tpu_insn));
}

TEST_CASE("abort stops a job with ABORTED until reset", "[decoder]") {
    Fixture f;
    Program p{nop(), halt()};
    tpu_engine_abort(f.card.engine());
    tpu_job_result r = f.card.run(f.space, p);
    CHECK(r.status == TPU_ERR_ABORTED);
    CHECK(r.error_pc == 0);
    CHECK(f.card.run(f.space, p).status == TPU_ERR_ABORTED); // sticky
    tpu_engine_reset(f.card.engine());
    CHECK(f.card.run(f.space, p).status == TPU_ERR_NONE);
}

TEST_CASE("abort from another thread interrupts a long program", "[decoder]") {
    HostMemory mem(64ull << 20);
    tpu_engine_config cfg = Card::default_config();
    cfg.threads = 2;
    Card card(mem, cfg);
    AddressSpace space = card.address_space(0);
    // Thousands of 4096 x 128 x 128 MATMULs: minutes of work unless the abort lands.
    Program p{load_w(TPU_DT_BF16, 128, 128, 0, 256)};
    for (int i = 0; i < 20000; i++)
        p.push_back(matmul(TPU_DT_BF16, 4096, 128, 0, 256, 0, 512, TPU_F_ACCUMULATE));
    // Aborted once the LOAD_W is done and the MATMULs have started.
    AbortWhenRunning aborter(card.engine(), 2);
    tpu_job_result r = card.run(space, p);
    const auto end = std::chrono::steady_clock::now();
    aborter.job_ended();
    REQUIRE(aborter.aborted());
    CHECK(r.status == TPU_ERR_ABORTED);
    CHECK(r.error_pc >= 1);
    CHECK(r.error_pc < p.size());
    CHECK(end - aborter.abort_time() < std::chrono::seconds(5));
    tpu_engine_reset(card.engine());
    CHECK(card.run(space, Program{halt()}).status == TPU_ERR_NONE);
}

TEST_CASE("extent range arithmetic finds the lowest offending byte", "[decoder]") {
    using tpu::engine::Extent2D;
    using tpu::engine::extent_fits;
    uint64_t bad = 0;
    CHECK(extent_fits(Extent2D{0, 16, 4, 16}, 64, &bad));
    CHECK_FALSE(extent_fits(Extent2D{0, 16, 5, 16}, 64, &bad));
    CHECK(bad == 64);
    CHECK_FALSE(extent_fits(Extent2D{8, 16, 4, 16}, 64, &bad));
    CHECK(bad == 64); // row 3 is [56, 72)
    CHECK_FALSE(extent_fits(Extent2D{0, 100, 3, 4}, 150, &bad));
    CHECK(bad == 200); // row 2 starts past the end
    CHECK_FALSE(extent_fits(Extent2D{0, 0, 65535, 65}, 64, &bad));
    CHECK(bad == 64); // stride 0: every row is row 0
    CHECK_FALSE(extent_fits(Extent2D{0xffffffff, 0xffffffff, 65535, 262140}, 1u << 31, &bad));
    CHECK(bad == 0xffffffff);
}
