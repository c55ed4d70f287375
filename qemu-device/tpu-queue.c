/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * TPU card - command queue worker. One thread per card fetches ring entries
 * from the active queues (highest QREG_PRIORITY first, round robin within a
 * priority), runs each job on the engine, writes its completion record and
 * retires it (HEAD, DONE_SEQ, counters, ERR_*, interrupts). It runs outside
 * the BQL; DMA goes through the PCI device's address space and reaches RAM
 * only.
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qemu/rcu.h"
#include "exec/memory.h"
#include "tpu-dev.h"

/* A job as the worker holds it while the lock is dropped. */
typedef struct TPUJob {
    unsigned qid;
    uint32_t slot;
    uint32_t ring_size;
    uint32_t epoch;
    uint32_t resets;
    uint64_t ring_base;
    uint64_t compl_base;
    uint64_t ctx_table;
    uint64_t generation;
    uint64_t seqno;
    struct tpu_ring_entry entry;
    struct tpu_job_result result;
    const char *queue_fault;    /* ring or completion memory was unusable */
} TPUJob;

/* Whether this thread is already registered with RCU (the worker is). */
static __thread bool tpu_thread_has_rcu;

/*
 * The card reaches RAM only: any byte that maps to something else (MMIO,
 * unassigned space, ROM for writes) makes the whole access fail. This keeps
 * the worker out of device callbacks and so away from the BQL, which a
 * global reset holds while it waits for the worker.
 */
static bool tpu_dma_is_ram(AddressSpace *as, uint64_t addr, uint64_t len,
                           bool is_write)
{
    if (addr + len < addr) {
        return false;
    }
    RCU_READ_LOCK_GUARD();
    while (len) {
        hwaddr xlat, plen = len;
        MemoryRegion *mr = address_space_translate(as, addr, &xlat, &plen,
                                                   is_write,
                                                   MEMTXATTRS_UNSPECIFIED);

        if (!plen ||
            !memory_access_is_direct(mr, is_write, MEMTXATTRS_UNSPECIFIED)) {
            return false;
        }
        addr += plen;
        len -= plen;
    }
    return true;
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
    PCIDevice *pdev = &s->parent_obj;
    bool temporary_rcu = !tpu_thread_has_rcu;
    MemTxResult res = MEMTX_DECODE_ERROR;

    if (temporary_rcu) {
        rcu_register_thread();
    }
    if (tpu_dma_is_ram(pci_get_address_space(pdev), addr, len, is_write)) {
        res = is_write ? pci_dma_write(pdev, addr, buf, len)
                       : pci_dma_read(pdev, addr, buf, len);
    }
    if (temporary_rcu) {
        rcu_unregister_thread();
    }
    return res == MEMTX_OK ? 0 : -1;
}

/*
 * The engine's map callback (tpu_phys_map_fn): RAM only, like tpu_dma_rw(),
 * mapped with address_space_map(), which gives a direct pointer into guest
 * RAM and keeps its region referenced until tpu_dma_unmap(). NULL sends the
 * engine to tpu_dma_rw().
 */
void *tpu_dma_map(void *opaque, uint64_t addr, uint64_t len, bool is_write)
{
    TPUState *s = opaque;
    AddressSpace *as = pci_get_address_space(&s->parent_obj);
    bool temporary_rcu = !tpu_thread_has_rcu;
    hwaddr plen = len;
    void *ptr = NULL;

    if (temporary_rcu) {
        rcu_register_thread();
    }
    if (tpu_dma_is_ram(as, addr, len, is_write)) {
        ptr = address_space_map(as, addr, &plen, is_write,
                                MEMTXATTRS_UNSPECIFIED);
        if (ptr && plen < len) {
            address_space_unmap(as, ptr, plen, is_write, 0);
            ptr = NULL;
        }
    }
    if (temporary_rcu) {
        rcu_unregister_thread();
    }
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
    bool temporary_rcu = !tpu_thread_has_rcu;

    if (temporary_rcu) {
        rcu_register_thread();
    }
    address_space_unmap(pci_get_address_space(&s->parent_obj), ptr, len,
                        is_write, is_write ? len : 0);
    if (temporary_rcu) {
        rcu_unregister_thread();
    }
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

/* Lock held: a reset cannot slip in between its checks and this write. */
static void tpu_write_completion(TPUState *s, TPUJob *job)
{
    const struct tpu_job_result *r = &job->result;
    struct tpu_completion c = {
        .seqno = cpu_to_le64(job->seqno),
        .status = cpu_to_le32(r->status),
        .error_pc = cpu_to_le32(r->error_pc),
        .fault_addr = cpu_to_le64(r->fault_addr),
        .cycles = cpu_to_le64(r->cycles),
        .mxu_busy_cycles = cpu_to_le64(r->mxu_busy_cycles),
        .macs = cpu_to_le64(r->macs),
        .flags = cpu_to_le32(TPU_COMPL_VALID),
        .stall_cycles = cpu_to_le64(r->stall_cycles),
    };
    uint64_t addr = job->compl_base + (uint64_t)job->slot * sizeof(c);

    if (tpu_dma_rw(s, addr, &c, sizeof(c), true)) {
        job->queue_fault = "cannot write the completion record";
    }
}

/*
 * Fetches the job's ring entry (RAM only, like a completion record); lock
 * held, so RUN_SEQNO names the job as soon as RUN_QUEUE says it runs.
 */
static void tpu_fetch_job(TPUState *s, TPUJob *job)
{
    uint64_t addr = job->ring_base + (uint64_t)job->slot * sizeof(job->entry);

    if (tpu_dma_rw(s, addr, &job->entry, sizeof(job->entry), false)) {
        job->queue_fault = "cannot read the ring entry";
        return;
    }
    job->seqno = le64_to_cpu(job->entry.seqno);
}

/* Validates and runs the fetched ring entry; no lock held. */
static void tpu_run_job(TPUState *s, TPUJob *job)
{
    const struct tpu_ring_entry e = job->entry;
    uint32_t ctx_id;

    if (job->queue_fault) {
        return;
    }
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
}

/*
 * Retires a job of the current generation: completion record, HEAD,
 * DONE_SEQ, counters, ERR_*, interrupt; lock held. A job whose queue was
 * reset (QCTRL_RESET) while it ran leaves no trace but its work counters.
 */
static void tpu_retire_job(TPUState *s, TPUJob *job)
{
    TPUQueue *q = &s->queues[job->qid];
    const struct tpu_job_result *r = &job->result;

    tpu_count_job(s, r);
    if (q->resets != job->resets) {
        return;
    }
    if (!job->queue_fault) {
        tpu_write_completion(s, job);   /* sets queue_fault on failure */
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

    if (q->epoch == job->epoch) {
        q->head = (job->slot + 1) & (job->ring_size - 1);
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

static void *tpu_worker_thread(void *opaque)
{
    TPUState *s = opaque;
    TPUJob job;

    rcu_register_thread();
    tpu_thread_has_rcu = true;

    qemu_mutex_lock(&s->lock);
    while (!s->stopping) {
        if (s->engine_dirty) {
            /* A global reset found us running an orphaned job. */
            tpu_engine_reset(s->engine);
            s->engine_dirty = false;
            s->status |= TPU_STATUS_READY;
            continue;
        }
        if (!tpu_next_job(s, &job)) {
            qemu_cond_wait(&s->work_cond, &s->lock);
            continue;
        }
        tpu_fetch_job(s, &job);
        s->job_running = true;
        s->running_queue = job.qid;
        s->running_seqno = job.seqno;
        s->running_dropped = false;
        s->status |= TPU_STATUS_BUSY;
        qemu_mutex_unlock(&s->lock);

        tpu_run_job(s, &job);

        qemu_mutex_lock(&s->lock);
        s->job_running = false;
        s->running_queue = -1;
        s->running_seqno = 0;
        s->status &= ~TPU_STATUS_BUSY;
        if (job.generation == s->generation) {
            tpu_retire_job(s, &job);
        }
        qemu_cond_broadcast(&s->idle_cond);
    }
    qemu_mutex_unlock(&s->lock);

    rcu_unregister_thread();
    return NULL;
}

void tpu_worker_start(TPUState *s)
{
    qemu_thread_create(&s->worker, "tpu-worker", tpu_worker_thread, s,
                       QEMU_THREAD_JOINABLE);
}

void tpu_worker_stop(TPUState *s)
{
    qemu_mutex_lock(&s->lock);
    s->stopping = true;
    if (s->job_running) {
        tpu_engine_abort(s->engine);
    }
    qemu_cond_broadcast(&s->work_cond);
    qemu_mutex_unlock(&s->lock);
    qemu_thread_join(&s->worker);
}
