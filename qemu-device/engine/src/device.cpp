// SPDX-License-Identifier: MIT
// Engine configuration checks and construction of the device state.
#include "device.hpp"

#include <algorithm>
#include <thread>

#include "executor/cycle_model.hpp"

namespace tpu::engine {
namespace {

unsigned pool_threads(uint32_t requested) {
    if (requested != 0)
        return requested;
    unsigned cpus = std::thread::hardware_concurrency();
    if (cpus == 0)
        return 1;
    return cpus < kMaxThreads ? cpus : kMaxThreads;
}

} // namespace

const char *config_error(const tpu_engine_config &cfg) {
    if (cfg.mxu_rows == 0 || cfg.mxu_rows > kMaxMxuDim || cfg.mxu_cols == 0 ||
        cfg.mxu_cols > kMaxMxuDim)
        return "mxu_rows and mxu_cols must be in 1..4096";
    if (cfg.ub_bytes == 0)
        return "ub_bytes must not be 0";
    if (cfg.acc_bytes == 0 || cfg.acc_bytes % 4 != 0)
        return "acc_bytes must be a non-zero multiple of 4";
    if (cfg.clock_mhz == 0)
        return "clock_mhz must not be 0";
    if (cfg.threads > kMaxThreads)
        return "threads must be at most 256 (0 = one per host CPU)";
    if (cfg.tlb_entries > Mmu::kMaxTlbEntries)
        return "tlb_entries must be at most 65536 (0 = 8192)";
    if (cfg.mode != TPU_ENGINE_FAST && cfg.mode != TPU_ENGINE_CYCLE_ACCURATE)
        return "mode must be TPU_ENGINE_FAST (0) or TPU_ENGINE_CYCLE_ACCURATE (1)";
    return nullptr;
}

Device::Device(const tpu_engine_config &cfg, tpu_phys_rw_fn rw, void *opaque)
    : limits{cfg.mxu_rows, cfg.mxu_cols, cfg.ub_bytes, cfg.acc_bytes}, phys(rw, opaque),
      mmu(phys, cfg.tlb_entries, abort_requested), dma(phys, mmu), ub(cfg.ub_bytes),
      acc(cfg.acc_bytes), weights(cfg.mxu_rows, cfg.mxu_cols),
      weight_rows(4 * uint64_t(cfg.mxu_rows) * cfg.mxu_cols),
      chain_weights(
          cfg.mode == TPU_ENGINE_FAST
              ? uint32_t(std::min<uint64_t>(kMaxChainDepth, kChainWeightWords / cfg.mxu_cols))
              : 0,
          cfg.mxu_cols),
      chain_src(cfg.mode == TPU_ENGINE_FAST ? kChainSrcBytes : 0), pool(pool_threads(cfg.threads)),
      mxu(pool), clock_mhz(cfg.clock_mhz),
      dma_mbps(cfg.dma_mbps ? cfg.dma_mbps : cycles::kDefaultDmaMbps),
      cycle_accurate(cfg.mode == TPU_ENGINE_CYCLE_ACCURATE), links(cfg.clock_mhz) {
    if (cycle_accurate)
        array = std::make_unique<SystolicArray>(cfg.mxu_rows, cfg.mxu_cols);
}

void TestHold::arm(bool on, uint32_t pc) {
    std::lock_guard<std::mutex> guard(lock_);
    pc_ = pc;
    armed_.store(on);
}

void TestHold::release() {
    std::lock_guard<std::mutex> guard(lock_);
    releases_++;
    released_.notify_all();
}

bool TestHold::held(uint32_t *pc) {
    std::lock_guard<std::mutex> guard(lock_);
    *pc = held_pc_;
    return held_;
}

void TestHold::abort() {
    // The request is set before the lock is taken: a job about to wait sees it under the lock,
    // one already waiting is woken.
    std::lock_guard<std::mutex> guard(lock_);
    released_.notify_all();
}

void TestHold::hold_at(uint32_t pc) {
    std::unique_lock<std::mutex> guard(lock_);
    if (!armed_.load() || pc < pc_ || abort_.load() || held_job_ == job_)
        return;
    armed_.store(false);
    held_job_ = job_;
    held_ = true;
    held_pc_ = pc;
    const uint64_t releases = releases_;
    released_.wait(guard, [&] { return releases_ != releases || abort_.load(); });
    held_ = false;
}

void Device::clear_state() {
    ub.clear();
    acc.clear();
    weights.unload();
}

} // namespace tpu::engine
