/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * TPU card - QEMU PCIe device "tpu": PCI identity, BAR0 registers, MSI-X,
 * global reset and the engine's lifetime. The command queues are processed
 * by the worker in tpu-queue.c; the matrix unit, device MMU and program
 * executor are the engine library (tpu_engine.h). The register map is
 * include/tpu_hw.h; docs/hardware.md describes the card.
 *
 * Properties:
 *   mxu-rows, mxu-cols  systolic array size (default 128 x 128, 1..4096)
 *   ub-size             unified buffer bytes (default 8 MiB)
 *   acc-size            accumulator memory bytes (default 4 MiB)
 *   clock-mhz           modelled clock for the cycle counters (default 700)
 *   num-queues          command queues (default 1, 1..8)
 *   num-ctx             context table entries (default 256, 1..65536)
 *   threads             engine worker threads (default 0: one per host CPU,
 *                       at most one per vCPU of the machine and 64)
 *   engine-mode         "fast" (default) or "cycle-accurate": same results,
 *                       the latter simulates the PE grid cycle by cycle
 *   dma-mbps            modelled host DMA bandwidth in MB/s (default 44800)
 *   tlb-entries         device TLB entries kept across jobs (default 8192,
 *                       1..65536)
 *   x-queue-reset-fails test only (default off): a queue reset does not take,
 *                       the queue enters STATUS.ERROR and only a global reset
 *                       recovers it (for the driver's escalation to a reset
 *                       of the card)
 *   x-spec-version      test only (default TPU_SPEC_VERSION): the spec version
 *                       VERSION reports, 1.0 to 1.5 or 2.0 to the current
 *                       2.4 (major << 16 | minor), and only the CAPS bits of
 *                       that version; the card behaves as the current spec
 *                       all the same (for the driver's refusal of cards
 *                       before 1.3 and the runtime's of missing features)
 *   ici                 spec 2.0: the tpu-ici object (tpu-ici.c) whose fabric
 *                       the card joins; none: no links
 *   ici-coord           with ici: the card's coordinate, "x" on a ring, "x:y"
 *                       on a 2-D torus
 *   ici-port0..3        with ici: a socket chardev that links the port to its
 *                       neighbour in another QEMU process (tpu-ici-link.c;
 *                       docs/hardware.md section 10); none: the neighbour is
 *                       a card of this QEMU, if any
 *   x-ring-generation-step  test only (default 1, at least 1): how far a ring
 *                       reprogram or QCTRL_RESET advances the queue's
 *                       generation counters; 4294967296 makes each count as
 *                       2^32 of them, to show that the counters do not wrap
 *   x-test-hold         test only (default off): the test-only registers
 *                       TEST_HOLD and TEST_HELD (tpu_hw.h), which hold a
 *                       started job before an instruction until the test
 *                       lets it go or a reset aborts it (for guest tests
 *                       that need a job running, or hung, however fast the
 *                       host)
 *   x-sync-worker       test only (default off): no worker or TLB thread; the
 *                       queue bottom half runs each job in the main loop and
 *                       TLB_INVAL takes effect as it is written, so that a
 *                       sequence of accesses always has the same outcome (for
 *                       the device fuzzer, tools/build-qemu-fuzz.sh); the
 *                       engine gets one thread unless threads says otherwise.
 *                       Not with x-test-hold: a held job would hold the main
 *                       loop
 *
 * Example: -device tpu,mxu-rows=256,mxu-cols=256,ub-size=24M,num-queues=4
 *
 * Behaviour tpu_hw.h leaves open:
 *   - All DMA (ring entries, completion records, programs' host accesses)
 *     needs PCI bus mastering and reaches guest RAM only.
 *   - COMPL_BASE must be 64-byte aligned. Writing RING_BASE or RING_SIZE
 *     restarts HEAD and TAIL at 0; RING_BASE, RING_SIZE, COMPL_BASE and
 *     COMPL_SIZE are ignored while the queue is enabled, COMPL_SIZE other
 *     than 64 or 128 always; a global reset sets COMPL_SIZE back to 64. A
 *     ring entry that cannot be read or a completion that cannot be written
 *     stops the queue (QSTAT_ERROR).
 *   - Every retired job sets IRQ_STATUS.DONE or .ERROR and, if unmasked,
 *     sends MSI-X vector DONE or ERROR; unmasking a set bit sends it too.
 *   - QCTRL_RESET drops the queue's running job (aborted, no completion
 *     record, DONE_SEQ unchanged, no interrupt), sets HEAD = TAIL = 0 and
 *     clears QSTAT_ERROR; then ENABLE takes the value written with it.
 *     Clearing ENABLE lets the running job finish and fetches nothing more.
 *     With x-queue-reset-fails, QCTRL_RESET changes nothing but setting
 *     QSTAT_ERROR (no interrupt): the running job goes on, HEAD and TAIL are
 *     kept, and ENABLE cannot be set until a global reset.
 *   - The TLB keeps translations across jobs until TLB_INVAL or a reset.
 *     A TLB_INVAL write is posted: it drops the context's entries at once
 *     and returns; the TLB thread waits until no translation made before it
 *     can still be used (the engine finishes the page copies in progress),
 *     then TLB_INVAL_DONE counts it (spec 1.3, CAPS.TLB_DONE); a reset does
 *     not clear that count.
 *   - RUN_QUEUE and RUN_SEQNO (spec 1.5) name the job from the fetch of its
 *     ring entry until it retires; one that a queue or global reset dropped
 *     is no longer shown.
 *   - Ring entries are fetched and jobs retired by a bottom half in the main
 *     loop; the worker thread only runs the engine (tpu-dev.h, Locking).
 *   - A card on a fabric (ici) joins it when realized and leaves it when
 *     unrealized; a peer's job waiting on one of its links then ends
 *     LINK_DOWN. A global reset also clears the port counters, and the
 *     engine's reset after an aborted job empties the receive buffers.
 *   - RESET waits up to TPU_RESET_WAIT_MS for the running job to stop at an
 *     instruction boundary. If it has not, the registers are reset anyway,
 *     the job's results are dropped and STATUS.READY comes back once the job
 *     is gone; queues may be programmed meanwhile.
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/lockable.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/boards.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/vmstate.h"
#include "tpu-dev.h"

/* How long a global reset waits for the running job to stop. */
#define TPU_RESET_WAIT_MS 100

#define TPU_PCIE_CAP_OFFSET 0x80
#define TPU_MSIX_BAR_SIZE 4096
#define TPU_MSIX_PBA_OFFSET (TPU_MSIX_BAR_SIZE / 2)

#define TPU_MAX_CTX 65536
#define TPU_MAX_DEFAULT_THREADS 64
#define TPU_MAX_TLB_ENTRIES 65536
/* The last spec version before 2.0, for x-spec-version. */
#define TPU_SPEC_1_LAST 0x00010005u

/*
 * Interrupts: the lock is held. Delivery waits for the bottom half so that
 * the worker never needs the BQL.
 */
void tpu_raise_irq(TPUState *s, uint32_t bits)
{
    s->irq_status |= bits;
    s->pending_irqs |= bits;
    qemu_bh_schedule(s->irq_bh);
}

static void tpu_irq_bh(void *opaque)
{
    TPUState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t bits;

    qemu_mutex_lock(&s->lock);
    bits = s->pending_irqs & s->irq_mask;
    s->pending_irqs = 0;
    qemu_mutex_unlock(&s->lock);

    if (bits & TPU_IRQ_DONE) {
        msix_notify(pdev, TPU_MSIX_VEC_DONE);
    }
    if (bits & TPU_IRQ_ERROR) {
        msix_notify(pdev, TPU_MSIX_VEC_ERROR);
    }
}

/* Registers, queues and counters to their reset values; lock held. */
static void tpu_clear_registers(TPUState *s)
{
    s->control = 0;
    s->irq_status = 0;
    s->irq_mask = 0;
    s->pending_irqs = 0;
    s->ctx_table = 0;
    s->err_code = TPU_ERR_NONE;
    s->err_queue = 0;
    s->err_addr = 0;
    memset(s->counters, 0, sizeof(s->counters));
    memset(s->queues, 0, sizeof(s->queues));
    s->next_queue = 0;
}

/* Whether the worker has the job (queued for it or running); lock held. */
static bool tpu_worker_has_job(TPUState *s)
{
    return s->job_state == TPU_JOB_QUEUED || s->job_state == TPU_JOB_RUNNING;
}

/*
 * Global reset (RESET register, device reset); BQL held. Aborts the job the
 * worker has and waits for it to stop; then empties the TLB and on-chip
 * memory (tpu_engine_reset()). The abort comes first: until the reset the
 * job's translations fill no TLB entry. A job stuck in one long instruction
 * past TPU_RESET_WAIT_MS is left orphaned: its results are discarded and
 * STATUS.READY returns once the worker has reset the engine after it. A job
 * that finished but did not retire yet is dropped.
 */
static void tpu_global_reset(TPUState *s)
{
    int64_t deadline = qemu_clock_get_ms(QEMU_CLOCK_REALTIME) +
                       TPU_RESET_WAIT_MS;

    QEMU_LOCK_GUARD(&s->lock);
    if (s->stopped) {
        return;
    }
    s->generation++;
    tpu_clear_registers(s);
    tpu_engine_link_clear(s->engine);
    s->status &= ~TPU_STATUS_READY;     /* nothing new is fetched */
    if (tpu_worker_has_job(s)) {
        tpu_engine_abort(s->engine);
        s->running_dropped = true;
    }
    while (tpu_worker_has_job(s)) {
        int64_t left = deadline - qemu_clock_get_ms(QEMU_CLOCK_REALTIME);

        if (left <= 0) {
            break;
        }
        qemu_cond_timedwait(&s->idle_cond, &s->lock, left);
    }
    if (tpu_worker_has_job(s)) {
        s->engine_dirty = true;
        return;
    }
    s->job_state = TPU_JOB_NONE;
    s->running_dropped = false;
    tpu_engine_reset(s->engine);        /* no job: it waits for nothing */
    s->engine_dirty = false;
    s->status = TPU_STATUS_READY;
}

/* ---- queue registers ---------------------------------------------------- */

static TPUQueue *tpu_queue_of(TPUState *s, hwaddr addr, unsigned *qid,
                              hwaddr *qreg)
{
    if (addr < TPU_REG_QUEUE_BASE) {
        return NULL;
    }
    *qid = (addr - TPU_REG_QUEUE_BASE) / TPU_REG_QUEUE_STRIDE;
    *qreg = (addr - TPU_REG_QUEUE_BASE) % TPU_REG_QUEUE_STRIDE;
    return *qid < s->num_queues ? &s->queues[*qid] : NULL;
}

static void tpu_queue_error(TPUState *s, unsigned qid, const char *why,
                            uint64_t value)
{
    qemu_log_mask(LOG_GUEST_ERROR, "tpu: queue %u: %s (0x%" PRIx64 ")\n",
                  qid, why, value);
    s->queues[qid].status = TPU_QSTAT_ERROR;
    tpu_raise_irq(s, TPU_IRQ_ERROR);
}

/* Checks a queue's ring on enable; lock held. */
static bool tpu_queue_configured(TPUState *s, unsigned qid)
{
    TPUQueue *q = &s->queues[qid];

    if (q->ring_size < 2 || q->ring_size > TPU_RING_MAX_ENTRIES ||
        !is_power_of_2(q->ring_size)) {
        tpu_queue_error(s, qid, "RING_SIZE is not a power of two in "
                        "[2, " stringify(TPU_RING_MAX_ENTRIES) "]",
                        q->ring_size);
    } else if (q->ring_base & (TPU_PAGE_SIZE - 1)) {
        tpu_queue_error(s, qid, "RING_BASE is not 4 KiB aligned",
                        q->ring_base);
    } else if (q->compl_base & (sizeof(struct tpu_completion) - 1)) {
        tpu_queue_error(s, qid, "COMPL_BASE is not 64-byte aligned",
                        q->compl_base);
    } else if (q->tail >= q->ring_size) {
        tpu_queue_error(s, qid, "RING_TAIL is not below RING_SIZE", q->tail);
    } else {
        return true;
    }
    return false;
}

/*
 * A new ring: HEAD and TAIL restart at 0 and a job still running on the old
 * ring will not move HEAD.
 */
static bool tpu_queue_reprogram(TPUState *s, unsigned qid, const char *reg)
{
    TPUQueue *q = &s->queues[qid];

    if (q->control & TPU_QCTRL_ENABLE) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "tpu: queue %u: %s written while enabled, ignored\n",
                      qid, reg);
        return false;
    }
    q->head = 0;
    q->tail = 0;
    q->epoch += s->generation_step;
    return true;
}

/*
 * QCTRL_RESET: the running job of the queue, if any, is aborted and dropped
 * (tpu_retire_job() sees the changed reset count) and the engine is reset
 * before the next job; other queues are not affected.
 */
static void tpu_queue_reset(TPUState *s, unsigned qid)
{
    TPUQueue *q = &s->queues[qid];

    if (s->queue_reset_fails) {
        qemu_log_mask(LOG_GUEST_ERROR, "tpu: queue %u: reset does not take "
                      "(x-queue-reset-fails), queue in error\n", qid);
        q->status = TPU_QSTAT_ERROR;
        q->reset_failed = true;
        return;
    }
    q->resets += s->generation_step;
    q->epoch += s->generation_step;
    q->head = 0;
    q->tail = 0;
    q->status &= ~TPU_QSTAT_ERROR;
    if (tpu_worker_has_job(s) && s->job.qid == qid) {
        tpu_engine_abort(s->engine);
        s->running_dropped = true;
        s->engine_dirty = true;
    }
}

static void tpu_queue_write_control(TPUState *s, unsigned qid, uint32_t val)
{
    TPUQueue *q = &s->queues[qid];
    uint32_t known = TPU_QCTRL_ENABLE | TPU_QCTRL_RESET;

    if (val & ~known) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "tpu: queue %u: unknown CONTROL bits 0x%x ignored\n",
                      qid, val & ~known);
    }
    if (val & TPU_QCTRL_RESET) {
        tpu_queue_reset(s, qid);
    }
    if (!(val & TPU_QCTRL_ENABLE)) {
        q->control = 0;
        q->status &= ~TPU_QSTAT_ACTIVE;
        return;
    }
    q->control = TPU_QCTRL_ENABLE;
    if (q->status & TPU_QSTAT_ACTIVE) {
        return;
    }
    if (q->reset_failed) {
        return;             /* stuck until a global reset */
    }
    if (tpu_queue_configured(s, qid)) {
        q->status = TPU_QSTAT_ACTIVE;
        qemu_bh_schedule(s->queue_bh);
    }
}

static void tpu_queue_write_tail(TPUState *s, unsigned qid, uint32_t val)
{
    TPUQueue *q = &s->queues[qid];

    if (!(q->control & TPU_QCTRL_ENABLE)) {
        q->tail = val;      /* checked when the queue is enabled */
    } else if (val >= q->ring_size) {
        tpu_queue_error(s, qid, "RING_TAIL is not below RING_SIZE", val);
    } else {
        q->tail = val;
        qemu_bh_schedule(s->queue_bh);
    }
}

static bool tpu_queue_read(TPUState *s, hwaddr addr, uint64_t *val)
{
    unsigned qid;
    hwaddr qreg;
    TPUQueue *q = tpu_queue_of(s, addr, &qid, &qreg);

    if (!q) {
        return false;
    }
    switch (qreg) {
    case TPU_QREG_RING_BASE:
        *val = q->ring_base;
        break;
    case TPU_QREG_RING_SIZE:
        *val = q->ring_size;
        break;
    case TPU_QREG_RING_HEAD:
        *val = q->head;
        break;
    case TPU_QREG_RING_TAIL:
        *val = q->tail;
        break;
    case TPU_QREG_COMPL_BASE:
        *val = q->compl_base;
        break;
    case TPU_QREG_CONTROL:
        *val = q->control;
        break;
    case TPU_QREG_STATUS:
        *val = q->status;
        break;
    case TPU_QREG_DONE_SEQ:
        *val = q->done_seq;
        break;
    case TPU_QREG_PRIORITY:
        *val = q->priority;
        break;
    case TPU_QREG_COMPL_SIZE:
        *val = q->compl_link ? TPU_COMPL_SIZE_LINK : TPU_COMPL_SIZE;
        break;
    default:
        return false;
    }
    return true;
}

/* COMPL_SIZE (spec 2.4): 64 or 128, while the queue is disabled; lock held. */
static void tpu_queue_write_compl_size(TPUState *s, unsigned qid, uint64_t val)
{
    TPUQueue *q = &s->queues[qid];

    if (q->control & TPU_QCTRL_ENABLE) {
        qemu_log_mask(LOG_GUEST_ERROR, "tpu: queue %u: COMPL_SIZE written "
                      "while enabled, ignored\n", qid);
    } else if (val != TPU_COMPL_SIZE && val != TPU_COMPL_SIZE_LINK) {
        qemu_log_mask(LOG_GUEST_ERROR, "tpu: queue %u: COMPL_SIZE %" PRIu64
                      " is neither %d nor %d, ignored\n", qid, val,
                      TPU_COMPL_SIZE, TPU_COMPL_SIZE_LINK);
    } else {
        q->compl_link = val == TPU_COMPL_SIZE_LINK;
    }
}

static bool tpu_queue_write(TPUState *s, hwaddr addr, uint64_t val)
{
    unsigned qid;
    hwaddr qreg;
    TPUQueue *q = tpu_queue_of(s, addr, &qid, &qreg);

    if (!q) {
        return false;
    }
    switch (qreg) {
    case TPU_QREG_RING_BASE:
        if (tpu_queue_reprogram(s, qid, "RING_BASE")) {
            q->ring_base = val;
        }
        break;
    case TPU_QREG_RING_SIZE:
        if (tpu_queue_reprogram(s, qid, "RING_SIZE")) {
            q->ring_size = val;
        }
        break;
    case TPU_QREG_COMPL_BASE:
        if (q->control & TPU_QCTRL_ENABLE) {
            qemu_log_mask(LOG_GUEST_ERROR, "tpu: queue %u: COMPL_BASE "
                          "written while enabled, ignored\n", qid);
        } else {
            q->compl_base = val;
        }
        break;
    case TPU_QREG_COMPL_SIZE:
        tpu_queue_write_compl_size(s, qid, val);
        break;
    case TPU_QREG_RING_TAIL:
        tpu_queue_write_tail(s, qid, val);
        break;
    case TPU_QREG_CONTROL:
        tpu_queue_write_control(s, qid, val);
        break;
    case TPU_QREG_PRIORITY:
        if (val > TPU_QUEUE_MAX_PRIORITY) {
            qemu_log_mask(LOG_GUEST_ERROR, "tpu: queue %u: PRIORITY %" PRIu64
                          " above %d, ignored\n", qid, val,
                          TPU_QUEUE_MAX_PRIORITY);
        } else {
            q->priority = val;
        }
        break;
    case TPU_QREG_RING_HEAD:
    case TPU_QREG_STATUS:
    case TPU_QREG_DONE_SEQ:
        qemu_log_mask(LOG_GUEST_ERROR, "tpu: write to read-only queue "
                      "register 0x%" HWADDR_PRIx "\n", addr);
        break;
    default:
        return false;
    }
    return true;
}

/* ---- global registers --------------------------------------------------- */

/* ---- interconnect registers (spec 2.0) ---------------------------------- */

static bool tpu_port_reg_is_64bit(hwaddr reg)
{
    hwaddr preg;

    if (reg < TPU_REG_PORT_BASE ||
        reg >= TPU_REG_PORT(TPU_ICI_MAX_PORTS, 0)) {
        return false;
    }
    preg = (reg - TPU_REG_PORT_BASE) % TPU_REG_PORT_STRIDE;
    return preg >= TPU_PREG_TX_BYTES && preg <= TPU_PREG_ERRORS;
}

static bool tpu_has_ici(TPUState *s)
{
    return s->spec_version >= 0x00020000u;
}

/* ICI_* registers: the card's place on its fabric, 0 on none; lock held. */
static bool tpu_ici_read(TPUState *s, hwaddr addr, uint64_t *val)
{
    struct tpu_link_info info;

    tpu_engine_link_info(s->engine, &info);
    if (!tpu_has_ici(s)) {
        memset(&info, 0, sizeof(info));
    }
    switch (addr) {
    case TPU_REG_ICI_INFO:
        *val = info.ports | info.topology << TPU_ICI_INFO_TOPO_SHIFT;
        break;
    case TPU_REG_ICI_COORD:
        *val = info.x | info.y << 8;
        break;
    case TPU_REG_ICI_DIMS:
        *val = info.dim_x | info.dim_y << 8;
        break;
    case TPU_REG_ICI_LINK_GBPS:
        *val = info.link_gbps;
        break;
    case TPU_REG_ICI_HOP_NS:
        *val = info.hop_ns;
        break;
    case TPU_REG_ICI_CREDITS:
        *val = info.credits;
        break;
    case TPU_REG_ICI_Y_LINK_GBPS:
        *val = info.y_link_gbps;
        break;
    case TPU_REG_ICI_Y_HOP_NS:
        *val = info.y_hop_ns;
        break;
    default:
        return false;
    }
    return true;
}

/* PORT blocks: a port the card does not have reads 0; lock held. */
static bool tpu_port_read(TPUState *s, hwaddr addr, uint64_t *val)
{
    struct tpu_link_port_info p;
    unsigned port;

    if (addr < TPU_REG_PORT_BASE ||
        addr >= TPU_REG_PORT(TPU_ICI_MAX_PORTS, 0)) {
        return false;
    }
    port = (addr - TPU_REG_PORT_BASE) / TPU_REG_PORT_STRIDE;
    if (!tpu_has_ici(s) || !tpu_engine_port_info(s->engine, port, &p)) {
        memset(&p, 0, sizeof(p));
    }
    switch ((addr - TPU_REG_PORT_BASE) % TPU_REG_PORT_STRIDE) {
    case TPU_PREG_STATUS:
        *val = (p.up ? TPU_PORT_UP : 0) | (p.error ? TPU_PORT_ERROR : 0) |
               p.peer_port << TPU_PORT_PEER_PORT_SHIFT;
        break;
    case TPU_PREG_PEER:
        *val = p.peer_x | p.peer_y << 8;
        break;
    case TPU_PREG_TX_BYTES:
        *val = p.tx_bytes;
        break;
    case TPU_PREG_RX_BYTES:
        *val = p.rx_bytes;
        break;
    case TPU_PREG_TX_PACKETS:
        *val = p.tx_packets;
        break;
    case TPU_PREG_RX_PACKETS:
        *val = p.rx_packets;
        break;
    case TPU_PREG_ERRORS:
        *val = p.errors;
        break;
    case TPU_PREG_RX_QUEUED:
        *val = p.rx_queued;
        break;
    default:
        return false;
    }
    return true;
}

static bool tpu_reg_is_64bit(hwaddr reg)
{
    hwaddr qreg;

    if (reg >= TPU_REG_TEST_HOLD) {
        return false;       /* the test-only registers are 32-bit */
    }
    if (reg >= TPU_REG_QUEUE_BASE) {
        qreg = (reg - TPU_REG_QUEUE_BASE) % TPU_REG_QUEUE_STRIDE;
        return qreg == TPU_QREG_RING_BASE || qreg == TPU_QREG_COMPL_BASE ||
               qreg == TPU_QREG_DONE_SEQ;
    }
    return reg == TPU_REG_CTX_TABLE || reg == TPU_REG_ERR_ADDR ||
           reg == TPU_REG_RUN_SEQNO ||
           (reg >= TPU_REG_CNT_CYCLES && reg <= TPU_REG_CNT_LINK_RX) ||
           tpu_port_reg_is_64bit(reg);
}

/*
 * Whether a job runs that no reset has dropped (RUN_QUEUE): from its fetch
 * until it retires; lock held.
 */
static bool tpu_runs_job(TPUState *s)
{
    return s->job_state != TPU_JOB_NONE && !s->running_dropped;
}

/* The CAPS bits of a spec version (1.x, 2.x). */
static uint32_t tpu_caps(uint32_t spec_version)
{
    uint32_t minor = spec_version & 0xffff;
    uint32_t caps = TPU_CAP_INT8 | TPU_CAP_BF16 | TPU_CAP_FP32 | TPU_CAP_VPU;

    if (minor >= 3) {
        caps |= TPU_CAP_TLB_DONE;
    }
    if (minor >= 4) {
        caps |= TPU_CAP_VPU_TRAIN;
    }
    if (minor >= 5 || spec_version >> 16 >= 2) {
        caps |= TPU_CAP_TLB_DONE | TPU_CAP_VPU_TRAIN | TPU_CAP_RUN_INFO;
    }
    if (spec_version >> 16 >= 2) {
        caps |= TPU_CAP_ICI;
    }
    if (spec_version >= 0x00020003) {
        caps |= TPU_CAP_ACT_ERF;
    }
    if (spec_version >= 0x00020004) {
        caps |= TPU_CAP_COMPL_LINK;
    }
    return caps;
}

/*
 * The test-only registers (x-test-hold): TEST_HOLD reads back what was last
 * written, with TEST_HOLD_PRESENT; TEST_HELD says whether the engine holds a
 * job now, and before which instruction. Lock held (the engine's hold lock is
 * a leaf under it).
 */
static uint32_t tpu_test_hold_read(TPUState *s, hwaddr addr)
{
    uint32_t pc;

    if (addr == TPU_REG_TEST_HOLD) {
        return s->test_hold_reg | TPU_TEST_HOLD_PRESENT;
    }
    if (!tpu_engine_test_held(s->engine, &pc)) {
        return 0;
    }
    return TPU_TEST_HELD_HELD | (pc & TPU_TEST_HELD_PC_MASK);
}

/*
 * TEST_HOLD (x-test-hold): with TEST_HOLD_RELEASE, lets the held job go on;
 * otherwise arms the hold for the next job to reach instruction PC
 * (TEST_HOLD_ARM) or disarms it, a held job staying held. The held job waits
 * in the worker with no lock held; a queue or global reset aborts it
 * (tpu_engine_abort() wakes it) as it would abort a long job. Lock held.
 */
static void tpu_test_hold_write(TPUState *s, uint32_t val)
{
    if (val & TPU_TEST_HOLD_RELEASE) {
        tpu_engine_test_release(s->engine);
        return;
    }
    s->test_hold_reg = val & (TPU_TEST_HOLD_ARM | TPU_TEST_HOLD_PC_MASK);
    tpu_engine_test_hold(s->engine, val & TPU_TEST_HOLD_ARM,
                         val & TPU_TEST_HOLD_PC_MASK);
}

/* Reads a register at its natural width; lock held. */
static bool tpu_reg_read(TPUState *s, hwaddr addr, uint64_t *val)
{
    switch (addr) {
    case TPU_REG_ID:
        *val = TPU_ID_MAGIC;
        break;
    case TPU_REG_VERSION:
        *val = s->spec_version;
        break;
    case TPU_REG_CAPS:
        *val = tpu_caps(s->spec_version);
        break;
    case TPU_REG_MXU_DIM:
        *val = s->mxu_rows << 16 | s->mxu_cols;
        break;
    case TPU_REG_UB_SIZE:
        *val = s->ub_size;
        break;
    case TPU_REG_ACC_SIZE:
        *val = s->acc_size;
        break;
    case TPU_REG_CLOCK_MHZ:
        *val = s->clock_mhz;
        break;
    case TPU_REG_NUM_QUEUES:
        *val = s->num_queues;
        break;
    case TPU_REG_NUM_CTX:
        *val = s->num_ctx;
        break;
    case TPU_REG_CONTROL:
        *val = s->control;
        break;
    case TPU_REG_STATUS:
        *val = s->status;
        break;
    case TPU_REG_RESET:
    case TPU_REG_TLB_INVAL:
        *val = 0;           /* write-only */
        break;
    case TPU_REG_TLB_INVAL_DONE:
        *val = s->tlb_inval_done;
        break;
    case TPU_REG_IRQ_STATUS:
        *val = s->irq_status;
        break;
    case TPU_REG_IRQ_MASK:
        *val = s->irq_mask;
        break;
    case TPU_REG_CTX_TABLE:
        *val = s->ctx_table;
        break;
    case TPU_REG_ERR_CODE:
        *val = s->err_code;
        break;
    case TPU_REG_ERR_QUEUE:
        *val = s->err_queue;
        break;
    case TPU_REG_ERR_ADDR:
        *val = s->err_addr;
        break;
    case TPU_REG_RUN_QUEUE:
        *val = tpu_runs_job(s) ? TPU_RUN_RUNNING | s->job.qid : 0;
        break;
    case TPU_REG_RUN_SEQNO:
        *val = tpu_runs_job(s) ? s->job.seqno : 0;
        break;
    case TPU_REG_CNT_CYCLES ... TPU_REG_CNT_LINK_RX:
        *val = s->counters[(addr - TPU_REG_CNT_CYCLES) / 8];
        break;
    case TPU_REG_TEST_HOLD:
    case TPU_REG_TEST_HELD:
        if (!s->test_hold) {
            return false;
        }
        *val = tpu_test_hold_read(s, addr);
        break;
    default:
        return tpu_ici_read(s, addr, val) || tpu_port_read(s, addr, val) ||
               tpu_queue_read(s, addr, val);
    }
    return true;
}

static void tpu_write_irq_mask(TPUState *s, uint32_t val)
{
    uint32_t unmasked = val & ~s->irq_mask & s->irq_status;

    s->irq_mask = val & (TPU_IRQ_DONE | TPU_IRQ_ERROR);
    if (unmasked) {
        /* Deliver what was pending while masked. */
        s->pending_irqs |= unmasked;
        qemu_bh_schedule(s->irq_bh);
    }
}

static void tpu_write_ctx_table(TPUState *s, uint64_t val)
{
    if (val & (TPU_PAGE_SIZE - 1)) {
        qemu_log_mask(LOG_GUEST_ERROR, "tpu: CTX_TABLE 0x%" PRIx64
                      " is not 4 KiB aligned, ignored\n", val);
        return;
    }
    s->ctx_table = val;
}

/* Writes a register at its natural width (RESET aside); lock held. */
static bool tpu_reg_write(TPUState *s, hwaddr addr, uint64_t val)
{
    switch (addr) {
    case TPU_REG_CONTROL:
        if (val & ~TPU_CONTROL_ENABLE) {
            qemu_log_mask(LOG_GUEST_ERROR, "tpu: unknown CONTROL bits 0x%"
                          PRIx64 " ignored\n", val & ~TPU_CONTROL_ENABLE);
        }
        s->control = val & TPU_CONTROL_ENABLE;
        qemu_bh_schedule(s->queue_bh);
        break;
    case TPU_REG_IRQ_STATUS:
        s->irq_status &= ~val;
        break;
    case TPU_REG_IRQ_MASK:
        tpu_write_irq_mask(s, val);
        break;
    case TPU_REG_CTX_TABLE:
        tpu_write_ctx_table(s, val);
        break;
    case TPU_REG_TLB_INVAL:
        if (val != TPU_TLB_INVAL_ALL && val >= s->num_ctx) {
            qemu_log_mask(LOG_GUEST_ERROR, "tpu: TLB_INVAL of context %"
                          PRIu64 " beyond NUM_CTX, ignored\n", val);
        } else {
            tpu_tlb_invalidate_post(s, val);
        }
        break;
    case TPU_REG_TEST_HOLD:
        if (!s->test_hold) {
            return false;
        }
        tpu_test_hold_write(s, val);
        break;
    case TPU_REG_TEST_HELD:
        if (!s->test_hold) {
            return false;
        }
        qemu_log_mask(LOG_GUEST_ERROR, "tpu: write to read-only register 0x%"
                      HWADDR_PRIx "\n", addr);
        break;
    case TPU_REG_ID ... TPU_REG_NUM_CTX:
    case TPU_REG_STATUS:
    case TPU_REG_TLB_INVAL_DONE:
    case TPU_REG_ERR_CODE ... TPU_REG_ERR_ADDR:
    case TPU_REG_RUN_QUEUE:
    case TPU_REG_RUN_SEQNO:
    case TPU_REG_CNT_CYCLES ... TPU_REG_CNT_LINK_RX:
    case TPU_REG_ICI_INFO ... TPU_REG_ICI_Y_HOP_NS:
    case TPU_REG_PORT_BASE ... TPU_REG_PORT(TPU_ICI_MAX_PORTS, 0) - 1:
        qemu_log_mask(LOG_GUEST_ERROR, "tpu: write to read-only register 0x%"
                      HWADDR_PRIx "\n", addr);
        break;
    default:
        return tpu_queue_write(s, addr, val);
    }
    return true;
}

/* ---- BAR0 --------------------------------------------------------------- */

/*
 * 64-bit registers take 8-byte accesses or 4-byte accesses to either half;
 * 32-bit registers take 4-byte accesses.
 */
static uint64_t tpu_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    TPUState *s = opaque;
    hwaddr reg = QEMU_ALIGN_DOWN(addr, 8);
    uint64_t val = 0;
    bool known;

    qemu_mutex_lock(&s->lock);
    if (s->stopped) {
        qemu_mutex_unlock(&s->lock);
        return 0;
    }
    if (tpu_reg_is_64bit(reg)) {
        known = tpu_reg_read(s, reg, &val);
        if (size == 4) {
            val = extract64(val, (addr - reg) * 8, 32);
        }
    } else {
        known = size == 4 && tpu_reg_read(s, addr, &val);
    }
    qemu_mutex_unlock(&s->lock);

    if (!known) {
        qemu_log_mask(LOG_GUEST_ERROR, "tpu: %u-byte read at 0x%" HWADDR_PRIx
                      ": no register of that width\n", size, addr);
        return 0;
    }
    return val;
}

static void tpu_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    TPUState *s = opaque;
    hwaddr reg = QEMU_ALIGN_DOWN(addr, 8);
    uint64_t old;
    bool known;

    if (addr == TPU_REG_RESET && size == 4) {
        if (val == TPU_RESET_MAGIC) {
            tpu_global_reset(s);
        } else {
            qemu_log_mask(LOG_GUEST_ERROR, "tpu: RESET needs 0x%x, not 0x%"
                          PRIx64 "\n", TPU_RESET_MAGIC, val);
        }
        return;
    }

    qemu_mutex_lock(&s->lock);
    if (s->stopped) {
        qemu_mutex_unlock(&s->lock);
        return;
    }
    if (tpu_reg_is_64bit(reg)) {
        known = tpu_reg_read(s, reg, &old);
        if (known && size == 4) {
            val = deposit64(old, (addr - reg) * 8, 32, val);
        }
        known = known && tpu_reg_write(s, reg, val);
    } else {
        known = size == 4 && tpu_reg_write(s, addr, val);
    }
    qemu_mutex_unlock(&s->lock);

    if (!known) {
        qemu_log_mask(LOG_GUEST_ERROR, "tpu: %u-byte write at 0x%" HWADDR_PRIx
                      ": no register of that width, 0x%" PRIx64 " ignored\n",
                      size, addr, val);
    }
}

static const MemoryRegionOps tpu_mmio_ops = {
    .read = tpu_mmio_read,
    .write = tpu_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
};

/* ---- device ------------------------------------------------------------- */

static bool tpu_has_ici_links(TPUState *s)
{
    unsigned p;

    for (p = 0; p < TPU_ICI_LINK_PORTS; p++) {
        if (qemu_chr_fe_backend_connected(&s->ici_links[p].chr)) {
            return true;
        }
    }
    return false;
}

static bool tpu_check_properties(TPUState *s, Error **errp)
{
    if (s->num_queues < 1 || s->num_queues > TPU_MAX_QUEUES) {
        error_setg(errp, "tpu: num-queues must be 1..%d", TPU_MAX_QUEUES);
    } else if (s->num_ctx < 1 || s->num_ctx > TPU_MAX_CTX) {
        error_setg(errp, "tpu: num-ctx must be 1..%d", TPU_MAX_CTX);
    } else if (s->clock_mhz < 1) {
        error_setg(errp, "tpu: clock-mhz must be at least 1");
    } else if (s->dma_mbps < 1) {
        error_setg(errp, "tpu: dma-mbps must be at least 1");
    } else if (s->tlb_entries < 1 || s->tlb_entries > TPU_MAX_TLB_ENTRIES) {
        error_setg(errp, "tpu: tlb-entries must be 1..%d", TPU_MAX_TLB_ENTRIES);
    } else if (s->generation_step < 1) {
        error_setg(errp, "tpu: x-ring-generation-step must be at least 1");
    } else if ((s->spec_version < 0x00010000u ||
                s->spec_version > TPU_SPEC_1_LAST) &&
               (s->spec_version < 0x00020000u ||
                s->spec_version > TPU_SPEC_VERSION)) {
        error_setg(errp, "tpu: x-spec-version 0x%x: must be 0x%x..0x%x or "
                   "0x%x..0x%x (spec 1.0 to 1.5, or 2.0 to %u.%u; "
                   "major << 16 | minor)",
                   s->spec_version, 0x00010000u, TPU_SPEC_1_LAST, 0x00020000u,
                   TPU_SPEC_VERSION, TPU_SPEC_VERSION >> 16,
                   TPU_SPEC_VERSION & 0xffff);
    } else if (s->sync_worker && s->test_hold) {
        error_setg(errp, "tpu: x-sync-worker and x-test-hold exclude each "
                   "other: a held job would hold the main loop");
    } else if (s->ici_coord && !s->ici) {
        error_setg(errp, "tpu: ici-coord needs ici, the tpu-ici object the "
                   "card joins");
    } else if (!s->ici && tpu_has_ici_links(s)) {
        error_setg(errp, "tpu: ici-port<p> needs ici, the tpu-ici object the "
                   "card joins");
    } else {
        return true;
    }
    return false;
}

static bool tpu_parse_engine_mode(TPUState *s, uint32_t *mode, Error **errp)
{
    if (!s->engine_mode || !strcmp(s->engine_mode, "fast")) {
        *mode = TPU_ENGINE_FAST;
    } else if (!strcmp(s->engine_mode, "cycle-accurate")) {
        *mode = TPU_ENGINE_CYCLE_ACCURATE;
    } else {
        error_setg(errp, "tpu: engine-mode must be \"fast\" or "
                   "\"cycle-accurate\", not \"%s\"", s->engine_mode);
        return false;
    }
    return true;
}

/*
 * The engine's threads: as configured, or by default one per host CPU but no
 * more than the machine has vCPUs (at most TPU_MAX_DEFAULT_THREADS): they
 * spin briefly between the blocks of a MATMUL, and a card should not take
 * more of the host than the guest's own CPUs do.
 */
static uint32_t tpu_engine_threads(TPUState *s)
{
    long host = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t n = current_machine ? current_machine->smp.cpus : 1;

    if (s->threads) {
        return s->threads;
    }
    if (s->sync_worker) {
        return 1;           /* the same split of the work every run */
    }
    if (host > 0 && host < n) {
        n = host;
    }
    return MAX(1, MIN(n, TPU_MAX_DEFAULT_THREADS));
}

static bool tpu_create_engine(TPUState *s, Error **errp)
{
    struct tpu_engine_config cfg = {
        .mxu_rows = s->mxu_rows,
        .mxu_cols = s->mxu_cols,
        .ub_bytes = s->ub_size,
        .acc_bytes = s->acc_size,
        .clock_mhz = s->clock_mhz,
        .threads = tpu_engine_threads(s),
        .dma_mbps = s->dma_mbps,
        .tlb_entries = s->tlb_entries,
    };
    char err[256] = "";

    if (!tpu_parse_engine_mode(s, &cfg.mode, errp)) {
        return false;
    }

    s->engine = tpu_engine_create(&cfg, tpu_dma_rw, s, err, sizeof(err));
    if (!s->engine) {
        error_setg(errp, "tpu: cannot create the engine: %s", err);
        return false;
    }
    tpu_engine_set_phys_map(s->engine, tpu_dma_map, tpu_dma_unmap);
    return true;
}

static bool tpu_init_msix(TPUState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    unsigned i;

    memory_region_init(&s->msix_bar, OBJECT(s), "tpu-msix", TPU_MSIX_BAR_SIZE);
    if (msix_init(pdev, TPU_MSIX_VECTORS, &s->msix_bar, TPU_BAR_MSIX, 0,
                  &s->msix_bar, TPU_BAR_MSIX, TPU_MSIX_PBA_OFFSET, 0, errp)) {
        return false;
    }
    pci_register_bar(pdev, TPU_BAR_MSIX, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->msix_bar);
    for (i = 0; i < TPU_MSIX_VECTORS; i++) {
        msix_vector_use(pdev, i);
    }
    return true;
}

/* Takes the card off its fabric: a peer's job waiting on it ends LINK_DOWN. */
static void tpu_leave_fabric(TPUState *s)
{
    unsigned p;

    for (p = 0; p < TPU_ICI_LINK_PORTS; p++) {
        tpu_ici_link_unrealize(&s->ici_links[p]);
    }
    if (s->ici_attached) {
        tpu_ici_detach(s->ici, s->engine);
        s->ici_attached = false;
    }
}

static void tpu_realize(PCIDevice *pdev, Error **errp)
{
    TPUState *s = TPU(pdev);
    unsigned p;

    if (!tpu_check_properties(s, errp) || !tpu_create_engine(s, errp)) {
        return;
    }
    if (s->ici) {
        if (!tpu_ici_attach(s->ici, s->engine, s->ici_coord, errp)) {
            goto fail_engine;
        }
        s->ici_attached = true;
        for (p = 0; p < TPU_ICI_LINK_PORTS; p++) {
            if (!tpu_ici_link_realize(&s->ici_links[p], s->engine, p,
                                      s->ici_coord, errp)) {
                goto fail_ici;
            }
        }
    }
    if (pcie_endpoint_cap_init(pdev, TPU_PCIE_CAP_OFFSET) < 0) {
        error_setg(errp, "tpu: cannot add the PCIe capability");
        goto fail_ici;
    }
    if (!tpu_init_msix(s, errp)) {
        goto fail_pcie;
    }
    memory_region_init_io(&s->mmio, OBJECT(s), &tpu_mmio_ops, s, "tpu-regs",
                          TPU_BAR_REGS_SIZE);
    pci_register_bar(pdev, TPU_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->mmio);

    s->irq_bh = qemu_bh_new_guarded(tpu_irq_bh, s,
                                    &DEVICE(s)->mem_reentrancy_guard);
    s->queue_bh = qemu_bh_new_guarded(tpu_queue_bh, s,
                                      &DEVICE(s)->mem_reentrancy_guard);
    s->stopping = false;
    s->stopped = false;
    s->job_state = TPU_JOB_NONE;
    s->engine_dirty = false;
    tpu_clear_registers(s);
    s->status = TPU_STATUS_READY;
    tpu_worker_start(s);
    return;

fail_pcie:
    pcie_cap_exit(pdev);
fail_ici:
    tpu_leave_fabric(s);
fail_engine:
    tpu_engine_destroy(s->engine);
    s->engine = NULL;
}

/*
 * Unrealize (hot-unplug); BQL held. A vCPU may still dispatch an access it
 * looked up before the BARs went away: the lock and the engine live on until
 * tpu_instance_finalize(), and the registers are dead (read 0, writes
 * ignored) from here on.
 */
static void tpu_exit(PCIDevice *pdev)
{
    TPUState *s = TPU(pdev);

    qemu_mutex_lock(&s->lock);
    s->stopped = true;
    qemu_mutex_unlock(&s->lock);
    tpu_worker_stop(s);
    tpu_leave_fabric(s);
    qemu_bh_delete(s->queue_bh);
    s->queue_bh = NULL;
    qemu_bh_delete(s->irq_bh);
    s->irq_bh = NULL;
    msix_uninit(pdev, &s->msix_bar, &s->msix_bar);
    pcie_cap_exit(pdev);
}

static void tpu_instance_init(Object *obj)
{
    TPUState *s = TPU(obj);

    qemu_mutex_init(&s->lock);
    qemu_cond_init(&s->work_cond);
    qemu_cond_init(&s->idle_cond);
    qemu_cond_init(&s->tlb_cond);
}

static void tpu_instance_finalize(Object *obj)
{
    TPUState *s = TPU(obj);

    if (s->engine) {
        tpu_engine_destroy(s->engine);
        s->engine = NULL;
    }
    qemu_cond_destroy(&s->tlb_cond);
    qemu_cond_destroy(&s->idle_cond);
    qemu_cond_destroy(&s->work_cond);
    qemu_mutex_destroy(&s->lock);
}

static void tpu_reset_hold(Object *obj, ResetType type)
{
    tpu_global_reset(TPU(obj));
}

static const Property tpu_properties[] = {
    DEFINE_PROP_UINT32("mxu-rows", TPUState, mxu_rows, 128),
    DEFINE_PROP_UINT32("mxu-cols", TPUState, mxu_cols, 128),
    DEFINE_PROP_SIZE32("ub-size", TPUState, ub_size, 8 * MiB),
    DEFINE_PROP_SIZE32("acc-size", TPUState, acc_size, 4 * MiB),
    DEFINE_PROP_UINT32("clock-mhz", TPUState, clock_mhz, 700),
    DEFINE_PROP_UINT32("num-queues", TPUState, num_queues, 1),
    DEFINE_PROP_UINT32("num-ctx", TPUState, num_ctx, 256),
    DEFINE_PROP_UINT32("threads", TPUState, threads, 0),
    DEFINE_PROP_STRING("engine-mode", TPUState, engine_mode),
    DEFINE_PROP_UINT32("dma-mbps", TPUState, dma_mbps, 44800),
    DEFINE_PROP_UINT32("tlb-entries", TPUState, tlb_entries, 8192),
    DEFINE_PROP_BOOL("x-queue-reset-fails", TPUState, queue_reset_fails,
                     false),
    DEFINE_PROP_UINT32("x-spec-version", TPUState, spec_version,
                       TPU_SPEC_VERSION),
    DEFINE_PROP_UINT64("x-ring-generation-step", TPUState, generation_step, 1),
    DEFINE_PROP_LINK("ici", TPUState, ici, TYPE_TPU_ICI, TPUIciState *),
    DEFINE_PROP_STRING("ici-coord", TPUState, ici_coord),
    DEFINE_PROP_CHR("ici-port0", TPUState, ici_links[0].chr),
    DEFINE_PROP_CHR("ici-port1", TPUState, ici_links[1].chr),
    DEFINE_PROP_CHR("ici-port2", TPUState, ici_links[2].chr),
    DEFINE_PROP_CHR("ici-port3", TPUState, ici_links[3].chr),
    DEFINE_PROP_BOOL("x-test-hold", TPUState, test_hold, false),
    DEFINE_PROP_BOOL("x-sync-worker", TPUState, sync_worker, false),
};

/* Shown by -device tpu,help. */
static const struct {
    const char *name;
    const char *description;
} tpu_property_help[] = {
    { "mxu-rows", "systolic array rows, the largest K of a weight tile "
      "(1..4096)" },
    { "mxu-cols", "systolic array columns, the largest N of a weight tile "
      "(1..4096)" },
    { "ub-size", "unified buffer bytes" },
    { "acc-size", "accumulator memory bytes, a multiple of 4" },
    { "clock-mhz", "modelled clock of the cycle counters" },
    { "num-queues", "command queues (1..8)" },
    { "num-ctx", "context table entries (1..65536)" },
    { "threads", "engine worker threads, 0 = one per host CPU, at most "
      "one per vCPU (and 64)" },
    { "engine-mode", "\"fast\" (default) or \"cycle-accurate\": same "
      "results, the latter simulates the PE grid cycle by cycle" },
    { "dma-mbps", "modelled host DMA bandwidth in MB/s" },
    { "tlb-entries", "device TLB entries kept across jobs (1..65536)" },
    { "x-queue-reset-fails", "test only: a queue reset does not take, the "
      "queue stays in error until a global reset" },
    { "x-spec-version", "test only: the spec version (major << 16 | minor, "
      "1.0 to 1.5 or the current 2.2) VERSION and CAPS report" },
    { "ici", "the tpu-ici object (inter-chip fabric) the card joins" },
    { "ici-coord", "the card's coordinate on the fabric: \"x\" on a ring, "
      "\"x:y\" on a 2-D torus" },
    { "ici-port0", "a socket chardev linking port 0 to its neighbour in "
      "another QEMU process" },
    { "ici-port1", "the same for port 1" },
    { "ici-port2", "the same for port 2 (2-D torus)" },
    { "ici-port3", "the same for port 3 (2-D torus)" },
    { "x-ring-generation-step", "test only: how far a ring reprogram or "
      "queue reset advances the queue's generation counters (at least 1)" },
    { "x-test-hold", "test only: the TEST_HOLD and TEST_HELD registers, which "
      "hold a started job before an instruction until let go or reset" },
    { "x-sync-worker", "test only: jobs run in the main loop, no threads, "
      "so that runs replay exactly (fuzzing)" },
};

static const VMStateDescription vmstate_tpu = {
    .name = TYPE_TPU,
    .unmigratable = 1,
};

static void tpu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    unsigned i;

    k->realize = tpu_realize;
    k->exit = tpu_exit;
    k->vendor_id = TPU_PCI_VENDOR_ID;
    k->device_id = TPU_PCI_DEVICE_ID;
    k->revision = TPU_PCI_REVISION;
    k->class_id = TPU_PCI_CLASS;
    rc->phases.hold = tpu_reset_hold;
    dc->desc = "TPU-style matrix accelerator";
    dc->vmsd = &vmstate_tpu;
    device_class_set_props(dc, tpu_properties);
    for (i = 0; i < ARRAY_SIZE(tpu_property_help); i++) {
        object_class_property_set_description(klass,
                                              tpu_property_help[i].name,
                                              tpu_property_help[i].description);
    }
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo tpu_info = {
    .name = TYPE_TPU,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(TPUState),
    .instance_init = tpu_instance_init,
    .instance_finalize = tpu_instance_finalize,
    .class_init = tpu_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void tpu_register_types(void)
{
    type_register_static(&tpu_info);
}

type_init(tpu_register_types)
