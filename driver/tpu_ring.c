// SPDX-License-Identifier: GPL-2.0
/*
 * The command rings and completion records of the card's queues, and the queue reset.
 *
 * Each queue has its own ring. The driver writes ring entries at its tail and rings the TAIL
 * doorbell; the card fetches them (HEAD), runs them in order and, for each, writes a
 * completion record into the slot of the ring entry, then advances DONE_SEQ and raises an
 * interrupt. Jobs in a ring are kept on its list, oldest first, under tdev->job_lock; at most
 * TPU_RING_ENTRIES - 1 are there (the scheduler's credit limit), so the ring never overflows.
 */
#include <drm/tpu_accel.h>
#include <linux/dma-mapping.h>

#include "tpu_drv.h"
#include "tpu_job.h"
#include "tpu_mmu.h"
#include "tpu_reset.h"
#include "tpu_ring.h"

static_assert((TPU_RING_ENTRIES & (TPU_RING_ENTRIES - 1)) == 0 &&
	      TPU_RING_ENTRIES <= TPU_RING_MAX_ENTRIES);

static u32 tpu_ring_read(struct tpu_ring *ring, u32 reg)
{
	return tpu_read(ring->tdev, TPU_REG_QUEUE(ring->id, reg));
}

static void tpu_ring_write(struct tpu_ring *ring, u32 reg, u32 val)
{
	tpu_write(ring->tdev, TPU_REG_QUEUE(ring->id, reg), val);
}

/**
 * tpu_ring_init - allocate the rings of the card's queues, at probe
 * @tdev: the device, its queues counted
 *
 * Queue q of n gets the hardware PRIORITY q * DRM_TPU_PRIORITY_COUNT / n.
 *
 * Return: 0 or -ENOMEM.
 */
int tpu_ring_init(struct tpu_device *tdev)
{
	struct device *dev = &tdev->pdev->dev;
	u32 q;

	for (q = 0; q < tdev->num_queues; q++) {
		struct tpu_ring *ring = &tdev->rings[q];

		ring->tdev = tdev;
		ring->id = q;
		ring->priority = q * DRM_TPU_PRIORITY_COUNT / tdev->num_queues;
		snprintf(ring->name, sizeof(ring->name), "tpu-queue%u", q);
		ring->entries = dmam_alloc_coherent(dev,
						    TPU_RING_ENTRIES * sizeof(*ring->entries),
						    &ring->entries_dma, GFP_KERNEL);
		ring->compl_size = tdev->caps & TPU_CAP_COMPL_LINK ? TPU_COMPL_SIZE_LINK :
								     TPU_COMPL_SIZE;
		ring->compl = dmam_alloc_coherent(dev, TPU_RING_ENTRIES * ring->compl_size,
						  &ring->compl_dma, GFP_KERNEL);
		if (!ring->entries || !ring->compl)
			return -ENOMEM;
		INIT_LIST_HEAD(&ring->inflight);
	}
	return 0;
}

/* Program the queue after a reset of the card; the ring is empty. */
void tpu_ring_start(struct tpu_ring *ring)
{
	struct tpu_device *tdev = ring->tdev;
	unsigned long flags;

	tpu_write64(tdev, TPU_REG_QUEUE(ring->id, TPU_QREG_RING_BASE), ring->entries_dma);
	tpu_ring_write(ring, TPU_QREG_RING_SIZE, TPU_RING_ENTRIES);
	tpu_write64(tdev, TPU_REG_QUEUE(ring->id, TPU_QREG_COMPL_BASE), ring->compl_dma);
	if (tdev->caps & TPU_CAP_COMPL_LINK)
		tpu_ring_write(ring, TPU_QREG_COMPL_SIZE, ring->compl_size);
	tpu_ring_write(ring, TPU_QREG_PRIORITY, ring->priority);

	spin_lock_irqsave(&tdev->job_lock, flags);
	ring->tail = tpu_ring_read(ring, TPU_QREG_RING_HEAD) % TPU_RING_ENTRIES;
	tpu_ring_write(ring, TPU_QREG_RING_TAIL, ring->tail);
	spin_unlock_irqrestore(&tdev->job_lock, flags);

	tpu_ring_write(ring, TPU_QREG_CONTROL, TPU_QCTRL_ENABLE);
}

/* The completion record of ring slot @slot. */
static struct tpu_completion *tpu_ring_compl(struct tpu_ring *ring, u32 slot)
{
	return ring->compl + (size_t)slot * ring->compl_size;
}

/**
 * tpu_ring_push - write a job into the ring and ring the doorbell
 * @ring: the ring
 * @job: the job, with its seqno assigned
 *
 * Called with tdev->job_lock held. The ring has room: see the credit limit.
 */
void tpu_ring_push(struct tpu_ring *ring, struct tpu_job *job)
{
	struct tpu_ring_entry *entry = &ring->entries[ring->tail];

	lockdep_assert_held(&ring->tdev->job_lock);

	job->slot = ring->tail;
	memset(tpu_ring_compl(ring, job->slot), 0, ring->compl_size);
	memset(entry, 0, sizeof(*entry));
	entry->opcode = TPU_RING_OP_RUN;
	entry->ctx_id = job->ctx->id;
	entry->seqno = job->seqno;
	entry->program_addr = job->program_addr;
	entry->program_size = job->program_size;
	list_add_tail(&job->inflight_node, &ring->inflight);
	job->pushed = ktime_get_ns();

	ring->tail = (ring->tail + 1) % TPU_RING_ENTRIES;
	/* writel() orders the entry's stores before the doorbell. */
	tpu_ring_write(ring, TPU_QREG_RING_TAIL, ring->tail);
}

/* Whether @job's completion record is in its slot; its result into @res if so. */
static bool tpu_ring_record(struct tpu_ring *ring, struct tpu_job *job, struct tpu_job_result *res)
{
	const struct tpu_completion *rec = tpu_ring_compl(ring, job->slot);
	const struct tpu_completion_link *link = (const void *)(rec + 1);

	if (!(READ_ONCE(rec->flags) & TPU_COMPL_VALID) || rec->seqno != job->seqno)
		return false;
	/* The record is complete once VALID is seen. */
	dma_rmb();
	res->status = rec->status;
	res->error_pc = rec->error_pc;
	res->fault_addr = rec->fault_addr;
	res->cycles = rec->cycles;
	res->macs = rec->macs;
	res->mxu_busy_cycles = rec->mxu_busy_cycles;
	res->stall_cycles = rec->stall_cycles;
	if (ring->compl_size == TPU_COMPL_SIZE_LINK) {
		res->link_cycles = link->link_cycles;
		res->link_tx_bytes = link->link_tx_bytes;
		res->link_rx_bytes = link->link_rx_bytes;
	}
	return true;
}

/**
 * tpu_ring_retire - complete the jobs the card has retired (up to DONE_SEQ)
 * @ring: the ring
 *
 * Each job's result comes from the completion record in its slot.
 */
void tpu_ring_retire(struct tpu_ring *ring)
{
	struct tpu_device *tdev = ring->tdev;
	struct tpu_job *job, *tmp;
	unsigned long flags;
	u64 done_seq;

	spin_lock_irqsave(&tdev->job_lock, flags);
	/* readq() orders the register read before the reads of the records. */
	done_seq = tpu_read64(tdev, TPU_REG_QUEUE(ring->id, TPU_QREG_DONE_SEQ));
	list_for_each_entry_safe(job, tmp, &ring->inflight, inflight_node) {
		struct tpu_job_result res = {};
		int error;

		if (job->seqno > done_seq)
			break;
		tdev->last_progress = ktime_get_ns();

		if (tpu_ring_record(ring, job, &res)) {
			error = res.status ? -EIO : 0;
		} else {
			drm_err_ratelimited(&tdev->drm,
					    "queue %u: no completion record for seqno %llu\n",
					    ring->id, job->seqno);
			res.status = TPU_ERR_BUS;
			error = -EIO;
		}
		tpu_job_complete(job, &res, error);
	}
	spin_unlock_irqrestore(&tdev->job_lock, flags);
}

/**
 * tpu_ring_cancel - end every job in the rings when the device goes away or is wedged
 * @tdev: the device, its card stopped or wedged
 * @error: the error of the jobs' fences
 *
 * The jobs end with DRM_TPU_JOB_CANCELED. Jobs not yet in a ring are not affected.
 */
void tpu_ring_cancel(struct tpu_device *tdev, int error)
{
	struct tpu_job *job, *tmp;
	unsigned long flags;
	u32 q;

	spin_lock_irqsave(&tdev->job_lock, flags);
	for (q = 0; q < tdev->num_queues; q++) {
		list_for_each_entry_safe(job, tmp, &tdev->rings[q].inflight, inflight_node) {
			struct tpu_job_result res = { .status = DRM_TPU_JOB_CANCELED };

			tpu_job_complete(job, &res, error);
		}
	}
	spin_unlock_irqrestore(&tdev->job_lock, flags);
}

/**
 * tpu_ring_reset - reset the queue (CONTROL.RESET), leaving it disabled with an empty ring
 * @ring: the ring
 *
 * The job the queue was running, if any, is dropped by the card; other queues go on. The jobs
 * of the ring are still on its list: tpu_ring_recover() ends or rewrites them, then
 * tpu_ring_enable() lets the card fetch again.
 *
 * Return: 0, or -EIO if the queue did not come back empty and without error (then only a
 * reset of the card recovers it).
 */
int tpu_ring_reset(struct tpu_ring *ring)
{
	struct tpu_device *tdev = ring->tdev;
	unsigned long flags;
	u32 status, head;

	tpu_ring_write(ring, TPU_QREG_CONTROL, TPU_QCTRL_RESET);
	status = tpu_ring_read(ring, TPU_QREG_STATUS);
	head = tpu_ring_read(ring, TPU_QREG_RING_HEAD);
	if (status != 0 || head != 0) {
		drm_err(&tdev->drm, "queue %u: status 0x%x, head %u after a queue reset\n",
			ring->id, status, head);
		return -EIO;
	}
	spin_lock_irqsave(&tdev->job_lock, flags);
	ring->tail = 0;
	spin_unlock_irqrestore(&tdev->job_lock, flags);
	return 0;
}

/**
 * tpu_ring_enable - let the card fetch from the ring again after tpu_ring_reset()
 * @ring: the ring, its jobs rewritten by tpu_ring_recover()
 *
 * Return: 0, or -EIO if the queue does not become active.
 */
int tpu_ring_enable(struct tpu_ring *ring)
{
	u32 status;

	tpu_ring_write(ring, TPU_QREG_CONTROL, TPU_QCTRL_ENABLE);
	status = tpu_ring_read(ring, TPU_QREG_STATUS);
	if (status != TPU_QSTAT_ACTIVE) {
		drm_err(&ring->tdev->drm, "queue %u: status 0x%x after enabling it\n", ring->id,
			status);
		return -EIO;
	}
	return 0;
}

/**
 * tpu_ring_recover - after a reset of the queue or of the card, end the job that hung or was
 * running and write the others into the ring again
 * @ring: the ring, empty on the card (reset; programmed again after a reset of the card)
 * @hung: the job that timed out, or NULL
 * @cancel_seqno: seqno of the job the card was running (RUN_SEQNO), ended by a reset on
 *	request; 0 for none
 * @cancel_oldest: the oldest job of the ring was (possibly) running and ends: a reset on request
 *	of a card that does not name its running job
 * @card_ok: whether the queue came back from the reset
 *
 * The card counts as making progress from now on. The jobs the card had retired up to the last
 * tpu_ring_retire() were completed before; a job whose completion record is there, written
 * between that and the reset, completes as it says, and is not run again. @hung, if in this
 * ring and without a record, ends with DRM_TPU_JOB_TIMEOUT and -ETIMEDOUT and counts as a hang;
 * if it has one, or was retired already (both after the hang check), the job after it, which the
 * card may have started, ends with DRM_TPU_JOB_CANCELED and -ECANCELED. So does the job with
 * @cancel_seqno (or, likewise, the one after it if it ended) and, with @cancel_oldest, the oldest
 * job. The innocent jobs are written into the
 * ring again, in their order, with their seqnos and fences; those of a banned context, and all of
 * them if the queue did not come back, end with DRM_TPU_JOB_CANCELED and -ECANCELED.
 * Called with reset_lock held.
 */
void tpu_ring_recover(struct tpu_ring *ring, struct tpu_job *hung, u64 cancel_seqno,
		      bool cancel_oldest, bool card_ok)
{
	struct tpu_device *tdev = ring->tdev;
	struct tpu_job *job, *tmp, *first, *aborted = NULL;
	unsigned long flags;
	LIST_HEAD(jobs);

	spin_lock_irqsave(&tdev->job_lock, flags);
	tdev->last_progress = ktime_get_ns();
	list_splice_init(&ring->inflight, &jobs);
	first = list_first_entry_or_null(&jobs, struct tpu_job, inflight_node);
	/*
	 * @hung, or the job with @cancel_seqno, retired after it was picked: the card may have
	 * started the job after it.
	 */
	if (cancel_oldest ||
	    (hung && hung->base.sched == &ring->sched && list_empty(&hung->inflight_node)) ||
	    (cancel_seqno && first && first->seqno > cancel_seqno))
		aborted = first;
	list_for_each_entry_safe(job, tmp, &jobs, inflight_node) {
		struct tpu_job_result res = {};

		if (tpu_ring_record(ring, job, &res)) {
			if (job == hung || (cancel_seqno && job->seqno == cancel_seqno))
				aborted = list_next_entry(job, inflight_node);
			tpu_job_complete(job, &res, res.status ? -EIO : 0);
		} else if (job == hung) {
			res.status = DRM_TPU_JOB_TIMEOUT;
			tpu_job_count_hang(job);
			tpu_job_complete(job, &res, -ETIMEDOUT);
		} else if (job == aborted || (cancel_seqno && job->seqno == cancel_seqno) ||
			   !card_ok || READ_ONCE(job->ctx->banned)) {
			res.status = DRM_TPU_JOB_CANCELED;
			tpu_job_complete(job, &res, -ECANCELED);
		} else {
			list_del_init(&job->inflight_node);
			tpu_ring_push(ring, job);
		}
	}
	spin_unlock_irqrestore(&tdev->job_lock, flags);
}
