// SPDX-License-Identifier: MIT
// The engine's C interface (tpu_engine.h): creation with configuration checks, context table,
// job runs and their progress, TLB invalidation, abort and reset, and the test-only hold. No
// exception crosses this boundary.
#include <cstdio>
#include <exception>
#include <new>

#include "device.hpp"
#include "executor/executor.hpp"
#include "tpu_engine.h"

struct tpu_engine {
    tpu::engine::Device dev;
};

namespace {

void set_error(char *err, size_t errlen, const char *what) {
    if (err && errlen > 0)
        std::snprintf(err, errlen, "tpu engine: %s", what);
}

} // namespace

extern "C" {

struct tpu_engine *tpu_engine_create(const struct tpu_engine_config *cfg, tpu_phys_rw_fn rw,
                                     void *opaque, char *err, size_t errlen) {
    if (!cfg || !rw) {
        set_error(err, errlen, "no configuration or memory callback");
        return nullptr;
    }
    if (const char *why = tpu::engine::config_error(*cfg)) {
        set_error(err, errlen, why);
        return nullptr;
    }
    try {
        return new tpu_engine{tpu::engine::Device(*cfg, rw, opaque)};
    } catch (const std::bad_alloc &) {
        set_error(err, errlen, "out of memory for the unified buffer, accumulators or weights");
    } catch (const std::exception &e) {
        set_error(err, errlen, e.what());
    }
    return nullptr;
}

void tpu_engine_destroy(struct tpu_engine *eng) {
    delete eng;
}

void tpu_engine_set_phys_map(struct tpu_engine *eng, tpu_phys_map_fn map, tpu_phys_unmap_fn unmap) {
    eng->dev.phys.set_map(map, unmap);
}

void tpu_engine_set_ctx_table(struct tpu_engine *eng, uint64_t addr, uint32_t entries) {
    eng->dev.mmu.set_ctx_table(addr, entries);
}

void tpu_engine_run(struct tpu_engine *eng, uint32_t ctx_id, uint64_t program_addr,
                    uint32_t program_size, struct tpu_job_result *result) {
    const uint64_t misses = eng->dev.mmu.misses();
    try {
        tpu::engine::Executor executor(eng->dev);
        *result = executor.run(ctx_id, program_addr, program_size);
    } catch (const std::exception &) {
        // Host memory (or a thread) could not be had for a buffer made on first use: the job
        // fails as if a reset had stopped it, its partial results unspecified.
        *result = tpu_job_result{};
        result->status = TPU_ERR_ABORTED;
    }
    result->tlb_misses = eng->dev.mmu.misses() - misses;
}

void tpu_engine_tlb_invalidate(struct tpu_engine *eng, uint32_t ctx_id) {
    eng->dev.mmu.invalidate(ctx_id);
}

void tpu_engine_tlb_drop(struct tpu_engine *eng, uint32_t ctx_id) {
    eng->dev.mmu.drop(ctx_id);
}

void tpu_engine_abort(struct tpu_engine *eng) {
    eng->dev.abort_requested.store(true);
    eng->dev.hold.abort();
}

void tpu_engine_test_hold(struct tpu_engine *eng, bool arm, uint32_t pc) {
    eng->dev.hold.arm(arm, pc);
}

void tpu_engine_test_release(struct tpu_engine *eng) {
    eng->dev.hold.release();
}

bool tpu_engine_test_held(struct tpu_engine *eng, uint32_t *pc) {
    return eng->dev.hold.held(pc);
}

uint64_t tpu_engine_progress(struct tpu_engine *eng) {
    return eng->dev.progress.load();
}

void tpu_engine_reset(struct tpu_engine *eng) {
    // The TLB is emptied while the abort request still keeps fills out.
    eng->dev.mmu.invalidate(TPU_TLB_INVAL_ALL);
    eng->dev.clear_state();
    eng->dev.abort_requested.store(false);
}

} // extern "C"
