// SPDX-License-Identifier: MIT
// The engine's C interface (tpu_engine.h): creation with configuration checks, context table,
// job runs and their progress, TLB invalidation, abort and reset, and the test-only hold. No
// exception crosses this boundary.
#include <cstdio>
#include <exception>
#include <memory>
#include <new>

#include "device.hpp"
#include "executor/executor.hpp"
#include "link/remote_link.hpp"
#include "tpu_engine.h"

struct tpu_engine {
    tpu::engine::Device dev;
};

struct tpu_fabric {
    std::shared_ptr<tpu::engine::Fabric> fabric;
};

struct tpu_remote_link {
    tpu::engine::RemoteLink link;
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
    eng->dev.links.wake(); // a SEND or RECV waiting on a link sees the request
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
    eng->dev.links.flush();
    eng->dev.abort_requested.store(false);
}

struct tpu_fabric *tpu_fabric_create(const struct tpu_fabric_config *cfg, char *err,
                                     size_t errlen) {
    if (!cfg) {
        set_error(err, errlen, "no fabric configuration");
        return nullptr;
    }
    if (const char *why = tpu::engine::Fabric::config_error(*cfg)) {
        set_error(err, errlen, why);
        return nullptr;
    }
    try {
        return new tpu_fabric{std::make_shared<tpu::engine::Fabric>(*cfg)};
    } catch (const std::bad_alloc &) {
        set_error(err, errlen, "out of memory for the fabric");
    }
    return nullptr;
}

void tpu_fabric_destroy(struct tpu_fabric *fabric) {
    delete fabric;
}

int tpu_engine_attach(struct tpu_engine *eng, struct tpu_fabric *fabric, uint32_t x, uint32_t y,
                      char *err, size_t errlen) {
    if (!fabric) {
        set_error(err, errlen, "no fabric");
        return -1;
    }
    try {
        if (const char *why = eng->dev.links.attach(fabric->fabric, x, y)) {
            set_error(err, errlen, why);
            return -1;
        }
    } catch (const std::bad_alloc &) {
        set_error(err, errlen, "out of memory for the link buffers");
        return -1;
    }
    return 0;
}

void tpu_engine_detach(struct tpu_engine *eng) {
    eng->dev.links.detach();
}

void tpu_engine_link_info(struct tpu_engine *eng, struct tpu_link_info *out) {
    eng->dev.links.info(out);
}

bool tpu_engine_port_info(struct tpu_engine *eng, uint32_t port, struct tpu_link_port_info *out) {
    return eng->dev.links.port_info(port, out);
}

void tpu_engine_link_clear(struct tpu_engine *eng) {
    eng->dev.links.clear_counters();
}

int tpu_fabric_set_link(struct tpu_fabric *fabric, uint32_t x, uint32_t y, uint32_t port, bool up,
                        char *err, size_t errlen) {
    if (const char *why = fabric->fabric->set_link(x, y, port, up)) {
        set_error(err, errlen, why);
        return -1;
    }
    return 0;
}

struct tpu_remote_link *tpu_remote_link_create(struct tpu_engine *eng, uint32_t port,
                                               void (*notify)(void *opaque), void *opaque,
                                               char *err, size_t errlen) {
    try {
        return new tpu_remote_link{{eng->dev.links, port, notify, opaque}};
    } catch (const std::bad_alloc &) {
        set_error(err, errlen, "out of memory for the link's receive buffer");
    } catch (const std::exception &e) {
        set_error(err, errlen, e.what());
    }
    return nullptr;
}

void tpu_remote_link_destroy(struct tpu_remote_link *link) {
    delete link;
}

void tpu_remote_link_open(struct tpu_remote_link *link) {
    link->link.open();
}

void tpu_remote_link_close(struct tpu_remote_link *link) {
    link->link.close();
}

const char *tpu_remote_link_input(struct tpu_remote_link *link, const void *data, size_t len) {
    try {
        return link->link.input(static_cast<const uint8_t *>(data), len);
    } catch (const std::bad_alloc &) {
        link->link.set_admin(false);
        link->link.set_admin(true);
        return "out of memory for the arriving messages";
    }
}

size_t tpu_remote_link_output(struct tpu_remote_link *link, const void **data) {
    const uint8_t *bytes = nullptr;
    size_t n = 0;
    try {
        n = link->link.output(&bytes);
    } catch (const std::bad_alloc &) {
        link->link.set_admin(false); // closes the connection; the next one starts afresh
        link->link.set_admin(true);
    }
    *data = bytes;
    return n;
}

void tpu_remote_link_written(struct tpu_remote_link *link, size_t n) {
    link->link.written(n);
}

bool tpu_remote_link_close_due(struct tpu_remote_link *link) {
    return link->link.close_due();
}

} // extern "C"
