// SPDX-License-Identifier: MIT
// program_builder_test.cpp - the program builder encodes every field of every spec 1.1
// instruction where tpu_hw.h puts it, leaves everything else zero, and refuses values that
// would not fit (or types and operations the instruction does not take) instead of truncating.
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/error.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cstddef>

using tpurt::DType;

namespace {

// Bytes [from, 32) of an instruction are zero.
bool zero_from(const union tpu_insn &insn, std::size_t from) {
    const auto *bytes = reinterpret_cast<const unsigned char *>(&insn);
    for (std::size_t i = from; i < sizeof(insn); ++i)
        if (bytes[i] != 0)
            return false;
    return true;
}

} // namespace

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
    SECTION("int32 weights") {
        CHECK_THROWS_AS(
            builder.load_weights(tpurt::WeightLoad{.type = DType::Int32, .rows = 1, .cols = 1}),
            tpurt::Error);
        CHECK_THROWS_AS(
            builder.load_weights(tpurt::HostWeightLoad{.type = DType::Int32, .rows = 1, .cols = 1}),
            tpurt::Error);
    }
    SECTION("int32 matmul") {
        CHECK_THROWS_AS(builder.matmul({.type = DType::Int32, .rows = 1, .cols = 1}), tpurt::Error);
    }
    SECTION("a group stride without a row group") {
        CHECK_THROWS_AS(builder.matmul({.rows = 4, .cols = 4, .group_stride = 64}), tpurt::Error);
    }
    SECTION("a row group beyond 16 bits") {
        CHECK_THROWS_AS(builder.matmul({.rows = 4, .cols = 4, .row_group = 65536}), tpurt::Error);
    }
    SECTION("an unknown dtype") {
        tpurt::DmaTransfer t = ok;
        t.type = static_cast<DType>(7);
        CHECK_THROWS_AS(builder.dma_in(t), tpurt::Error);
    }
    SECTION("unknown operations") {
        CHECK_THROWS_AS(builder.activate(
                            {.function = static_cast<tpurt::Activation>(12), .rows = 1, .cols = 1}),
                        tpurt::Error);
        CHECK_THROWS_AS(
            builder.vector({.op = static_cast<tpurt::VectorOp>(9), .rows = 1, .cols = 1}),
            tpurt::Error);
        CHECK_THROWS_AS(
            builder.reduce({.op = static_cast<tpurt::ReduceOp>(2), .rows = 1, .cols = 1}),
            tpurt::Error);
        CHECK_THROWS_AS(builder.pool({.op = static_cast<tpurt::PoolOp>(2),
                                      .out_rows = 1,
                                      .out_cols = 1,
                                      .channels = 1,
                                      .win_h = 1,
                                      .win_w = 1,
                                      .stride_h = 1,
                                      .stride_w = 1}),
                        tpurt::Error);
    }
    SECTION("pool windows and strides outside 1..255") {
        const tpurt::PoolStep pool{.out_rows = 1,
                                   .out_cols = 1,
                                   .channels = 1,
                                   .win_h = 1,
                                   .win_w = 1,
                                   .stride_h = 1,
                                   .stride_w = 1};
        tpurt::PoolStep p = pool;
        p.win_w = 256;
        CHECK_THROWS_AS(builder.pool(p), tpurt::Error);
        p = pool;
        p.stride_h = 0;
        CHECK_THROWS_AS(builder.pool(p), tpurt::Error);
        p = pool;
        p.channels = 0;
        CHECK_THROWS_AS(builder.pool(p), tpurt::Error);
    }
    SECTION("an empty transpose") {
        CHECK_THROWS_AS(builder.transpose({.rows = 0, .cols = 4}), tpurt::Error);
    }
    CHECK(builder.empty());
}

TEST_CASE("LOAD_W from the unified buffer or host, transposed, and fp32 matmuls", "[builder]") {
    tpurt::ProgramBuilder builder;
    builder.load_weights(tpurt::WeightLoad{.type = DType::Fp32,
                                           .src_addr = 512,
                                           .src_stride = 256,
                                           .rows = 64,
                                           .cols = 32,
                                           .transposed = true});
    builder.load_weights(tpurt::HostWeightLoad{.type = DType::Bf16,
                                               .host_addr = 0x7654321000ull,
                                               .host_stride = 4096,
                                               .rows = 128,
                                               .cols = 128});
    builder.load_weights(tpurt::HostWeightLoad{.type = DType::Int8,
                                               .host_addr = 0x1000,
                                               .host_stride = 16,
                                               .rows = 16,
                                               .cols = 8,
                                               .transposed = true});
    builder.matmul({.type = DType::Fp32,
                    .src_addr = 4096,
                    .src_stride = 12,
                    .rows = 36,
                    .cols = 3,
                    .acc_addr = 0,
                    .acc_stride = 64,
                    .row_group = 6,
                    .group_stride = 96});
    const tpurt::Program program = builder.finish();
    REQUIRE(program.insns.size() == 4);

    const tpu_insn_mxu &ub = program.insns[0].mxu;
    CHECK(ub.opcode == TPU_OP_LOAD_W);
    CHECK(ub.dtype == TPU_DT_FP32);
    CHECK(ub.flags == TPU_F_W_TRANSPOSE);
    CHECK(ub.rows == 64);
    CHECK(ub.cols == 32);
    CHECK(ub.src_addr == 512);
    CHECK(ub.src_stride == 256);
    CHECK(zero_from(program.insns[0], offsetof(tpu_insn_mxu, acc_addr)));

    const tpu_insn_dma &host = program.insns[1].dma;
    CHECK(host.opcode == TPU_OP_LOAD_W);
    CHECK(host.dtype == TPU_DT_BF16);
    CHECK(host.flags == TPU_F_W_HOST);
    CHECK(host.rows == 128);
    CHECK(host.cols == 128);
    CHECK(host.host_addr == 0x7654321000ull);
    CHECK(host.host_stride == 4096);
    CHECK(host.local_addr == 0);
    CHECK(host.local_stride == 0);
    CHECK(host.reserved == 0);
    CHECK(program.insns[2].dma.flags == (TPU_F_W_HOST | TPU_F_W_TRANSPOSE));
    CHECK(program.insns[2].dma.dtype == TPU_DT_INT8);

    const tpu_insn_mxu &mm = program.insns[3].mxu;
    CHECK(mm.opcode == TPU_OP_MATMUL);
    CHECK(mm.dtype == TPU_DT_FP32);
    CHECK(mm.flags == 0);
    CHECK(mm.row_group == 6);
    CHECK(mm.reserved == 0);
    CHECK(mm.group_stride == 96);
}

TEST_CASE("vector-unit instructions are encoded field by field", "[builder]") {
    tpurt::ProgramBuilder builder;
    builder.activate({.out_type = DType::Int8,
                      .function = tpurt::Activation::Gelu,
                      .src_int32 = true,
                      .acc_addr = 16,
                      .acc_stride = 512,
                      .dst_addr = 1000,
                      .dst_stride = 128,
                      .rows = 9,
                      .cols = 100,
                      .bias_addr = 2048,
                      .scale = 0.25f});
    builder.activate({.function = tpurt::Activation::Exp, .rows = 1, .cols = 2});
    builder.vector({.type = DType::Bf16,
                    .op = tpurt::VectorOp::Min,
                    .a_addr = 2,
                    .a_stride = 20,
                    .b_addr = 200,
                    .b_stride = 0,
                    .dst_addr = 400,
                    .dst_stride = 22,
                    .rows = 3,
                    .cols = 10});
    builder.reduce({.type = DType::Int8,
                    .op = tpurt::ReduceOp::Max,
                    .a_addr = 5,
                    .a_stride = 7,
                    .dst_addr = 99,
                    .dst_stride = 1,
                    .rows = 4,
                    .cols = 7});
    builder.transpose({.type = DType::Fp32,
                       .src_addr = 64,
                       .src_stride = 16,
                       .dst_addr = 128,
                       .dst_stride = 32,
                       .rows = 8,
                       .cols = 4});
    builder.pool({.type = DType::Bf16,
                  .op = tpurt::PoolOp::Avg,
                  .src_addr = 4,
                  .src_row_stride = 600,
                  .dst_addr = 8000,
                  .dst_row_stride = 300,
                  .out_rows = 10,
                  .out_cols = 11,
                  .channels = 12,
                  .win_h = 3,
                  .win_w = 2,
                  .stride_h = 2,
                  .stride_w = 1});
    const tpurt::Program program = builder.finish();
    REQUIRE(program.insns.size() == 6);

    const tpu_insn_act &act = program.insns[0].act;
    CHECK(act.opcode == TPU_OP_ACTIVATE);
    CHECK(act.dtype == TPU_DT_INT8);
    CHECK(act.flags == (TPU_ACT_GELU | TPU_F_ACT_BIAS | TPU_F_ACT_SRC_INT32));
    CHECK(act.rows == 9);
    CHECK(act.cols == 100);
    CHECK(act.acc_addr == 16);
    CHECK(act.acc_stride == 512);
    CHECK(act.dst_addr == 1000);
    CHECK(act.dst_stride == 128);
    CHECK(act.bias_addr == 2048);
    CHECK(act.scale == std::bit_cast<std::uint32_t>(0.25f));
    const tpu_insn_act &plain = program.insns[1].act;
    CHECK(plain.dtype == TPU_DT_FP32);
    CHECK(plain.flags == TPU_ACT_EXP);
    CHECK(plain.bias_addr == 0);
    CHECK(plain.scale == 0x3f800000u);

    const tpu_insn_vec &vec = program.insns[2].vec;
    CHECK(vec.opcode == TPU_OP_VECTOR);
    CHECK(vec.dtype == TPU_DT_BF16);
    CHECK(vec.flags == TPU_VOP_MIN);
    CHECK(vec.rows == 3);
    CHECK(vec.cols == 10);
    CHECK(vec.a_addr == 2);
    CHECK(vec.a_stride == 20);
    CHECK(vec.b_addr == 200);
    CHECK(vec.b_stride == 0);
    CHECK(vec.dst_addr == 400);
    CHECK(vec.dst_stride == 22);

    const tpu_insn_vec &red = program.insns[3].vec;
    CHECK(red.opcode == TPU_OP_REDUCE);
    CHECK(red.dtype == TPU_DT_INT8);
    CHECK(red.flags == TPU_ROP_MAX);
    CHECK(red.a_addr == 5);
    CHECK(red.a_stride == 7);
    CHECK(red.b_addr == 0);
    CHECK(red.b_stride == 0);
    CHECK(red.dst_addr == 99);
    CHECK(red.dst_stride == 1);

    const tpu_insn_vec &tr = program.insns[4].vec;
    CHECK(tr.opcode == TPU_OP_TRANSPOSE);
    CHECK(tr.dtype == TPU_DT_FP32);
    CHECK(tr.flags == 0);
    CHECK(tr.rows == 8);
    CHECK(tr.cols == 4);
    CHECK(tr.a_addr == 64);
    CHECK(tr.a_stride == 16);
    CHECK(tr.b_addr == 0);
    CHECK(tr.dst_addr == 128);
    CHECK(tr.dst_stride == 32);

    const tpu_insn_pool &pool = program.insns[5].pool;
    CHECK(pool.opcode == TPU_OP_POOL);
    CHECK(pool.dtype == TPU_DT_BF16);
    CHECK(pool.flags == TPU_POOL_AVG);
    CHECK(pool.rows == 10);
    CHECK(pool.cols == 11);
    CHECK(pool.channels == 12);
    CHECK(pool.win_h == 3);
    CHECK(pool.win_w == 2);
    CHECK(pool.stride_h == 2);
    CHECK(pool.stride_w == 1);
    CHECK(pool.reserved == 0);
    CHECK(pool.src_addr == 4);
    CHECK(pool.src_row_stride == 600);
    CHECK(pool.dst_addr == 8000);
    CHECK(pool.dst_row_stride == 300);
}

TEST_CASE("NOP, SYNC, TIMESTAMP and HALT", "[builder]") {
    tpurt::ProgramBuilder builder;
    builder.nop().sync().timestamp(0xabcdef008ull, 0x12345678).halt();
    const tpurt::Program program = builder.finish();
    REQUIRE(program.insns.size() == 4);
    CHECK(program.insns[0].hdr.opcode == TPU_OP_NOP);
    CHECK(zero_from(program.insns[0], 1));
    CHECK(program.insns[1].hdr.opcode == TPU_OP_SYNC);
    CHECK(zero_from(program.insns[1], 1));
    const tpu_insn_ts &ts = program.insns[2].ts;
    CHECK(ts.opcode == TPU_OP_TIMESTAMP);
    CHECK(ts.dtype == 0);
    CHECK(ts.flags == 0);
    CHECK(ts.tag == 0x12345678);
    CHECK(ts.host_addr == 0xabcdef008ull);
    CHECK(ts.reserved[0] == 0);
    CHECK(ts.reserved[1] == 0);
    CHECK(program.insns[3].hdr.opcode == TPU_OP_HALT);
    CHECK(zero_from(program.insns[3], 1));
}

TEST_CASE("spec 1.4 encodings: the new functions and ops, VECTOR's per-row broadcast",
          "[builder]") {
    tpurt::ProgramBuilder builder;
    builder.activate({.function = tpurt::Activation::Recip, .rows = 1, .cols = 1});
    builder.vector(
        {.op = tpurt::VectorOp::Div, .b_stride = 4, .rows = 2, .cols = 3, .b_column = true});
    builder.vector({.op = tpurt::VectorOp::Eq, .rows = 1, .cols = 1});
    const tpurt::Program program = builder.finish();
    CHECK(program.insns[0].act.flags == TPU_ACT_RECIP);
    CHECK(program.insns[1].vec.flags == (TPU_VOP_DIV | TPU_F_VEC_B_COL));
    CHECK(program.insns[1].vec.b_stride == 4);
    CHECK(program.insns[2].vec.flags == TPU_VOP_EQ);
}

TEST_CASE("spec 2.0 link instructions: SEND and RECV field by field, bad ones refused",
          "[builder]") {
    tpurt::ProgramBuilder builder;
    builder.send({3, 0xdeadbeef, 0x1234567000ull, 65536, true});
    builder.recv({1, 7, 4096, 1u << 20, false, tpurt::LinkReduce::Sum, DType::Bf16});
    builder.recv({0, 8, 0x7000, 64, true});
    const tpurt::Program program = builder.finish();
    REQUIRE(program.insns.size() == 3);
    const tpu_insn_link &s = program.insns[0].link;
    CHECK(s.opcode == TPU_OP_SEND);
    CHECK(s.dtype == 0);
    CHECK(s.flags == TPU_F_LINK_HOST);
    CHECK(s.port == 3);
    CHECK(s.tag == 0xdeadbeef);
    CHECK(s.len == 65536);
    CHECK(s.addr == 0x1234567000ull);
    CHECK(s.reserved0 == 0);
    CHECK(s.reserved1 == 0);
    CHECK(s.reserved2 == 0);
    const tpu_insn_link &r = program.insns[1].link;
    CHECK(r.opcode == TPU_OP_RECV);
    CHECK(r.dtype == TPU_DT_BF16);
    CHECK(r.flags == TPU_LINK_SUM);
    CHECK(r.port == 1);
    CHECK(r.len == (1u << 20));
    CHECK(r.addr == 4096);
    const tpu_insn_link &c = program.insns[2].link;
    CHECK(c.dtype == 0); // a copy has no type
    CHECK(c.flags == TPU_F_LINK_HOST);

    CHECK_THROWS_AS(builder.send({TPU_ICI_MAX_PORTS, 0, 0, 64}), tpurt::Error);
    CHECK_THROWS_AS(builder.send({0, 0, 0, 0}), tpurt::Error);
    CHECK_THROWS_AS(builder.send({0, 0, 0, TPU_ICI_MAX_BYTES + 1}), tpurt::Error);
    CHECK_THROWS_AS(builder.recv({0, 0, 0, 64, false, tpurt::LinkReduce::Max, DType::Int8}),
                    tpurt::Error);
    CHECK_THROWS_AS(builder.recv({0, 0, 0, 64, false, static_cast<tpurt::LinkReduce>(9)}),
                    tpurt::Error);
    CHECK(builder.empty());
}
