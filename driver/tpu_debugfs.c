// SPDX-License-Identifier: GPL-2.0
/*
 * Debugfs files of the device (/sys/kernel/debug/accel/<PCI address>/):
 * "status": the job the card runs, resets, whether the card is wedged and what is kept in
 * quarantine (tpu_device.c), the performance counters and the state of each queue's ring;
 * "reset": writing 1 resets the queue of the running job, or the card, through the job
 * timeout's recovery path (for tests, tpu_reset.c).
 *
 * Test hooks, only in builds with TPU_TEST_HOOKS (driver/Makefile's, which the VM tests load; not
 * the DKMS package's), all off by default:
 * "timeout_hold", "close_hold", "free_hold", "hang_hold", "last_free_hold", "pending_hold":
 * writing 1 arms the hold, so that the next pass through its point (enum tpu_hold_point) holds
 * until the device is unplugged (PCI remove) or what the point waits for happened (hang_hold: the
 * hung job left its ring), at most TPU_HOLD_MAX_MS, and TPU_HOLD_GRACE_MS more, then disarms; 0
 * disarms it; reading gives 0 (off), 1 (armed) or 2 (holding);
 * "inject_tlb_timeout", "inject_reset_fails": writing 1 makes the next TLB invalidation not
 * complete, the next reset of the card not take (enum tpu_inject_point); reading gives 1 while
 * armed; "inject_slow_end": while it is 1, each job's end (the callback of its finished fence,
 * under the fence's lock) spins TPU_INJECT_DELAY_MS first;
 * "stall_queues": writing 1 stops the card fetching from every ring (CONTROL.ENABLE cleared: it
 * finishes the job it runs, if any, and starts no other), so that jobs written to the rings stay
 * there unstarted, their fences unsignalled, however fast the host; 0 lets it fetch again, and so
 * does the reset of a queue or of the card (the recovery of a job that times out meanwhile);
 * "card_hold", "card_release", on a card with the test-only TEST_HOLD register (QEMU's
 * x-test-hold) only: writing an instruction index N to card_hold arms the card's hold, so that
 * the next job to reach instruction N waits there, started and counted as running by the card,
 * until 1 is written to card_release or a reset of its queue or of the card aborts it; -1
 * disarms the hold (a held job stays held); reading card_hold gives the instruction the held job
 * waits before, or -1 if none is held.
 */
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/list.h>
#include <linux/seq_file.h>
#include <linux/sprintf.h>

#include "tpu_debugfs.h"
#include "tpu_device.h"
#include "tpu_drv.h"
#include "tpu_reset.h"

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
	{ "macs_int8", TPU_REG_CNT_MACS_INT8 },
	{ "macs_bf16", TPU_REG_CNT_MACS_BF16 },
	{ "macs_fp32", TPU_REG_CNT_MACS_FP32 },
	{ "stall_cycles", TPU_REG_CNT_STALL },
	{ "tlb_misses", TPU_REG_CNT_TLB_MISSES },
};

/* The state of queue @q's ring, each line prefixed "queue<q>_". */
static void tpu_debugfs_queue(struct seq_file *m, struct tpu_ring *ring, size_t inflight, u32 tail,
			      u64 seqno)
{
	struct tpu_device *tdev = ring->tdev;
	u32 q = ring->id;

	seq_printf(m, "queue%u_priority: %u\n", q,
		   tpu_read(tdev, TPU_REG_QUEUE(q, TPU_QREG_PRIORITY)));
	seq_printf(m, "queue%u_status: 0x%x\n", q,
		   tpu_read(tdev, TPU_REG_QUEUE(q, TPU_QREG_STATUS)));
	seq_printf(m, "queue%u_ring_head: %u\n", q,
		   tpu_read(tdev, TPU_REG_QUEUE(q, TPU_QREG_RING_HEAD)));
	seq_printf(m, "queue%u_ring_tail: %u\n", q, tail);
	seq_printf(m, "queue%u_last_seqno: %llu\n", q, seqno);
	seq_printf(m, "queue%u_done_seqno: %llu\n", q,
		   tpu_read64(tdev, TPU_REG_QUEUE(q, TPU_QREG_DONE_SEQ)));
	seq_printf(m, "queue%u_jobs_in_ring: %zu\n", q, inflight);
	seq_printf(m, "queue%u_resets: %u\n", q, ring->resets);
}

static int tpu_debugfs_status(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct tpu_device *tdev = to_tpu_device(entry->dev);
	size_t inflight[TPU_MAX_QUEUES], total = 0;
	u32 tail[TPU_MAX_QUEUES], q;
	u64 seqno[TPU_MAX_QUEUES];
	unsigned long flags;
	int i, idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;

	spin_lock_irqsave(&tdev->job_lock, flags);
	for (q = 0; q < tdev->num_queues; q++) {
		inflight[q] = list_count_nodes(&tdev->rings[q].inflight);
		tail[q] = tdev->rings[q].tail;
		seqno[q] = tdev->rings[q].seqno;
		total += inflight[q];
	}
	spin_unlock_irqrestore(&tdev->job_lock, flags);

	seq_printf(m, "status: 0x%x\n", tpu_read(tdev, TPU_REG_STATUS));
	if (tdev->caps & TPU_CAP_RUN_INFO) {
		seq_printf(m, "run_queue: 0x%x\n", tpu_read(tdev, TPU_REG_RUN_QUEUE));
		seq_printf(m, "run_seqno: %llu\n", tpu_read64(tdev, TPU_REG_RUN_SEQNO));
	}
	seq_printf(m, "queues: %u\n", tdev->num_queues);
	seq_printf(m, "jobs_in_ring: %zu\n", total);
	seq_printf(m, "resets: %u\n", tdev->reset_count);
	seq_printf(m, "card_resets: %u\n", tdev->card_resets);
	seq_printf(m, "wedged: %d\n", tpu_device_wedged(tdev));
	seq_printf(m, "quarantined: %u\n", tpu_device_quarantined(tdev));
	mutex_lock(&tdev->tlb_lock);
	seq_printf(m, "tlb_invalidations: %llu\n", tdev->tlb_invalidations);
	mutex_unlock(&tdev->tlb_lock);
	seq_printf(m, "page_tables: %d\n", atomic_read(&tdev->page_tables));
	for (i = 0; i < ARRAY_SIZE(tpu_counters); i++)
		seq_printf(m, "%s: %llu\n", tpu_counters[i].name,
			   tpu_device_counter(tdev, tpu_counters[i].reg));
	for (q = 0; q < tdev->num_queues; q++)
		tpu_debugfs_queue(m, &tdev->rings[q], inflight[q], tail[q], seqno[q]);

	drm_dev_exit(idx);
	return 0;
}

static const struct drm_debugfs_info tpu_debugfs_list[] = {
	{ "status", tpu_debugfs_status, 0 },
};

static ssize_t tpu_debugfs_reset_write(struct file *file, const char __user *buf, size_t len,
				       loff_t *pos)
{
	struct tpu_device *tdev = file->private_data;
	unsigned int value;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &value);
	if (ret)
		return ret;
	if (value != 1)
		return -EINVAL;
	ret = tpu_job_reset(tdev);
	return ret ? ret : len;
}

static const struct file_operations tpu_debugfs_reset_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = tpu_debugfs_reset_write,
};

#ifdef TPU_TEST_HOOKS
/* The longest a hold waits for the device to be unplugged, and how long it holds after. */
#define TPU_HOLD_MAX_MS		60000
#define TPU_HOLD_GRACE_MS	500

static const char *const tpu_hold_names[TPU_HOLD_COUNT] = {
	[TPU_HOLD_TIMEOUT] = "timeout_hold",
	[TPU_HOLD_CLOSE] = "close_hold",
	[TPU_HOLD_FREE] = "free_hold",
	[TPU_HOLD_HANG] = "hang_hold",
	[TPU_HOLD_LAST_FREE] = "last_free_hold",
	[TPU_HOLD_PENDING] = "pending_hold",
};

static const char *const tpu_inject_names[TPU_INJECT_COUNT] = {
	[TPU_INJECT_TLB_TIMEOUT] = "inject_tlb_timeout",
	[TPU_INJECT_RESET_FAILS] = "inject_reset_fails",
	[TPU_INJECT_SLOW_END] = "inject_slow_end",
};

/**
 * tpu_hold_until - hold here if the test hook of @point is armed
 * @tdev: the device
 * @point: where the caller is
 * @released: if not NULL, also stops the hold once it returns true
 * @arg: its argument
 *
 * Holds until the device is unplugged (or @released, or TPU_HOLD_MAX_MS passed), then
 * TPU_HOLD_GRACE_MS more, so that PCI remove gets as far as it goes without waiting for the
 * caller. The kernel log says when the hold starts and ends (for a test whose device is gone).
 */
void tpu_hold_until(struct tpu_device *tdev, enum tpu_hold_point point,
		    bool (*released)(void *arg), void *arg)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(TPU_HOLD_MAX_MS);

	if (atomic_cmpxchg(&tdev->hold[point], TPU_HOLD_ARMED, TPU_HOLD_HOLDING) !=
	    TPU_HOLD_ARMED)
		return;
	drm_info(&tdev->drm, "%s: holding\n", tpu_hold_names[point]);
	while (!drm_dev_is_unplugged(&tdev->drm) && !(released && released(arg)) &&
	       time_before(jiffies, deadline))
		msleep(20);
	msleep(TPU_HOLD_GRACE_MS);
	drm_info(&tdev->drm, "%s: let go\n", tpu_hold_names[point]);
	atomic_set(&tdev->hold[point], TPU_HOLD_OFF);
}

/**
 * tpu_inject - whether the failure @point is armed, disarming it
 * @tdev: the device
 * @point: the failure
 *
 * Return: true once after debugfs armed it.
 */
bool tpu_inject(struct tpu_device *tdev, enum tpu_inject_point point)
{
	if (!atomic_cmpxchg(&tdev->inject[point], 1, 0))
		return false;
	drm_info(&tdev->drm, "%s: injecting the failure\n", tpu_inject_names[point]);
	return true;
}

/* How long a delay injected in atomic context spins. */
#define TPU_INJECT_DELAY_MS	50

/**
 * tpu_inject_delay - spin TPU_INJECT_DELAY_MS if the slowness @point is armed
 * @tdev: the device
 * @point: the slowness, on until debugfs disarms it
 *
 * May be called in atomic context.
 */
void tpu_inject_delay(struct tpu_device *tdev, enum tpu_inject_point point)
{
	if (atomic_read(&tdev->inject[point]))
		mdelay(TPU_INJECT_DELAY_MS);
}

static ssize_t tpu_debugfs_hook_read(struct file *file, char __user *buf, size_t len,
				     loff_t *pos)
{
	atomic_t *hook = file->private_data;
	char text[4];
	int n;

	n = scnprintf(text, sizeof(text), "%d\n", atomic_read(hook));
	return simple_read_from_buffer(buf, len, pos, text, n);
}

/* 1 arms the hook (if off), 0 disarms it (if armed: a hold in progress goes on). */
static ssize_t tpu_debugfs_hook_write(struct file *file, const char __user *buf, size_t len,
				      loff_t *pos)
{
	atomic_t *hook = file->private_data;
	unsigned int value;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &value);
	if (ret)
		return ret;
	if (value == 1)
		atomic_cmpxchg(hook, TPU_HOLD_OFF, TPU_HOLD_ARMED);
	else if (!value)
		atomic_cmpxchg(hook, TPU_HOLD_ARMED, TPU_HOLD_OFF);
	else
		return -EINVAL;
	return len;
}

static const struct file_operations tpu_debugfs_hook_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = tpu_debugfs_hook_read,
	.write = tpu_debugfs_hook_write,
	.llseek = default_llseek,
};

/* "stall_queues": 1 clears every queue's CONTROL.ENABLE, 0 sets it again. */
static ssize_t tpu_debugfs_stall_write(struct file *file, const char __user *buf, size_t len,
				       loff_t *pos)
{
	struct tpu_device *tdev = file->private_data;
	unsigned int value;
	int ret, idx;
	u32 q;

	ret = kstrtouint_from_user(buf, len, 0, &value);
	if (ret)
		return ret;
	if (value > 1)
		return -EINVAL;
	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;
	/* Not in the middle of a reset, which disables and enables queues itself. */
	mutex_lock(&tdev->reset_lock);
	if (tpu_device_wedged(tdev)) {
		ret = -EIO;
	} else {
		drm_info(&tdev->drm, "stall_queues: the card %s its rings\n",
			 value ? "stops fetching from" : "fetches from");
		for (q = 0; q < tdev->num_queues; q++)
			tpu_write(tdev, TPU_REG_QUEUE(q, TPU_QREG_CONTROL),
				  value ? 0 : TPU_QCTRL_ENABLE);
	}
	mutex_unlock(&tdev->reset_lock);
	drm_dev_exit(idx);
	return ret ? ret : len;
}

static const struct file_operations tpu_debugfs_stall_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = tpu_debugfs_stall_write,
};

/* "card_hold": the card's TEST_HOLD and TEST_HELD registers (docs/hardware.md). */
static ssize_t tpu_debugfs_card_hold_read(struct file *file, char __user *buf, size_t len,
					  loff_t *pos)
{
	struct tpu_device *tdev = file->private_data;
	char text[16];
	u32 held;
	int n, idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;
	held = tpu_read(tdev, TPU_REG_TEST_HELD);
	drm_dev_exit(idx);
	if (held & TPU_TEST_HELD_HELD)
		n = scnprintf(text, sizeof(text), "%u\n", held & TPU_TEST_HELD_PC_MASK);
	else
		n = scnprintf(text, sizeof(text), "-1\n");
	return simple_read_from_buffer(buf, len, pos, text, n);
}

static ssize_t tpu_debugfs_card_hold_write(struct file *file, const char __user *buf,
					   size_t len, loff_t *pos)
{
	struct tpu_device *tdev = file->private_data;
	int value, ret, idx;

	ret = kstrtoint_from_user(buf, len, 0, &value);
	if (ret)
		return ret;
	/* -1 disarms; compared as int, or -1 would become U32_MAX above the mask */
	if (value < -1 || value > (int)TPU_TEST_HOLD_PC_MASK)
		return -EINVAL;
	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;
	tpu_write(tdev, TPU_REG_TEST_HOLD, value < 0 ? 0 : TPU_TEST_HOLD_ARM | value);
	drm_dev_exit(idx);
	return len;
}

static ssize_t tpu_debugfs_card_release_write(struct file *file, const char __user *buf,
					      size_t len, loff_t *pos)
{
	struct tpu_device *tdev = file->private_data;
	unsigned int value;
	int ret, idx;

	ret = kstrtouint_from_user(buf, len, 0, &value);
	if (ret)
		return ret;
	if (value != 1)
		return -EINVAL;
	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;
	tpu_write(tdev, TPU_REG_TEST_HOLD, TPU_TEST_HOLD_RELEASE);
	drm_dev_exit(idx);
	return len;
}

static const struct file_operations tpu_debugfs_card_release_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = tpu_debugfs_card_release_write,
};

static const struct file_operations tpu_debugfs_card_hold_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = tpu_debugfs_card_hold_read,
	.write = tpu_debugfs_card_hold_write,
	.llseek = default_llseek,
};

static void tpu_debugfs_init_hooks(struct tpu_device *tdev)
{
	int i;

	for (i = 0; i < TPU_HOLD_COUNT; i++)
		debugfs_create_file(tpu_hold_names[i], 0600, tdev->drm.debugfs_root,
				    &tdev->hold[i], &tpu_debugfs_hook_fops);
	for (i = 0; i < TPU_INJECT_COUNT; i++)
		debugfs_create_file(tpu_inject_names[i], 0600, tdev->drm.debugfs_root,
				    &tdev->inject[i], &tpu_debugfs_hook_fops);
	debugfs_create_file("stall_queues", 0200, tdev->drm.debugfs_root, tdev,
			    &tpu_debugfs_stall_fops);
	/* Only a card made for tests has the register (QEMU's x-test-hold). */
	if (tpu_read(tdev, TPU_REG_TEST_HOLD) & TPU_TEST_HOLD_PRESENT) {
		debugfs_create_file("card_hold", 0600, tdev->drm.debugfs_root, tdev,
				    &tpu_debugfs_card_hold_fops);
		debugfs_create_file("card_release", 0200, tdev->drm.debugfs_root, tdev,
				    &tpu_debugfs_card_release_fops);
	}
}
#else
static void tpu_debugfs_init_hooks(struct tpu_device *tdev)
{
}
#endif

/* Called once the card runs, before drm_dev_register(), which creates the "status" file. */
void tpu_debugfs_init(struct tpu_device *tdev)
{
	drm_debugfs_add_files(&tdev->drm, tpu_debugfs_list, ARRAY_SIZE(tpu_debugfs_list));
	debugfs_create_file("reset", 0200, tdev->drm.debugfs_root, tdev, &tpu_debugfs_reset_fops);
	tpu_debugfs_init_hooks(tdev);
}
