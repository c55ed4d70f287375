/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * TPU card - command queues. The queue bottom half, in the main loop under
 * the BQL, picks the next job from the active queues (highest QREG_PRIORITY
 * first, round robin within a priority), fetches its ring entry and hands it
 * to the worker thread, which runs it on the engine with no lock held; the
 * bottom half then writes its completion record and retires it (HEAD,
 * DONE_SEQ, counters, ERR_*, interrupts). The TLB thread carries out posted
 * TLB_INVAL writes. With x-sync-worker (for fuzzing) there are no threads:
 * the bottom half runs the job and TLB_INVAL takes effect as it is written.
 * DMA goes through the PCI device's address space and reaches RAM only, and
 * never happens under TPUState.lock (tpu-dev.h).
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/lockable.h"
#include "qemu/log.h"
#include "qemu/rcu.h"
#include "exec/cpu-common.h"
#include "exec/memory.h"
#include "tpu-dev.h"

/*
 * The card reaches RAM only: an access to anything else (MMIO, unassigned
 * space, ROM for writes) fails. Each piece is checked and accessed through
 * one translation: address_space_map() with MemTxAttrs.memory refuses to
 * read anything but RAM into a bounce buffer, and a bounce buffer (what it
 * returns for memory it cannot map directly) is refused here before anything
 * is written through it. This keeps the engine's threads out of device
 * callbacks, and so away from the BQL and from the card's own registers.
 */
static const MemTxAttrs tpu_dma_attrs = { .memory = 1 };

static void *tpu_map_ram(AddressSpace *as, uint64_t addr, hwaddr *plen,
                         bool is_write)
{
    ram_addr_t offset;
    void *ptr = address_space_map(as, addr, plen, is_write, tpu_dma_attrs);

    if (ptr && !qemu_ram_block_from_host(ptr, false, &offset)) {
        address_space_unmap(as, ptr, *plen, is_write, 0);
        ptr = NULL;
    }
    return ptr;
}

/*
 * Whether this thread is already registered with RCU (the worker and the
 * main loop's thread are).
 */
static __thread bool tpu_thread_has_rcu;

static bool tpu_rcu_enter(void)
{
    if (tpu_thread_has_rcu) {
        return false;
    }
    rcu_register_thread();
    return true;
}

static void tpu_rcu_leave(bool temporary)
{
    if (temporary) {
        rcu_unregister_thread();
    }
}

/*
 * The engine's physical memory callback (tpu_phys_rw_fn), also used for ring
 * entries and completion records. The engine may call it from its own
 * threads, which QEMU's RCU does not know: register them for the access.
 */
int tpu_dma_rw(void *opaque, uint64_t addr, void *buf, uint64_t len,
               bool is_write)
{
    TPUState *s = opaque;
    AddressSpace *as = pci_get_address_space(&s->parent_obj);
    bool temporary_rcu = tpu_rcu_enter();
    uint8_t *p = buf;
    int ret = 0;

    if (addr + len < addr) {
        ret = -1;
    }
    while (!ret && len) {
        hwaddr plen = len;
        void *ptr = tpu_map_ram(as, addr, &plen, is_write);

        if (!ptr || !plen) {
            ret = -1;
            break;
        }
        if (is_write) {
            memcpy(ptr, p, plen);
        } else {
            memcpy(p, ptr, plen);
        }
        address_space_unmap(as, ptr, plen, is_write, plen);
        addr += plen;
        p += plen;
        len -= plen;
    }
    tpu_rcu_leave(temporary_rcu);
    return ret;
}

/*
 * The engine's map callback (tpu_phys_map_fn): RAM only, like tpu_dma_rw(),
 * a direct pointer into guest RAM whose region stays referenced until
 * tpu_dma_unmap(). NULL sends the engine to tpu_dma_rw().
 */
void *tpu_dma_map(void *opaque, uint64_t addr, uint64_t len, bool is_write)
{
    TPUState *s = opaque;
    AddressSpace *as = pci_get_address_space(&s->parent_obj);
    bool temporary_rcu = tpu_rcu_enter();
    hwaddr plen = len;
    void *ptr = tpu_map_ram(as, addr, &plen, is_write);

    if (ptr && plen < len) {
        address_space_unmap(as, ptr, plen, is_write, 0);
        ptr = NULL;
    }
    tpu_rcu_leave(temporary_rcu);
    return ptr;
}

/*
 * The engine's unmap callback: the whole mapping counts as accessed, so that
 * written pages are marked dirty (and translated guest code on them
 * invalidated).
 */
void tpu_dma_unmap(void *opaque, void *ptr, uint64_t len, bool is_write)
{
    TPUState *s = opaque;
    bool temporary_rcu = tpu_rcu_enter();

    address_space_unmap(pci_get_address_space(&s->parent_obj), ptr, len,
                        is_write, is_write ? len : 0);
    tpu_rcu_leave(temporary_rcu);
}

static bool tpu_queue_has_work(const TPUQueue *q)
{
    return (q->status & TPU_QSTAT_ACTIVE) && q->head != q->tail;
}

/*
 * Picks the next job: the highest priority among the queues with work, round
 * robin among the queues of that priority; lock held.
 */
static bool tpu_next_job(TPUState *s, TPUJob *job)
{
    int best = -1;
    unsigned i, qid;
    TPUQueue *q;

    if (!(s->control & TPU_CONTROL_ENABLE) ||
        !(s->status & TPU_STATUS_READY)) {
        return false;
    }
    for (qid = 0; qid < s->num_queues; qid++) {
        q = &s->queues[qid];
        if (tpu_queue_has_work(q) && (int)q->priority > best) {
            best = q->priority;
        }
    }
    if (best < 0) {
        return false;
    }
    for (i = 0;; i++) {
        qid = (s->next_queue + i) % s->num_queues;
        q = &s->queues[qid];
        if (tpu_queue_has_work(q) && q->priority == best) {
            break;
        }
    }
    *job = (TPUJob) {
        .qid = qid,
        .slot = q->head,
        .ring_size = q->ring_size,
        .epoch = q->epoch,
        .resets = q->resets,
        .ring_base = q->ring_base,
        .compl_base = q->compl_base,
        .compl_link = q->compl_link,
        .ctx_table = s->ctx_table,
        .generation = s->generation,
    };
    s->next_queue = (qid + 1) % s->num_queues;
    return true;
}

static bool tpu_ring_entry_valid(const struct tpu_ring_entry *e)
{
    unsigned i;

    if (le32_to_cpu(e->opcode) != TPU_RING_OP_RUN || e->flags) {
        return false;
    }
    for (i = 0; i < ARRAY_SIZE(e->reserved); i++) {
        if (e->reserved[i]) {
            return false;
        }
    }
    return true;
}

/* Queue bottom half, no lock held. */
static void tpu_write_completion(TPUState *s, TPUJob *job)
{
    const struct tpu_job_result *r = &job->result;
    struct {
        struct tpu_completion c;
        struct tpu_completion_link link;
    } rec = {
        .c = {
            .seqno = cpu_to_le64(job->seqno),
            .status = cpu_to_le32(r->status),
            .error_pc = cpu_to_le32(r->error_pc),
            .fault_addr = cpu_to_le64(r->fault_addr),
            .cycles = cpu_to_le64(r->cycles),
            .mxu_busy_cycles = cpu_to_le64(r->mxu_busy_cycles),
            .macs = cpu_to_le64(r->macs),
            .flags = cpu_to_le32(TPU_COMPL_VALID),
            .stall_cycles = cpu_to_le64(r->stall_cycles),
        },
        .link = {
            .link_cycles = cpu_to_le64(r->link_cycles),
            .link_tx_bytes = cpu_to_le64(r->link_tx_bytes),
            .link_rx_bytes = cpu_to_le64(r->link_rx_bytes),
        },
    };
    uint64_t size = job->compl_link ? TPU_COMPL_SIZE_LINK : TPU_COMPL_SIZE;
    uint64_t addr = job->compl_base + (uint64_t)job->slot * size;

    QEMU_BUILD_BUG_ON(sizeof(rec) != TPU_COMPL_SIZE_LINK);
    if (tpu_dma_rw(s, addr, &rec, size, true)) {
        job->queue_fault = "cannot write the completion record";
    }
}

/* Fetches the job's ring entry; queue bottom half, no lock held. */
static void tpu_fetch_job(TPUState *s, TPUJob *job)
{
    uint64_t addr = job->ring_base + (uint64_t)job->slot * sizeof(job->entry);

    if (tpu_dma_rw(s, addr, &job->entry, sizeof(job->entry), false)) {
        job->queue_fault = "cannot read the ring entry";
        return;
    }
    job->seqno = le64_to_cpu(job->entry.seqno);
}

/* Validates and runs the fetched ring entry; worker, no lock held. */
static void tpu_run_job(TPUState *s, TPUJob *job)
{
    const struct tpu_ring_entry e = job->entry;
    uint32_t ctx_id;

    ctx_id = le32_to_cpu(e.ctx_id);
    if (!tpu_ring_entry_valid(&e)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "tpu: queue %u slot %u: bad ring entry (opcode %u, "
                      "flags 0x%x or reserved fields non-zero)\n",
                      job->qid, job->slot, le32_to_cpu(e.opcode),
                      le32_to_cpu(e.flags));
        job->result.status = TPU_ERR_RING_ENTRY;
    } else if (ctx_id >= s->num_ctx) {
        job->result.status = TPU_ERR_BAD_CTX;
    } else {
        tpu_engine_set_ctx_table(s->engine, job->ctx_table, s->num_ctx);
        tpu_engine_run(s->engine, ctx_id, le64_to_cpu(e.program_addr),
                       le32_to_cpu(e.program_size), &job->result);
    }
}

static void tpu_count_job(TPUState *s, const struct tpu_job_result *r)
{
    s->counters[TPU_CNT_CYCLES] += r->cycles;
    s->counters[TPU_CNT_MXU_BUSY] += r->mxu_busy_cycles;
    s->counters[TPU_CNT_MACS] += r->macs;
    s->counters[TPU_CNT_DMA_RD] += r->dma_read_bytes;
    s->counters[TPU_CNT_DMA_WR] += r->dma_write_bytes;
    s->counters[TPU_CNT_MMU_FAULTS] += r->mmu_faults;
    s->counters[TPU_CNT_MACS_INT8] += r->macs_int8;
    s->counters[TPU_CNT_MACS_BF16] += r->macs_bf16;
    s->counters[TPU_CNT_MACS_FP32] += r->macs_fp32;
    s->counters[TPU_CNT_STALL] += r->stall_cycles;
    s->counters[TPU_CNT_TLB_MISSES] += r->tlb_misses;
    s->counters[TPU_CNT_LINK_CYCLES] += r->link_cycles;
    s->counters[TPU_CNT_LINK_TX] += r->link_tx_bytes;
    s->counters[TPU_CNT_LINK_RX] += r->link_rx_bytes;
}

/*
 * Retires a job of the current generation: completion record, HEAD,
 * DONE_SEQ, counters, ERR_*, interrupt; queue bottom half, no lock held. The
 * BQL keeps the registers as they are between the completion write and the
 * updates. A job whose queue was reset (QCTRL_RESET) while it ran leaves no
 * trace but its work counters.
 */
static void tpu_retire_job(TPUState *s, TPUJob *job)
{
    TPUQueue *q = &s->queues[job->qid];
    const struct tpu_job_result *r = &job->result;
    bool dropped = q->resets != job->resets;

    if (!dropped && !job->queue_fault) {
        tpu_write_completion(s, job);   /* sets queue_fault on failure */
    }

    QEMU_LOCK_GUARD(&s->lock);
    tpu_count_job(s, r);
    if (dropped) {
        return;
    }
    if (job->queue_fault) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "tpu: queue %u slot %u: %s; queue stopped\n",
                      job->qid, job->slot, job->queue_fault);
        if (q->epoch == job->epoch) {
            q->status = TPU_QSTAT_ERROR;
        }
        tpu_raise_irq(s, TPU_IRQ_ERROR);
        return;
    }

    /* The same epoch means the same ring: the slot is below its size. */
    if (q->epoch == job->epoch && job->slot < q->ring_size) {
        q->head = (job->slot + 1) & (q->ring_size - 1);
    }
    q->done_seq = job->seqno;
    if (r->status == TPU_ERR_NONE) {
        s->counters[TPU_CNT_JOBS_DONE]++;
        tpu_raise_irq(s, TPU_IRQ_DONE);
    } else {
        s->counters[TPU_CNT_JOBS_FAILED]++;
        s->err_code = r->status;
        s->err_queue = job->qid;
        s->err_addr = r->fault_addr;
        tpu_raise_irq(s, TPU_IRQ_ERROR);
    }
}

/*
 * Runs the queued job on the engine and hands it back to the queue bottom
 * half: on the worker thread, or with x-sync-worker in the bottom half
 * itself. Lock held, dropped while the engine runs.
 */
static void tpu_worker_run(TPUState *s)
{
    TPUJob job;

    s->job_state = TPU_JOB_RUNNING;
    job = s->job;
    qemu_mutex_unlock(&s->lock);

    tpu_run_job(s, &job);

    qemu_mutex_lock(&s->lock);
    while (s->engine_dirty) {
        /* A reset aborted the job: it is over, reset the engine. */
        s->engine_dirty = false;
        qemu_mutex_unlock(&s->lock);
        tpu_engine_reset(s->engine);
        qemu_mutex_lock(&s->lock);
        s->status |= TPU_STATUS_READY;
    }
    s->job.result = job.result;
    s->job_state = TPU_JOB_FINISHED;
    s->status &= ~TPU_STATUS_BUSY;
    qemu_cond_broadcast(&s->idle_cond);
    qemu_bh_schedule(s->queue_bh);
}

/*
 * The queue bottom half (BQL held): retires the job the worker finished and
 * hands it the next one. Only the worker touches the job meanwhile, and only
 * its result and job_state, under the lock; everything else changes under
 * the BQL, so the lock is dropped for the DMA.
 */
void tpu_queue_bh(void *opaque)
{
    TPUState *s = opaque;
    TPUJob job;
    bool retire;

    tpu_thread_has_rcu = true;  /* QEMU registered the main loop's thread */
    qemu_mutex_lock(&s->lock);
    if (s->job_state == TPU_JOB_FINISHED) {
        job = s->job;
        retire = job.generation == s->generation;
        s->job_state = TPU_JOB_NONE;
        s->running_dropped = false;
        qemu_mutex_unlock(&s->lock);
        if (retire) {
            tpu_retire_job(s, &job);
        }
        qemu_mutex_lock(&s->lock);
    }
    while (!s->stopped && s->job_state == TPU_JOB_NONE && !s->engine_dirty &&
           tpu_next_job(s, &job)) {
        qemu_mutex_unlock(&s->lock);
        tpu_fetch_job(s, &job);
        if (job.queue_fault) {
            tpu_retire_job(s, &job);
            qemu_mutex_lock(&s->lock);
            continue;
        }
        qemu_mutex_lock(&s->lock);
        s->job = job;
        s->job_state = TPU_JOB_QUEUED;
        s->running_dropped = false;
        s->status |= TPU_STATUS_BUSY;
        if (s->sync_worker) {
            tpu_worker_run(s);
        } else {
            qemu_cond_signal(&s->work_cond);
        }
    }
    qemu_mutex_unlock(&s->lock);
}

static void *tpu_worker_thread(void *opaque)
{
    TPUState *s = opaque;

    rcu_register_thread();
    tpu_thread_has_rcu = true;

    qemu_mutex_lock(&s->lock);
    while (!s->stopping) {
        if (s->job_state != TPU_JOB_QUEUED) {
            qemu_cond_wait(&s->work_cond, &s->lock);
            continue;
        }
        tpu_worker_run(s);
    }
    qemu_mutex_unlock(&s->lock);

    rcu_unregister_thread();
    return NULL;
}

/*
 * TLB_INVAL, posted (docs/hardware.md section 5): the entries are dropped at
 * once, so that the next translation walks the page tables again; this
 * thread waits for the translations in use and then counts the write in
 * TLB_INVAL_DONE. Lock held.
 */
void tpu_tlb_invalidate_post(TPUState *s, uint32_t ctx_id)
{
    unsigned i;

    if (s->sync_worker) {
        /* No job runs outside the main loop: no translation is in use. */
        tpu_engine_tlb_invalidate(s->engine, ctx_id);
        s->tlb_inval_done++;
        return;
    }
    tpu_engine_tlb_drop(s->engine, ctx_id);
    for (i = 0; i < s->tlb_pending_ctx && s->tlb_pending[i] != ctx_id; i++) {
        continue;
    }
    if (i == s->tlb_pending_ctx) {
        if (i < TPU_TLB_PENDING_MAX) {
            s->tlb_pending[s->tlb_pending_ctx++] = ctx_id;
        } else {
            s->tlb_pending_all = true;
        }
    }
    s->tlb_pending_writes++;
    qemu_cond_signal(&s->tlb_cond);
}

static void *tpu_tlb_thread(void *opaque)
{
    TPUState *s = opaque;
    uint32_t ctx[TPU_TLB_PENDING_MAX];
    unsigned i, n;
    uint32_t writes;
    bool all;

    qemu_mutex_lock(&s->lock);
    while (!s->stopping) {
        if (!s->tlb_pending_writes) {
            qemu_cond_wait(&s->tlb_cond, &s->lock);
            continue;
        }
        n = s->tlb_pending_ctx;
        memcpy(ctx, s->tlb_pending, n * sizeof(ctx[0]));
        all = s->tlb_pending_all;
        writes = s->tlb_pending_writes;
        s->tlb_pending_ctx = 0;
        s->tlb_pending_all = false;
        s->tlb_pending_writes = 0;
        qemu_mutex_unlock(&s->lock);

        if (all) {
            tpu_engine_tlb_invalidate(s->engine, TPU_TLB_INVAL_ALL);
        } else {
            for (i = 0; i < n; i++) {
                tpu_engine_tlb_invalidate(s->engine, ctx[i]);
            }
        }

        qemu_mutex_lock(&s->lock);
        s->tlb_inval_done += writes;
    }
    qemu_mutex_unlock(&s->lock);
    return NULL;
}

/* Starts the worker and TLB threads; none with x-sync-worker. */
void tpu_worker_start(TPUState *s)
{
    if (s->sync_worker) {
        return;
    }
    qemu_thread_create(&s->worker, "tpu-worker", tpu_worker_thread, s,
                       QEMU_THREAD_JOINABLE);
    qemu_thread_create(&s->tlb_thread, "tpu-tlb", tpu_tlb_thread, s,
                       QEMU_THREAD_JOINABLE);
    s->threads_started = true;
}

/* Ends both threads; BQL held. Posted invalidations are dropped. */
void tpu_worker_stop(TPUState *s)
{
    if (!s->threads_started) {
        return;
    }
    qemu_mutex_lock(&s->lock);
    s->stopping = true;
    if (s->job_state == TPU_JOB_QUEUED || s->job_state == TPU_JOB_RUNNING) {
        tpu_engine_abort(s->engine);
    }
    qemu_cond_broadcast(&s->work_cond);
    qemu_cond_broadcast(&s->tlb_cond);
    qemu_mutex_unlock(&s->lock);
    qemu_thread_join(&s->worker);
    qemu_thread_join(&s->tlb_thread);
    s->threads_started = false;
}
