// SPDX-License-Identifier: MIT
// Running and timing a GEMM on the engine.
#include "engine_gemm.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include <tpurt/codegen/matmul_compiler.hpp>

namespace tpu::bench {
namespace {

using namespace tpu::test;

constexpr uint64_t kPage = 4096;

uint64_t page_round(uint64_t v) {
    return (v + kPage - 1) & ~(kPage - 1);
}

uint32_t write_program(AddressSpace &space, uint64_t va, const Program &p) {
    const uint64_t bytes = p.size() * sizeof(tpu_insn);
    space.map(va, bytes, kRead);
    space.write(va, p.data(), bytes);
    return uint32_t(bytes);
}

// The runtime's programs for C = A x B on a card with cfg's array and memories.
std::vector<Program> runtime_programs(const Gemm &g, const tpu_engine_config &cfg) {
    const tpurt::MatmulProblem problem{.type = tpurt::DType(g.dtype),
                                       .m = g.m,
                                       .k = g.k,
                                       .n = g.n,
                                       .a_addr = g.a_va,
                                       .b_addr = g.b_va,
                                       .c_addr = g.c_va};
    const tpurt::ArrayLimits limits{cfg.mxu_rows, cfg.mxu_cols, cfg.ub_bytes, cfg.acc_bytes};
    std::vector<Program> out;
    for (tpurt::Program &p : tpurt::compile_matmul(problem, limits).programs)
        out.push_back(std::move(p.insns));
    return out;
}

} // namespace

EngineGemm::EngineGemm(const Gemm &g, uint32_t mxu_dim, uint32_t threads, uint32_t mode,
                       const void *a, const void *b)
    : gemm_(g) {
    const uint32_t es = elem_bytes(g.dtype);
    const uint64_t a_bytes = uint64_t(g.m) * g.k * es;
    const uint64_t b_bytes = uint64_t(g.k) * g.n * es;
    const uint64_t c_bytes = uint64_t(g.m) * g.n * 4;
    // Data, page tables, programs, and the first MiB HostMemory keeps free.
    const uint64_t host_bytes =
        page_round(a_bytes) + page_round(b_bytes) + page_round(c_bytes) + (64ull << 20);
    mem_ = std::make_unique<HostMemory>(host_bytes);

    tpu_engine_config cfg = Card::default_config();
    cfg.mxu_rows = mxu_dim;
    cfg.mxu_cols = mxu_dim;
    cfg.ub_bytes = uint32_t(std::max<uint64_t>(cfg.ub_bytes, page_round(ub_bytes(g))));
    cfg.acc_bytes = uint32_t(std::max<uint64_t>(cfg.acc_bytes, page_round(acc_bytes(g))));
    cfg.threads = threads;
    cfg.mode = mode;
    card_ = std::make_unique<Card>(*mem_, cfg);
    space_ = std::make_unique<AddressSpace>(card_->address_space(1));

    space_->map(g.a_va, a_bytes, kRead);
    space_->map(g.b_va, b_bytes, kRead);
    space_->map(g.c_va, c_bytes, kWrite);
    space_->write(g.a_va, a, a_bytes);
    space_->write(g.b_va, b, b_bytes);
    gemm_bytes_ = write_program(*space_, kGemmVa, gemm_program(g, cfg.mxu_rows, cfg.mxu_cols));
    dma_bytes_ = write_program(*space_, kDmaVa, dma_only_program(g));
    uint64_t va = kRuntimeVa;
    for (const Program &p : runtime_programs(g, cfg)) {
        runtime_bytes_.push_back(write_program(*space_, va, p));
        va += page_round(runtime_bytes_.back());
    }
}

double EngineGemm::run_runtime() {
    double seconds = 0;
    uint64_t va = kRuntimeVa;
    for (uint32_t bytes : runtime_bytes_) {
        seconds += run_once(va, bytes);
        va += page_round(bytes);
    }
    return seconds;
}

double EngineGemm::run_once(uint64_t va, uint32_t bytes) {
    const auto start = std::chrono::steady_clock::now();
    result_ = card_->run(space_->ctx_id(), va, bytes);
    const auto end = std::chrono::steady_clock::now();
    if (result_.status != TPU_ERR_NONE)
        throw std::runtime_error("engine job failed with status " + std::to_string(result_.status) +
                                 " at instruction " + std::to_string(result_.error_pc));
    return std::chrono::duration<double>(end - start).count();
}

std::vector<uint8_t> EngineGemm::c() const {
    std::vector<uint8_t> out(uint64_t(gemm_.m) * gemm_.n * 4);
    space_->read(gemm_.c_va, out.data(), out.size());
    return out;
}

} // namespace tpu::bench
