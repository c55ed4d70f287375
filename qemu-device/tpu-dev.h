/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * TPU card - state shared by the register front end (tpu.c) and the command
 * queue worker (tpu-queue.c).
 *
 * Locking: TPUState.lock guards every register, queue and worker field below
 * it. MMIO handlers run under the BQL and take the lock (order: BQL, then
 * lock). The worker never takes the BQL: it runs the engine with no lock held,
 * fetches ring entries and writes completion records (RAM only) with the lock
 * held so that a reset never races with them (and RUN_SEQNO names a job as
 * soon as it runs), and hands interrupts to a bottom half that delivers them
 * in the main loop.
 */

#ifndef HW_MISC_TPU_DEV_H
#define HW_MISC_TPU_DEV_H

#include "hw/pci/pci_device.h"
#include "qemu/thread.h"
#include "qom/object.h"
#include "tpu_engine.h"
#include "tpu_hw.h"

#define TYPE_TPU "tpu"
OBJECT_DECLARE_SIMPLE_TYPE(TPUState, TPU)

#define TPU_MAX_QUEUES 8

/* Performance counters, in register order from TPU_REG_CNT_CYCLES. */
enum {
    TPU_CNT_CYCLES,
    TPU_CNT_MXU_BUSY,
    TPU_CNT_MACS,
    TPU_CNT_DMA_RD,
    TPU_CNT_DMA_WR,
    TPU_CNT_JOBS_DONE,
    TPU_CNT_JOBS_FAILED,
    TPU_CNT_MMU_FAULTS,
    TPU_CNT_MACS_INT8,
    TPU_CNT_MACS_BF16,
    TPU_CNT_MACS_FP32,
    TPU_CNT_STALL,
    TPU_CNT_TLB_MISSES,
    TPU_CNT_COUNT
};

typedef struct TPUQueue {
    uint64_t ring_base;
    uint64_t compl_base;
    uint32_t ring_size;
    uint32_t head;
    uint32_t tail;
    uint32_t control;
    uint32_t status;
    uint64_t done_seq;
    uint32_t priority;
    /* Bumped when the ring is reprogrammed: old jobs keep off HEAD. */
    uint32_t epoch;
    /* Bumped by QCTRL_RESET: the running job is dropped without a trace. */
    uint32_t resets;
    /* A QCTRL_RESET failed (x-queue-reset-fails): only a global reset helps. */
    bool reset_failed;
} TPUQueue;

struct TPUState {
    PCIDevice parent_obj;
    MemoryRegion mmio;
    MemoryRegion msix_bar;

    /* Properties. */
    uint32_t mxu_rows;
    uint32_t mxu_cols;
    uint32_t ub_size;
    uint32_t acc_size;
    uint32_t clock_mhz;
    uint32_t num_queues;
    uint32_t num_ctx;
    uint32_t threads;
    char *engine_mode;
    uint32_t dma_mbps;
    uint32_t tlb_entries;
    bool queue_reset_fails;     /* x-queue-reset-fails: QCTRL_RESET fails */

    struct tpu_engine *engine;
    QemuThread worker;
    QEMUBH *irq_bh;

    QemuMutex lock;
    QemuCond work_cond;     /* the worker may have something to do */
    QemuCond idle_cond;     /* the worker finished or dropped a job */
    bool stopping;
    bool job_running;       /* the worker owns a job outside the lock */
    bool engine_dirty;      /* tpu_engine_reset() due before the next job */
    int running_queue;      /* queue of the running job, -1 if none */
    uint64_t running_seqno; /* its seqno (RUN_SEQNO), 0 if none */
    bool running_dropped;   /* a reset dropped it: RUN_QUEUE shows none */
    uint64_t generation;    /* bumped by a global reset: orphans the job */
    unsigned next_queue;    /* round-robin start */
    uint32_t pending_irqs;  /* TPU_IRQ_* raised, not yet delivered */

    uint32_t control;
    uint32_t status;
    uint32_t irq_status;
    uint32_t irq_mask;
    uint64_t ctx_table;
    uint32_t err_code;
    uint32_t err_queue;
    uint64_t err_addr;
    uint64_t counters[TPU_CNT_COUNT];
    uint32_t tlb_inval_done;    /* TLB_INVAL writes completed, kept by resets */
    TPUQueue queues[TPU_MAX_QUEUES];
};

/* tpu.c: called with the lock held; delivery happens in tpu_deliver_irqs(). */
void tpu_raise_irq(TPUState *s, uint32_t bits);

/* tpu-queue.c */
void tpu_worker_start(TPUState *s);
void tpu_worker_stop(TPUState *s);
int tpu_dma_rw(void *opaque, uint64_t addr, void *buf, uint64_t len,
               bool is_write);
void *tpu_dma_map(void *opaque, uint64_t addr, uint64_t len, bool is_write);
void tpu_dma_unmap(void *opaque, void *ptr, uint64_t len, bool is_write);

#endif /* HW_MISC_TPU_DEV_H */
