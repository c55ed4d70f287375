// SPDX-License-Identifier: MIT
// Device: everything one engine instance owns — the validated configuration, the host memory
// callback, MMU and DMA, the on-chip unified buffer and accumulators, the weight tile, the fast
// matrix unit with its thread pool (and in cycle-accurate mode the systolic array model), the
// cycle model's parameters, and the abort request. All sized at creation but fast mode's
// copies of deferred MATMULs and sequence tiles, made on the first job that needs them (a job
// for which they cannot be allocated fails, tpu_engine_run()).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "isa/decoder.hpp"
#include "link/fabric.hpp"
#include "memory/dma.hpp"
#include "memory/local_memory.hpp"
#include "memory/mmu.hpp"
#include "memory/phys_memory.hpp"
#include "mxu/mxu.hpp"
#include "mxu/systolic_array.hpp"
#include "mxu/weight_tile.hpp"
#include "thread_pool.hpp"
#include "tpu_engine.h"

namespace tpu::engine {

// Limits of a configuration (tpu_engine.h).
inline constexpr uint32_t kMaxMxuDim = 4096;
inline constexpr uint32_t kMaxThreads = 256;
// Fast mode fuses a chain of LOAD_W / MATMUL pairs over the same accumulators into one MATMUL
// (executor_chain.cpp) of at most kMaxChainDepth k, whose weights take at most
// kChainWeightWords words and whose activations, when they must be gathered, go through
// kChainSrcBytes at a time.
inline constexpr uint32_t kMaxChainDepth = 4096;
// Tiles of fewer k neither chain nor wait as deferred MATMULs (deferred_matmuls.hpp).
inline constexpr uint32_t kMinChainTileK = 8;
inline constexpr uint64_t kChainWeightWords = 1u << 19;
inline constexpr uint64_t kChainSrcBytes = 2u << 20;
// Fast mode runs a sequence of LOAD_W / MATMUL pairs over the same accumulators whose tiles do
// not concatenate (fewer than kMinChainTileK k, or bf16 tiles not whole blocks of 32 k: a
// convolution's taps over one channel) block of rows by block of rows
// (executor_sequence.cpp): at most kMaxSequenceLinks tiles of at most kMaxSequenceTileK k,
// over at least kSequenceMinAccBytes of accumulators (fewer stay in the cache anyway).
inline constexpr uint32_t kMaxSequenceLinks = 16;
inline constexpr uint32_t kMaxSequenceTileK = 32;
inline constexpr uint64_t kSequenceMinAccBytes = 256u << 10;
// A row_group MATMUL whose groups have fewer rows than this is run on its rows gathered into
// kChainSrcBytes (executor_mxu.cpp), not one group at a time.
inline constexpr uint32_t kGatherGroupRows = 64;

// nullptr if cfg is usable, else the reason it is not.
const char *config_error(const tpu_engine_config &cfg);

// Test only (tpu_engine_test_hold()): the hold of a job at an instruction boundary, armed and
// let go from any thread, ended by the abort request too. Its lock is a leaf: nothing else is
// taken under it, and the held job waits on the condition variable with nothing else held.
class TestHold {
  public:
    explicit TestHold(const std::atomic<bool> &abort) : abort_(abort) {}

    void arm(bool on, uint32_t pc);
    void release();
    // Called by the job at its start, on the thread that runs it.
    void start_job() { job_++; }
    // Called by the job before instruction pc: holds there if armed for pc or an earlier one,
    // unless the job was held already.
    void at(uint32_t pc) {
        if (armed_.load(std::memory_order_relaxed))
            hold_at(pc);
    }
    bool held(uint32_t *pc);
    // The abort request was set: a held job goes on to end.
    void abort();

  private:
    void hold_at(uint32_t pc);

    const std::atomic<bool> &abort_;
    std::atomic<bool> armed_{false};
    std::mutex lock_;
    std::condition_variable released_;
    uint32_t pc_ = 0;       // armed for this instruction (lock_)
    bool held_ = false;     // a job waits (lock_)
    uint32_t held_pc_ = 0;  // before this instruction (lock_)
    uint64_t releases_ = 0; // release() calls, each lets a held job go (lock_)
    // Jobs started, and the one last held (the thread running jobs only).
    uint64_t job_ = 0;
    uint64_t held_job_ = 0;
};

class Device {
  public:
    // cfg must pass config_error(). Throws std::bad_alloc or std::system_error when memory or
    // threads cannot be had.
    Device(const tpu_engine_config &cfg, tpu_phys_rw_fn rw, void *opaque);

    // Empties the unified buffer and accumulators and unloads the weights.
    void clear_state();

    const DecoderLimits limits;
    PhysMemory phys;
    Mmu mmu;
    HostDma dma;
    LocalMemory ub;
    LocalMemory acc;
    WeightTile weights;
    // The source rows of the latest LOAD_W from host memory, or in fast mode from the UB:
    // dense, as the tile's source lays them out (the staged tile, executor.hpp).
    std::vector<uint8_t> weight_rows;
    // Fast mode only (empty otherwise): the concatenated tiles of a fused K chain, and its
    // gathered activations.
    WeightTile chain_weights;
    std::vector<uint8_t> chain_src;
    // Fast mode only, made on first use and kept: the copies of deferred MATMULs
    // (executor/deferred_matmuls.hpp).
    std::unique_ptr<LocalMemory> deferred_activations, deferred_rows, deferred_weights;
    // Fast mode only, made on first use and kept: the tiles of a sequence of MATMULs.
    std::vector<std::unique_ptr<WeightTile>> sequence_weights;
    ThreadPool pool;
    FastMxu mxu;
    const uint32_t clock_mhz;
    const uint32_t dma_mbps; // the configured value, or the default
    // TPU_ENGINE_CYCLE_ACCURATE: MATMUL runs on array, the cycle-by-cycle model.
    const bool cycle_accurate;
    std::unique_ptr<SystolicArray> array;
    std::atomic<bool> abort_requested{false};
    // Instructions (or fused groups of them) that jobs have started since creation: how a test
    // knows that a job is under way before it aborts it (tpu_engine_progress()).
    std::atomic<uint64_t> progress{0};
    // Spec 2.0: the card's place on an inter-chip fabric, its ports and their counters.
    LinkEndpoint links;
    // A RECV's staging of host memory it reduces into (made on first use and kept).
    std::vector<uint8_t> link_staging;
    TestHold hold{abort_requested};
};

} // namespace tpu::engine
