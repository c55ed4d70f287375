/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * TPU card - state shared by the register front end (tpu.c) and the command
 * queue worker (tpu-queue.c).
 *
 * Locking: TPUState.lock guards every register, queue and job field below it.
 * MMIO handlers and the bottom halves run under the BQL and take the lock
 * (order: BQL, then lock). No DMA happens under the lock, and nothing that
 * holds the BQL waits on the engine, whose host accesses may need the BQL
 * (an IOMMU's translation may take it):
 *   - the queue bottom half (tpu-queue.c), in the main loop, fetches ring
 *     entries and retires jobs (completion records, HEAD, DONE_SEQ,
 *     interrupts): a global reset, also under the BQL, never races with them;
 *   - the worker thread only runs the engine on the job the bottom half handed
 *     it (job_state) and hands the result back;
 *   - the TLB thread carries out the posted TLB_INVAL writes, waiting for the
 *     translations in use, and counts them in TLB_INVAL_DONE.
 * A global reset under the BQL waits for the worker at most
 * TPU_RESET_WAIT_MS (tpu.c).
 *
 * Links (spec 2.0, tpu-ici.c): a job's SEND or RECV may wait for another
 * card, inside the engine on the worker thread with no lock of ours held
 * (the engine's link locks are leaves below TPUState.lock), so the BQL
 * holder, MMIO handlers and the other card's worker never wait for it; an
 * abort (tpu_engine_abort(), under the lock) ends the wait at once. A port
 * linked to another process (tpu-ici-link.c) moves its bytes in the main
 * loop under the BQL, never blocking and taking only engine locks; the
 * worker's SENDs and RECVs only schedule its bottom half.
 *
 * A job held by the test-only TEST_HOLD register (x-test-hold) waits inside
 * the engine, on the worker thread, holding neither the BQL, the lock nor any
 * engine lock that TLB invalidations wait for; a reset's tpu_engine_abort()
 * ends the wait as it ends a long instruction.
 *
 * With x-sync-worker (tpu.c) neither thread exists: the queue bottom half
 * runs each job itself and TLB_INVAL is carried out as it is written.
 */

#ifndef HW_MISC_TPU_DEV_H
#define HW_MISC_TPU_DEV_H

#include "hw/pci/pci_device.h"
#include "qemu/thread.h"
#include "qom/object.h"
#include "tpu_engine.h"
#include "tpu_hw.h"
#include "tpu-ici.h"
#include "tpu-ici-link.h"

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
    TPU_CNT_LINK_CYCLES,    /* spec 2.0 */
    TPU_CNT_LINK_TX,
    TPU_CNT_LINK_RX,
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
    bool compl_link;            /* COMPL_SIZE 128: records carry link stats */
    /* Bumped when the ring is reprogrammed: old jobs keep off HEAD. */
    uint64_t epoch;
    /* Bumped by QCTRL_RESET: the running job is dropped without a trace. */
    uint64_t resets;
    /* A QCTRL_RESET failed (x-queue-reset-fails): only a global reset helps. */
    bool reset_failed;
} TPUQueue;

/* Where the one job in flight is (TPUState.job). */
typedef enum TPUJobState {
    TPU_JOB_NONE,       /* none: the queue bottom half may fetch one */
    TPU_JOB_QUEUED,     /* fetched, for the worker to run */
    TPU_JOB_RUNNING,    /* the worker runs it on the engine, no lock held */
    TPU_JOB_FINISHED,   /* ran, for the queue bottom half to retire */
} TPUJobState;

/* A job, from the fetch of its ring entry until it retires. */
typedef struct TPUJob {
    unsigned qid;
    uint32_t slot;
    uint32_t ring_size;
    uint64_t epoch;
    uint64_t resets;
    uint64_t ring_base;
    uint64_t compl_base;
    bool compl_link;
    uint64_t ctx_table;
    uint64_t generation;
    uint64_t seqno;
    struct tpu_ring_entry entry;
    struct tpu_job_result result;
    const char *queue_fault;    /* ring or completion memory was unusable */
} TPUJob;

/* TLB_INVAL writes the TLB thread has not carried out yet, kept apart. */
#define TPU_TLB_PENDING_MAX 16

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
    uint32_t spec_version;      /* x-spec-version: VERSION, and CAPS by it */
    uint64_t generation_step;   /* x-ring-generation-step: epoch/resets step */
    TPUIciState *ici;           /* ici: the fabric the card joined, or NULL */
    char *ici_coord;            /* ici-coord: its coordinate there */
    bool ici_attached;
    /* ici-port<p>: ports linked to cards in other processes (chardevs) */
    TPUIciLink ici_links[TPU_ICI_LINK_PORTS];
    bool test_hold;             /* x-test-hold: TEST_HOLD and TEST_HELD exist */
    bool sync_worker;           /* x-sync-worker: no threads (fuzzing) */

    struct tpu_engine *engine;
    QemuThread worker;
    QemuThread tlb_thread;
    QEMUBH *irq_bh;
    QEMUBH *queue_bh;       /* fetches and retires jobs in the main loop */
    bool threads_started;

    QemuMutex lock;
    QemuCond work_cond;     /* the worker may have something to do */
    QemuCond idle_cond;     /* the worker finished a job */
    QemuCond tlb_cond;      /* a TLB_INVAL was written */
    bool stopping;          /* the threads are to end (unrealize) */
    bool stopped;           /* unrealized: registers read 0, writes ignored */
    TPUJobState job_state;
    TPUJob job;             /* valid unless job_state is TPU_JOB_NONE */
    bool engine_dirty;      /* tpu_engine_reset() due after the worker's job */
    bool running_dropped;   /* a reset dropped it: RUN_QUEUE shows none */
    uint64_t generation;    /* bumped by a global reset: orphans the job */
    uint32_t tlb_pending[TPU_TLB_PENDING_MAX]; /* contexts to invalidate */
    unsigned tlb_pending_ctx;   /* entries of tlb_pending in use */
    bool tlb_pending_all;       /* more than fit: invalidate everything */
    uint32_t tlb_pending_writes;    /* TLB_INVAL writes not yet counted */
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
    uint32_t test_hold_reg;     /* TEST_HOLD as last written, kept by resets */
    TPUQueue queues[TPU_MAX_QUEUES];
};

/* tpu.c: called with the lock held; delivery happens in tpu_deliver_irqs(). */
void tpu_raise_irq(TPUState *s, uint32_t bits);

/* tpu-queue.c */
void tpu_worker_start(TPUState *s);
void tpu_worker_stop(TPUState *s);
void tpu_queue_bh(void *opaque);
void tpu_tlb_invalidate_post(TPUState *s, uint32_t ctx_id);
int tpu_dma_rw(void *opaque, uint64_t addr, void *buf, uint64_t len,
               bool is_write);
void *tpu_dma_map(void *opaque, uint64_t addr, uint64_t len, bool is_write);
void tpu_dma_unmap(void *opaque, void *ptr, uint64_t len, bool is_write);

#endif /* HW_MISC_TPU_DEV_H */
