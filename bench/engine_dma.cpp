// SPDX-License-Identifier: MIT
// Running and timing the DMA jobs of EngineDma, and the memcpy they are measured against.
#include "engine_dma.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tpu::bench {
namespace {

using namespace tpu::test;

constexpr uint64_t kPage = 4096;
// One DMA row is one page (cols = 4096 int8 elements); a chunk is at most this many rows.
constexpr uint64_t kMaxChunk = 16ull << 20;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

EngineDma::EngineDma(uint64_t bytes, uint32_t threads)
    : bytes_(bytes), chunk_(std::min(bytes, kMaxChunk)) {
    if (bytes == 0 || bytes % kPage)
        throw std::invalid_argument("DMA size must be a positive multiple of 4 KiB");
    // Source, destination, page tables, programs and the arena's reserved first MiB.
    mem_ = std::make_unique<HostMemory>(2 * bytes + (64ull << 20));
    tpu_engine_config cfg = Card::default_config();
    cfg.ub_bytes = uint32_t(std::max<uint64_t>(cfg.ub_bytes, chunk_));
    cfg.threads = threads;
    cfg.mode = TPU_ENGINE_FAST;
    card_ = std::make_unique<Card>(*mem_, cfg);
    space_ = std::make_unique<AddressSpace>(card_->address_space(1));

    source_.resize(bytes);
    for (uint64_t i = 0; i < bytes; i++)
        source_[i] = uint8_t(i * 131 + (i >> 12));
    space_->map(kSrcVa, bytes, kRead);
    space_->map(kDstVa, bytes, kWrite);
    space_->write(kSrcVa, source_.data(), bytes);

    Program in, out, both;
    const uint16_t cols = uint16_t(kPage);
    for (uint64_t off = 0; off < bytes; off += chunk_) {
        const uint16_t rows = uint16_t(std::min(chunk_, bytes - off) / kPage);
        in.push_back(dma_in(TPU_DT_INT8, rows, cols, kSrcVa + off, kPage, 0, kPage));
        out.push_back(dma_out(TPU_DT_INT8, rows, cols, kDstVa + off, kPage, 0, kPage));
        both.push_back(in.back());
        both.push_back(out.back());
    }
    in.push_back(halt());
    out.push_back(halt());
    both.push_back(halt());
    in_ = place(kInProgramVa, in);
    out_ = place(kOutProgramVa, out);
    both_ = place(kBothProgramVa, both);

    host_src_ = source_;
    host_dst_.assign(chunk_, 0);
}

EngineDma::Job EngineDma::place(uint64_t va, const Program &p) {
    const uint64_t program_bytes = p.size() * sizeof(tpu_insn);
    space_->map(va, program_bytes, kRead);
    space_->write(va, p.data(), program_bytes);
    return Job{va, uint32_t(program_bytes)};
}

double EngineDma::run(const Job &job) {
    const auto start = std::chrono::steady_clock::now();
    const tpu_job_result r = card_->run(space_->ctx_id(), job.va, job.bytes);
    const double s = seconds_since(start);
    if (r.status != TPU_ERR_NONE)
        throw std::runtime_error("DMA job failed with status " + std::to_string(r.status) +
                                 " at instruction " + std::to_string(r.error_pc));
    return s;
}

double EngineDma::run_memcpy() {
    const auto start = std::chrono::steady_clock::now();
    for (uint64_t off = 0; off < bytes_; off += chunk_)
        std::memcpy(host_dst_.data(), host_src_.data() + off, std::min(chunk_, bytes_ - off));
    const double s = seconds_since(start);
    // Keep the copies observable.
    if (host_dst_[0] != host_src_[0])
        throw std::runtime_error("memcpy lost its bytes");
    return s;
}

bool EngineDma::round_trip_exact() {
    run(both_);
    std::vector<uint8_t> back(bytes_);
    space_->read(kDstVa, back.data(), bytes_);
    return back == source_;
}

} // namespace tpu::bench
