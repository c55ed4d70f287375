// SPDX-License-Identifier: GPL-2.0
/*
 * Debugfs files of the device (/sys/kernel/debug/accel/<minor>/):
 * "status": queue 0's ring state, resets and the performance counters.
 */
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <linux/list.h>
#include <linux/seq_file.h>

#include "tpu_debugfs.h"
#include "tpu_device.h"
#include "tpu_drv.h"

static const struct {
	const char *name;
	u32 reg;
} tpu_counters[] = {
	{ "cycles", TPU_REG_CNT_CYCLES },
	{ "mxu_busy_cycles", TPU_REG_CNT_MXU_BUSY },
	{ "macs", TPU_REG_CNT_MACS },
	{ "dma_read_bytes", TPU_REG_CNT_DMA_RD },
	{ "dma_write_bytes", TPU_REG_CNT_DMA_WR },
	{ "jobs_done", TPU_REG_CNT_JOBS_DONE },
	{ "jobs_failed", TPU_REG_CNT_JOBS_FAILED },
	{ "mmu_faults", TPU_REG_CNT_MMU_FAULTS },
};

static int tpu_debugfs_status(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct tpu_device *tdev = to_tpu_device(entry->dev);
	unsigned long flags;
	size_t inflight;
	u32 tail;
	u64 seqno;
	int i, idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;

	spin_lock_irqsave(&tdev->job_lock, flags);
	inflight = list_count_nodes(&tdev->ring.inflight);
	tail = tdev->ring.tail;
	seqno = tdev->ring.seqno;
	spin_unlock_irqrestore(&tdev->job_lock, flags);

	seq_printf(m, "status: 0x%x\n", tpu_read(tdev, TPU_REG_STATUS));
	seq_printf(m, "queue_status: 0x%x\n", tpu_read(tdev, TPU_QREG(TPU_QREG_STATUS)));
	seq_printf(m, "ring_head: %u\n", tpu_read(tdev, TPU_QREG(TPU_QREG_RING_HEAD)));
	seq_printf(m, "ring_tail: %u\n", tail);
	seq_printf(m, "last_seqno: %llu\n", seqno);
	seq_printf(m, "done_seqno: %llu\n", tpu_read64(tdev, TPU_QREG(TPU_QREG_DONE_SEQ)));
	seq_printf(m, "jobs_in_ring: %zu\n", inflight);
	seq_printf(m, "resets: %u\n", tdev->reset_count);
	for (i = 0; i < ARRAY_SIZE(tpu_counters); i++)
		seq_printf(m, "%s: %llu\n", tpu_counters[i].name,
			   tpu_device_counter(tdev, tpu_counters[i].reg));

	drm_dev_exit(idx);
	return 0;
}

static const struct drm_debugfs_info tpu_debugfs_list[] = {
	{ "status", tpu_debugfs_status, 0 },
};

/* Called before drm_dev_register(), which creates the files. */
void tpu_debugfs_init(struct tpu_device *tdev)
{
	drm_debugfs_add_files(&tdev->drm, tpu_debugfs_list, ARRAY_SIZE(tpu_debugfs_list));
}
