// SPDX-License-Identifier: GPL-2.0
/*
 * Per-file usage statistics, printed by drm_show_fdinfo() into /proc/<pid>/fdinfo/<fd> after
 * the DRM core's drm-driver and drm-client-id (Documentation/gpu/drm-usage-stats.rst):
 *
 *   drm-engine-mxu     ns the card spent on the file's jobs
 *   drm-cycles-mxu     modelled cycles of the file's jobs (completion records)
 *   drm-maxfreq-mxu    the card's modelled clock
 *   drm-cycles-ici     modelled cycles the file's jobs kept the card's link units busy
 *   drm-maxfreq-ici    the card's modelled clock
 *   tpu-ici-tx-bytes   bytes the file's jobs sent on the card's links
 *   tpu-ici-rx-bytes   bytes the file's jobs received from them
 *                      (the ici keys on a card on a fabric with TPU_CAP_COMPL_LINK, spec 2.4)
 *   drm-total-memory, drm-shared-memory, drm-active-memory, drm-resident-memory:
 *                      the file's buffer objects (drm_show_memory_stats())
 *
 * Busy time: the ring runs its jobs in order, so a job is busy from when it was written to
 * the ring or the job before it was retired, whichever was later, until it is retired.
 * Jobs retired in one batch after the card finished them share the time to the batch.
 */
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <linux/ktime.h>
#include <linux/minmax.h>

#include "tpu_drv.h"
#include "tpu_fdinfo.h"
#include "tpu_job.h"
#include "tpu_mmu.h"

/**
 * tpu_fdinfo_job_end - account a job that leaves its ring, to its file's context
 * @job: the job, leaving the ring
 * @res: how it ended, with its modelled cycles
 *
 * Called with tdev->job_lock held.
 */
void tpu_fdinfo_job_end(struct tpu_job *job, const struct tpu_job_result *res)
{
	struct tpu_device *tdev = job->tdev;
	u64 now = ktime_get_ns();
	u64 start = max(job->pushed, tdev->last_end_ns);

	lockdep_assert_held(&job->tdev->job_lock);
	if (now > start) {
		atomic64_add(now - start, &job->ctx->busy_ns);
		tdev->busy_ns += now - start;
	}
	atomic64_add(res->cycles, &job->ctx->cycles);
	atomic64_add(res->link_cycles, &job->ctx->link_cycles);
	atomic64_add(res->link_tx_bytes, &job->ctx->link_tx_bytes);
	atomic64_add(res->link_rx_bytes, &job->ctx->link_rx_bytes);
	tdev->last_end_ns = now;
}

/* drm_driver.show_fdinfo */
void tpu_fdinfo_show(struct drm_printer *p, struct drm_file *file)
{
	struct tpu_file *tfile = file->driver_priv;
	struct tpu_device *tdev = tfile->tdev;

	drm_printf(p, "drm-engine-mxu:\t%llu ns\n", (u64)atomic64_read(&tfile->ctx->busy_ns));
	drm_printf(p, "drm-cycles-mxu:\t%llu\n", (u64)atomic64_read(&tfile->ctx->cycles));
	drm_printf(p, "drm-maxfreq-mxu:\t%u MHz\n", tdev->clock_mhz);
	if (tdev->ici_info & TPU_ICI_INFO_PORTS_MASK && tdev->caps & TPU_CAP_COMPL_LINK) {
		struct tpu_ctx *ctx = tfile->ctx;

		drm_printf(p, "drm-cycles-ici:\t%llu\n", (u64)atomic64_read(&ctx->link_cycles));
		drm_printf(p, "drm-maxfreq-ici:\t%u MHz\n", tdev->clock_mhz);
		drm_printf(p, "tpu-ici-tx-bytes:\t%llu\n", (u64)atomic64_read(&ctx->link_tx_bytes));
		drm_printf(p, "tpu-ici-rx-bytes:\t%llu\n", (u64)atomic64_read(&ctx->link_rx_bytes));
	}
	drm_show_memory_stats(p, file);
}
