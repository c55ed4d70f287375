// SPDX-License-Identifier: GPL-2.0
/*
 * Queue 0's command ring and completion records.
 *
 * The driver writes ring entries at its tail and rings the TAIL doorbell; the card fetches
 * them (HEAD), runs them in order and, for each, writes a completion record into the slot of
 * the ring entry, then advances DONE_SEQ and raises an interrupt. Jobs in the ring are kept
 * on a list, oldest first, under tdev->job_lock; at most TPU_RING_ENTRIES - 1 are there
 * (the scheduler's credit limit), so the ring never overflows.
 */
#include <drm/tpu_accel.h>
#include <linux/dma-mapping.h>

#include "tpu_drv.h"
#include "tpu_job.h"
#include "tpu_mmu.h"
#include "tpu_ring.h"

static_assert((TPU_RING_ENTRIES & (TPU_RING_ENTRIES - 1)) == 0 &&
	      TPU_RING_ENTRIES <= TPU_RING_MAX_ENTRIES);

int tpu_ring_init(struct tpu_device *tdev)
{
	struct tpu_ring *ring = &tdev->ring;
	struct device *dev = &tdev->pdev->dev;

	ring->entries = dmam_alloc_coherent(dev, TPU_RING_ENTRIES * sizeof(*ring->entries),
					    &ring->entries_dma, GFP_KERNEL);
	ring->compl = dmam_alloc_coherent(dev, TPU_RING_ENTRIES * sizeof(*ring->compl),
					  &ring->compl_dma, GFP_KERNEL);
	if (!ring->entries || !ring->compl)
		return -ENOMEM;
	INIT_LIST_HEAD(&ring->inflight);
	return 0;
}

/* Program queue 0 after a reset; the ring is empty. */
void tpu_ring_start(struct tpu_device *tdev)
{
	struct tpu_ring *ring = &tdev->ring;
	unsigned long flags;

	tpu_write64(tdev, TPU_QREG(TPU_QREG_RING_BASE), ring->entries_dma);
	tpu_write(tdev, TPU_QREG(TPU_QREG_RING_SIZE), TPU_RING_ENTRIES);
	tpu_write64(tdev, TPU_QREG(TPU_QREG_COMPL_BASE), ring->compl_dma);

	spin_lock_irqsave(&tdev->job_lock, flags);
	ring->tail = tpu_read(tdev, TPU_QREG(TPU_QREG_RING_HEAD)) % TPU_RING_ENTRIES;
	tpu_write(tdev, TPU_QREG(TPU_QREG_RING_TAIL), ring->tail);
	spin_unlock_irqrestore(&tdev->job_lock, flags);

	tpu_write(tdev, TPU_QREG(TPU_QREG_CONTROL), TPU_QCTRL_ENABLE);
}

/**
 * tpu_ring_push - write a job into the ring and ring the doorbell
 * @tdev: the device
 * @job: the job, with its seqno assigned
 *
 * Called with tdev->job_lock held. The ring has room: see the credit limit.
 */
void tpu_ring_push(struct tpu_device *tdev, struct tpu_job *job)
{
	struct tpu_ring *ring = &tdev->ring;
	struct tpu_ring_entry *entry = &ring->entries[ring->tail];

	lockdep_assert_held(&tdev->job_lock);

	job->slot = ring->tail;
	job->start_ns = ktime_get_ns();
	memset(&ring->compl[job->slot], 0, sizeof(ring->compl[job->slot]));
	memset(entry, 0, sizeof(*entry));
	entry->opcode = TPU_RING_OP_RUN;
	entry->ctx_id = job->ctx->id;
	entry->seqno = job->seqno;
	entry->program_addr = job->program_addr;
	entry->program_size = job->program_size;
	list_add_tail(&job->inflight_node, &ring->inflight);

	ring->tail = (ring->tail + 1) % TPU_RING_ENTRIES;
	/* writel() orders the entry's stores before the doorbell. */
	tpu_write(tdev, TPU_QREG(TPU_QREG_RING_TAIL), ring->tail);
}

/**
 * tpu_ring_retire - complete the jobs the card has retired (up to DONE_SEQ)
 * @tdev: the device
 *
 * Each job's result comes from the completion record in its slot.
 */
void tpu_ring_retire(struct tpu_device *tdev)
{
	struct tpu_ring *ring = &tdev->ring;
	struct tpu_job *job, *tmp;
	unsigned long flags;
	u64 done_seq;

	spin_lock_irqsave(&tdev->job_lock, flags);
	/* readq() orders the register read before the reads of the records. */
	done_seq = tpu_read64(tdev, TPU_QREG(TPU_QREG_DONE_SEQ));
	list_for_each_entry_safe(job, tmp, &ring->inflight, inflight_node) {
		const struct tpu_completion *rec = &ring->compl[job->slot];
		struct tpu_job_result res = {};
		int error;

		if (job->seqno > done_seq)
			break;

		if ((READ_ONCE(rec->flags) & TPU_COMPL_VALID) && rec->seqno == job->seqno) {
			res.status = rec->status;
			res.error_pc = rec->error_pc;
			res.fault_addr = rec->fault_addr;
			res.cycles = rec->cycles;
			res.macs = rec->macs;
			res.mxu_busy_cycles = rec->mxu_busy_cycles;
			res.stall_cycles = rec->stall_cycles;
			error = res.status ? -EIO : 0;
		} else {
			drm_err_ratelimited(&tdev->drm, "no completion record for seqno %llu\n",
					    job->seqno);
			res.status = TPU_ERR_BUS;
			error = -EIO;
		}
		tpu_job_complete(job, &res, error);
	}
	spin_unlock_irqrestore(&tdev->job_lock, flags);
}

/**
 * tpu_ring_cancel - end every job in the ring when the device goes away
 * @tdev: the device, stopped
 * @error: the error of the jobs' fences
 *
 * The jobs end with DRM_TPU_JOB_CANCELED. Jobs not yet in the ring are not affected.
 */
void tpu_ring_cancel(struct tpu_device *tdev, int error)
{
	struct tpu_ring *ring = &tdev->ring;
	struct tpu_job *job, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&tdev->job_lock, flags);
	list_for_each_entry_safe(job, tmp, &ring->inflight, inflight_node) {
		struct tpu_job_result res = { .status = DRM_TPU_JOB_CANCELED };

		tpu_job_complete(job, &res, error);
	}
	spin_unlock_irqrestore(&tdev->job_lock, flags);
}

/**
 * tpu_ring_recover - after a reset of the card, end the job it was running and run the
 * others again
 * @tdev: the device, its queue programmed again (empty ring) if @card_ok
 * @hung: the job that timed out, or NULL: then the oldest job in the ring was running
 * @card_ok: whether the card came back from the reset
 *
 * The jobs the card had retired were completed before. The job the card was running ends
 * with DRM_TPU_JOB_TIMEOUT and -ETIMEDOUT (@hung) or DRM_TPU_JOB_CANCELED and -ECANCELED.
 * The innocent jobs behind it are written into the ring again, in their order, with their
 * seqnos and fences; those of a banned context, and all of them if the card did not come
 * back, end with DRM_TPU_JOB_CANCELED and -ECANCELED.
 */
void tpu_ring_recover(struct tpu_device *tdev, struct tpu_job *hung, bool card_ok)
{
	struct tpu_ring *ring = &tdev->ring;
	struct tpu_job *job, *tmp, *aborted;
	unsigned long flags;
	LIST_HEAD(jobs);

	spin_lock_irqsave(&tdev->job_lock, flags);
	list_splice_init(&ring->inflight, &jobs);
	aborted = hung ?: list_first_entry_or_null(&jobs, struct tpu_job, inflight_node);
	list_for_each_entry_safe(job, tmp, &jobs, inflight_node) {
		struct tpu_job_result res = {};

		if (job == hung) {
			res.status = DRM_TPU_JOB_TIMEOUT;
			tpu_job_complete(job, &res, -ETIMEDOUT);
		} else if (job == aborted || !card_ok || READ_ONCE(job->ctx->banned)) {
			res.status = DRM_TPU_JOB_CANCELED;
			tpu_job_complete(job, &res, -ECANCELED);
		} else {
			list_del_init(&job->inflight_node);
			tpu_ring_push(tdev, job);
		}
	}
	spin_unlock_irqrestore(&tdev->job_lock, flags);
}
