// SPDX-License-Identifier: GPL-2.0
/*
 * Hung jobs and resets: the schedulers' timeout handler, the queue reset, the card reset (after
 * a queue reset that failed, or on request through debugfs) and the ban of a context whose jobs
 * keep hanging.
 *
 * Timeout: when the oldest job in a ring has run for job_timeout_ms (the card runs one job at a
 * time: a job waiting for the jobs of other queues is not running, see tpu_job_hung()), the jobs
 * the card has retired are completed first, then that queue alone is reset (CONTROL.RESET) with its
 * scheduler's work stopped (drm_sched_wqueue_stop(); drm_sched_stop() would end the jobs in the
 * ring with -ECANCELED behind the driver's back). That job ends with DRM_TPU_JOB_TIMEOUT (unless
 * it ended after the check, before the reset: then it ends as its completion record says and does
 * not count as a hang, and the job after it, which the card may have started, ends with
 * DRM_TPU_JOB_CANCELED: a job is never run twice); the
 * innocent jobs behind it in the ring, of any file, are written into the ring again and run; jobs
 * not yet written to the ring and the other queues are not affected. Only if the queue does not
 * come back from its reset is the whole card reset, with every scheduler stopped: then the innocent
 * jobs of every ring run again. A reset of the card that does not take wedges the card
 * (tpu_device_wedge()) before any job ends. The timeout handlers of all queues run on one ordered
 * workqueue. A context with TPU_CTX_BAN_HANGS timed-out jobs is banned: its jobs
 * end with DRM_TPU_JOB_CANCELED instead of running and SUBMIT fails with -ECANCELED. A reset
 * requested through debugfs (tpu_job_reset()) resets the queue of the job the card is running
 * (RUN_QUEUE and RUN_SEQNO, spec 1.5), which ends with DRM_TPU_JOB_CANCELED, like a timeout's; on a
 * card that does not name its running job, or runs none, it resets the card, and the oldest job of
 * each ring (one of them was running) ends with DRM_TPU_JOB_CANCELED.
 *
 * Test hooks (tpu_debugfs.c): once armed through debugfs, the next timeout handler holds, before
 * it does anything, until the device is unplugged ("timeout_hold"), so that a test can unbind the
 * driver exactly while the hung job is off the scheduler's pending list; or once the job is back
 * on that list ("pending_hold"), so that a test can have the job end there (free_job must not run
 * before the handler is done with it); or, its job found hung, before the reset until the card
 * retired that job ("hang_hold"), so that a test can have the job end between the check and the
 * reset.
 */
#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>

#include "tpu_debugfs.h"
#include "tpu_device.h"
#include "tpu_drv.h"
#include "tpu_job.h"
#include "tpu_mmu.h"
#include "tpu_reset.h"
#include "tpu_ring.h"

/* When the card could have started @head, the oldest job of its ring. */
static u64 tpu_job_eligible(struct tpu_device *tdev, struct tpu_job *head)
{
	return max(head->pushed, tdev->last_progress);
}

/*
 * Whether the card is running @job and has been for the timeout: the card runs one job at a
 * time, so a job waiting in its ring behind the jobs of other queues is not hung. @job hangs
 * if it is the oldest of its ring, the card has retired nothing for the timeout, and the card
 * picked it: the card, once it is done with a job, starts the oldest entry of the queue of
 * highest PRIORITY among those with entries (of equal PRIORITY, either may be the one).
 */
static bool tpu_job_hung(struct tpu_ring *ring, struct tpu_job *job)
{
	struct tpu_device *tdev = ring->tdev;
	/* The timer fires on a tick: up to one tick early against a clock in ns. */
	u64 picked, timeout_ns = jiffies_to_nsecs(ring->sched.timeout - 1);
	unsigned long flags;
	bool hung = false;
	u32 q;

	spin_lock_irqsave(&tdev->job_lock, flags);
	if (list_first_entry_or_null(&ring->inflight, struct tpu_job, inflight_node) != job ||
	    ktime_get_ns() - tdev->last_progress < timeout_ns)
		goto out;
	picked = tpu_job_eligible(tdev, job);
	for (q = 0; q < tdev->num_queues; q++) {
		struct tpu_ring *other = &tdev->rings[q];
		struct tpu_job *head = list_first_entry_or_null(&other->inflight, struct tpu_job,
								 inflight_node);
		u64 eligible;

		if (!head || other == ring)
			continue;
		eligible = tpu_job_eligible(tdev, head);
		if (eligible < picked ||
		    (eligible == picked && other->priority > ring->priority))
			goto out;
	}
	hung = true;
out:
	spin_unlock_irqrestore(&tdev->job_lock, flags);
	return hung;
}

/**
 * tpu_job_count_hang - count a job that timed out (tpu_ring_recover())
 * @hung: the job
 *
 * Its context is banned once it has TPU_CTX_BAN_HANGS of them. Called with reset_lock held.
 */
void tpu_job_count_hang(struct tpu_job *hung)
{
	struct tpu_ctx *ctx = hung->ctx;

	if (++ctx->hangs >= TPU_CTX_BAN_HANGS && !ctx->banned) {
		WRITE_ONCE(ctx->banned, true);
		drm_warn(&hung->tdev->drm, "context %u banned after %u timed-out jobs\n", ctx->id,
			 ctx->hangs);
	}
}

/*
 * Reset the card, end the job that hung (@hung, with DRM_TPU_JOB_TIMEOUT) or, on request, the
 * job the card was running (@canceled, its seqno in @seqno) or, if neither is given, the oldest
 * job of each ring (one of them was running), those two with DRM_TPU_JOB_CANCELED, and run the
 * innocent jobs of every ring again. Every scheduler's work is stopped meanwhile, so nothing
 * else enters a ring. Called with reset_lock held.
 */
static void tpu_job_reset_card(struct tpu_device *tdev, struct tpu_job *hung,
			       struct tpu_ring *canceled, u64 seqno)
{
	u32 q;
	int ret;

	lockdep_assert_held(&tdev->reset_lock);
	for (q = 0; q < tdev->num_queues; q++) {
		drm_sched_wqueue_stop(&tdev->rings[q].sched);
		/* Jobs the card has retired complete first, with their true status. */
		tpu_ring_retire(&tdev->rings[q]);
	}
	tdev->reset_count++;
	tdev->card_resets++;
	/* The card stops touching memory before the jobs' fences signal. */
	ret = tpu_device_reset(tdev);
	if (ret)
		/* It may still run a job: give it up before any job's memory is freed. */
		tpu_device_wedge(tdev, "a reset of the card did not take");
	else
		tpu_device_start(tdev);
	for (q = 0; q < tdev->num_queues; q++) {
		struct tpu_ring *ring = &tdev->rings[q];

		tpu_ring_recover(ring, hung, ring == canceled ? seqno : 0, !hung && !canceled,
				 !ret);
		drm_sched_wqueue_start(&ring->sched);
	}
}

/*
 * Reset the queue of @ring only, end @hung with DRM_TPU_JOB_TIMEOUT or the job with seqno
 * @seqno (if not 0) with DRM_TPU_JOB_CANCELED and run the innocent jobs behind it again. Called
 * with reset_lock held and the ring's scheduler stopped.
 *
 * Return: 0, or -EIO if the queue did not come back: the card needs a reset.
 */
static int tpu_job_reset_queue(struct tpu_ring *ring, struct tpu_job *hung, u64 seqno)
{
	struct tpu_device *tdev = ring->tdev;
	int ret;

	lockdep_assert_held(&tdev->reset_lock);
	ret = tpu_ring_reset(ring);
	if (ret)
		return ret;
	tdev->reset_count++;
	ring->resets++;
	/* Jobs that retired right before the reset: tpu_ring_recover() finds their records. */
	tpu_ring_recover(ring, hung, seqno, false, true);
	return tpu_ring_enable(ring);
}

/* Release of the hang_hold test hook: the hung job @arg left its ring (the card retired it). */
static bool tpu_job_left_ring(void *arg)
{
	struct tpu_job *job = arg;
	unsigned long flags;
	bool left;

	spin_lock_irqsave(&job->tdev->job_lock, flags);
	left = list_empty(&job->inflight_node);
	spin_unlock_irqrestore(&job->tdev->job_lock, flags);
	return left;
}

/**
 * tpu_reset_timedout - the schedulers' timedout_job: reset the queue of a hung job
 * @sched_job: the oldest job of a scheduler, its timeout expired
 *
 * Return: DRM_GPU_SCHED_STAT_NOMINAL, or DRM_GPU_SCHED_STAT_ENODEV once the device is gone.
 */
enum drm_gpu_sched_stat tpu_reset_timedout(struct drm_sched_job *sched_job)
{
	struct tpu_job *job = to_tpu_job(sched_job);
	struct tpu_device *tdev = job->tdev;
	struct drm_gpu_scheduler *sched = sched_job->sched;
	struct tpu_ring *ring = to_tpu_ring(sched);
	int idx;

	tpu_hold(tdev, TPU_HOLD_TIMEOUT);

	/*
	 * drm_sched took the job off its pending list to call this, so that free_job cannot free
	 * it meanwhile. Once the scheduler's work is stopped free_job cannot run: put the job back
	 * then (as Xe does), so that the scheduler frees it once its fence signals, whatever
	 * happens below.
	 */
	drm_sched_wqueue_stop(sched);
	spin_lock(&sched->job_list_lock);
	list_add(&sched_job->list, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
	tpu_hold(tdev, TPU_HOLD_PENDING);

	/*
	 * PCI remove ends the job with -ENODEV and waits until it is freed. Restarting the
	 * (running) work queues the free_job work: it frees the job if it ended while it was
	 * off the list.
	 */
	if (!drm_dev_enter(&tdev->drm, &idx)) {
		drm_sched_wqueue_start(sched);
		return DRM_GPU_SCHED_STAT_ENODEV;
	}

	mutex_lock(&tdev->reset_lock);
	/* Jobs the card has retired complete first, with their true status. */
	tpu_ring_retire(ring);
	/*
	 * The job may have ended just now, not reached the ring yet, or be waiting for the card
	 * to finish the jobs of other queues: no reset then, the timeout starts again.
	 */
	if (tpu_job_hung(ring, job)) {
		drm_err(&tdev->drm,
			"queue %u: job with seqno %llu timed out after %u ms, resetting the queue\n",
			ring->id, job->seqno, jiffies_to_msecs(sched->timeout));
		tpu_hold_until(tdev, TPU_HOLD_HANG, tpu_job_left_ring, job);
		if (tpu_job_reset_queue(ring, job, 0)) {
			drm_err(&tdev->drm, "queue %u did not recover, resetting the card\n",
				ring->id);
			tpu_job_reset_card(tdev, job, NULL, 0);
		}
	}
	drm_sched_wqueue_start(sched);
	mutex_unlock(&tdev->reset_lock);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/*
 * The queue of the job the card is running and that job's seqno (RUN_QUEUE, RUN_SEQNO, spec
 * 1.5), or NULL if the card runs none or cannot say.
 */
static struct tpu_ring *tpu_job_running(struct tpu_device *tdev, u64 *seqno)
{
	u32 run;

	if (!(tdev->caps & TPU_CAP_RUN_INFO))
		return NULL;
	run = tpu_read(tdev, TPU_REG_RUN_QUEUE);
	if (!(run & TPU_RUN_RUNNING) || (run & TPU_RUN_QUEUE_MASK) >= tdev->num_queues)
		return NULL;
	*seqno = tpu_read64(tdev, TPU_REG_RUN_SEQNO);
	return &tdev->rings[run & TPU_RUN_QUEUE_MASK];
}

/**
 * tpu_job_reset - reset on request, through the job timeout's recovery path
 * @tdev: the device
 *
 * Jobs the card has retired complete normally. If the card names the job it runs, only that
 * job's queue is reset (the whole card if the queue does not come back) and that job ends with
 * DRM_TPU_JOB_CANCELED (if it retired in between, the job after it, which the card may have
 * started, does instead: no job runs twice); otherwise the card is reset and the oldest job of
 * each ring (the card was running one of them) ends with DRM_TPU_JOB_CANCELED. The other jobs
 * in the rings run again, later ones after.
 *
 * Return: 0, or -ENODEV if the device is gone.
 */
int tpu_job_reset(struct tpu_device *tdev)
{
	struct tpu_ring *ring;
	u64 seqno = 0;
	int idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;

	mutex_lock(&tdev->reset_lock);
	ring = tpu_job_running(tdev, &seqno);
	if (ring) {
		drm_info(&tdev->drm, "resetting queue %u (running seqno %llu) on request\n",
			 ring->id, seqno);
		drm_sched_wqueue_stop(&ring->sched);
		/* Jobs the card has retired complete first, with their true status. */
		tpu_ring_retire(ring);
		if (tpu_job_reset_queue(ring, NULL, seqno)) {
			drm_err(&tdev->drm, "queue %u did not recover, resetting the card\n",
				ring->id);
			tpu_job_reset_card(tdev, NULL, ring, seqno);
		}
		drm_sched_wqueue_start(&ring->sched);
	} else {
		drm_info(&tdev->drm, "resetting the card on request\n");
		tpu_job_reset_card(tdev, NULL, NULL, 0);
	}
	mutex_unlock(&tdev->reset_lock);

	drm_dev_exit(idx);
	return 0;
}
