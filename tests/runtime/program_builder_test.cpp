// SPDX-License-Identifier: MIT
// program_builder_test.cpp - the program builder encodes every field where tpu_hw.h puts it and
// refuses values that would not fit instead of truncating them.
#include <tpurt/error.hpp>
#include <tpurt/program_builder.hpp>

#include <catch2/catch.hpp>

using tpurt::DType;

TEST_CASE("DMA instructions are encoded field by field", "[builder]") {
    tpurt::ProgramBuilder builder;
    builder.dma_in({.type = DType::Bf16,
                    .host_addr = 0x123456789aull,
                    .host_stride = 1000,
                    .local_addr = 64,
                    .local_stride = 30,
                    .rows = 7,
                    .cols = 15});
    builder.dma_out({.type = DType::Int8,
                     .host_addr = 0x8000,
                     .host_stride = 32,
                     .local_addr = 0,
                     .local_stride = 16,
                     .rows = 2,
                     .cols = 16});
    builder.dma_out_acc({.type = DType::Fp32,
                         .host_addr = 0x4000,
                         .host_stride = 64,
                         .local_addr = 128,
                         .local_stride = 16,
                         .rows = 65535,
                         .cols = 4});
    const tpurt::Program program = builder.finish();
    REQUIRE(program.insns.size() == 3);
    CHECK(builder.empty());

    const tpu_insn_dma &in = program.insns[0].dma;
    CHECK(in.opcode == TPU_OP_DMA_IN);
    CHECK(in.dtype == TPU_DT_BF16);
    CHECK(in.flags == 0);
    CHECK(in.rows == 7);
    CHECK(in.cols == 15);
    CHECK(in.host_addr == 0x123456789aull);
    CHECK(in.host_stride == 1000);
    CHECK(in.local_addr == 64);
    CHECK(in.local_stride == 30);
    CHECK(in.reserved == 0);

    const tpu_insn_dma &ub_out = program.insns[1].dma;
    CHECK(ub_out.opcode == TPU_OP_DMA_OUT);
    CHECK(ub_out.flags == 0);
    CHECK(ub_out.host_stride == 32);

    const tpu_insn_dma &out = program.insns[2].dma;
    CHECK(out.opcode == TPU_OP_DMA_OUT);
    CHECK(out.dtype == TPU_DT_FP32);
    CHECK(out.flags == TPU_F_SRC_ACC);
    CHECK(out.rows == 65535);
}

TEST_CASE("matrix-unit instructions are encoded field by field", "[builder]") {
    tpurt::ProgramBuilder builder;
    builder.load_weights(
        {.type = DType::Int8, .src_addr = 256, .src_stride = 128, .rows = 128, .cols = 100});
    builder.matmul({.type = DType::Int8,
                    .src_addr = 1024,
                    .src_stride = 128,
                    .rows = 300,
                    .cols = 128,
                    .acc_addr = 8,
                    .acc_stride = 400,
                    .accumulate = true});
    builder.halt();
    const tpurt::Program program = builder.finish();
    REQUIRE(program.insns.size() == 3);
    CHECK(program.size_bytes() == 3 * TPU_INSN_SIZE);

    const tpu_insn_mxu &load = program.insns[0].mxu;
    CHECK(load.opcode == TPU_OP_LOAD_W);
    CHECK(load.dtype == TPU_DT_INT8);
    CHECK(load.flags == 0);
    CHECK(load.rows == 128);
    CHECK(load.cols == 100);
    CHECK(load.src_addr == 256);
    CHECK(load.src_stride == 128);

    const tpu_insn_mxu &mm = program.insns[1].mxu;
    CHECK(mm.opcode == TPU_OP_MATMUL);
    CHECK(mm.flags == TPU_F_ACCUMULATE);
    CHECK(mm.rows == 300);
    CHECK(mm.cols == 128);
    CHECK(mm.acc_addr == 8);
    CHECK(mm.acc_stride == 400);
    CHECK(mm.row_group == 0);
    CHECK(mm.reserved == 0);
    CHECK(mm.group_stride == 0);

    const union tpu_insn &halt = program.insns[2];
    CHECK(halt.hdr.opcode == TPU_OP_HALT);
    CHECK(halt.raw[1] == 0);
    CHECK(halt.raw[2] == 0);
    CHECK(halt.raw[3] == 0);
}

TEST_CASE("values that do not fit their fields are refused", "[builder]") {
    tpurt::ProgramBuilder builder;
    const tpurt::DmaTransfer ok{.type = DType::Int8, .host_stride = 16, .rows = 1, .cols = 16};
    SECTION("zero rows") {
        tpurt::DmaTransfer t = ok;
        t.rows = 0;
        CHECK_THROWS_AS(builder.dma_in(t), tpurt::Error);
    }
    SECTION("65536 columns") {
        tpurt::DmaTransfer t = ok;
        t.cols = 65536;
        CHECK_THROWS_AS(builder.dma_in(t), tpurt::Error);
    }
    SECTION("host stride beyond 32 bits") {
        tpurt::DmaTransfer t = ok;
        t.host_stride = 1ull << 32;
        CHECK_THROWS_AS(builder.dma_in(t), tpurt::Error);
    }
    SECTION("accumulators read as int8") {
        CHECK_THROWS_AS(builder.dma_out_acc(ok), tpurt::Error);
    }
    SECTION("fp32 weights") {
        CHECK_THROWS_AS(builder.load_weights({.type = DType::Fp32, .rows = 1, .cols = 1}),
                        tpurt::Error);
    }
    CHECK(builder.empty());
}
