// SPDX-License-Identifier: GPL-2.0
/*
 * The card's registers: identification at probe, global reset, programming
 * the context table, the queues and the interrupt mask, and the interrupt handler.
 *
 * A wedged card: when the driver can no longer know what the card reaches (a TLB invalidation
 * that did not complete, a reset of the card that did not take), it gives the card up until the
 * driver is unbound: bus mastering off (pci_clear_master()), the jobs in the rings end with -EIO,
 * new ones are refused, and memory freed from then on is kept (quarantined) until PCI remove has
 * stopped the card. Memory freed while the device is being unplugged, before remove stopped the
 * card, is kept the same way.
 */
#include <linux/interrupt.h>
#include <linux/iopoll.h>

#include "tpu_debugfs.h"
#include "tpu_device.h"
#include "tpu_drv.h"
#include "tpu_ring.h"

/* The card is emulated, possibly under slow TCG: be generous. */
#define TPU_RESET_TIMEOUT_US	(5 * USEC_PER_SEC)
#define TPU_MAX_CTX		65536
#define TPU_IRQ_ALL		(TPU_IRQ_DONE | TPU_IRQ_ERROR)
/*
 * Cards from spec 1.3 (TLB_INVAL_DONE: without it, freed pages cannot be known out of the card's
 * reach) to the current TPU_SPEC_VERSION; 2.0 only added the interconnect (section 10).
 */
#define TPU_SPEC_MAJOR_MIN	1
#define TPU_SPEC_MINOR_MIN	3

int tpu_device_identify(struct tpu_device *tdev)
{
	struct drm_device *drm = &tdev->drm;
	u32 id = tpu_read(tdev, TPU_REG_ID);
	u32 dim;

	if (id != TPU_ID_MAGIC) {
		drm_err(drm, "bad ID register 0x%08x, expected 0x%08x\n", id, TPU_ID_MAGIC);
		return -ENODEV;
	}

	tdev->version = tpu_read(tdev, TPU_REG_VERSION);
	if ((tdev->version >> 16) < TPU_SPEC_MAJOR_MIN ||
	    (tdev->version >> 16) > (TPU_SPEC_VERSION >> 16)) {
		drm_err(drm, "unsupported spec version %u.%u\n", tdev->version >> 16,
			tdev->version & 0xffff);
		return -ENODEV;
	}

	tdev->caps = tpu_read(tdev, TPU_REG_CAPS);
	if (((tdev->version >> 16) == TPU_SPEC_MAJOR_MIN &&
	     (tdev->version & 0xffff) < TPU_SPEC_MINOR_MIN) || !(tdev->caps & TPU_CAP_TLB_DONE)) {
		drm_err(drm, "spec %u.%u card without TLB_INVAL_DONE (spec %u.%u): not supported\n",
			tdev->version >> 16, tdev->version & 0xffff, TPU_SPEC_MAJOR_MIN,
			TPU_SPEC_MINOR_MIN);
		return -ENODEV;
	}
	dim = tpu_read(tdev, TPU_REG_MXU_DIM);
	tdev->mxu_rows = dim >> 16;
	tdev->mxu_cols = dim & 0xffff;
	tdev->ub_size = tpu_read(tdev, TPU_REG_UB_SIZE);
	tdev->acc_size = tpu_read(tdev, TPU_REG_ACC_SIZE);
	tdev->clock_mhz = tpu_read(tdev, TPU_REG_CLOCK_MHZ);
	tdev->ici_info = tdev->caps & TPU_CAP_ICI ? tpu_read(tdev, TPU_REG_ICI_INFO) : 0;
	tdev->num_ctx = min(tpu_read(tdev, TPU_REG_NUM_CTX), TPU_MAX_CTX);

	tdev->num_queues = min(tpu_read(tdev, TPU_REG_NUM_QUEUES), TPU_MAX_QUEUES);
	if (!tdev->num_queues) {
		drm_err(drm, "card has no command queue\n");
		return -ENODEV;
	}
	/* Context 0 is never handed out: a stray ring entry cannot hit a live context. */
	if (tdev->num_ctx < 2) {
		drm_err(drm, "card has %u contexts, need at least 2\n", tdev->num_ctx);
		return -ENODEV;
	}

	drm_info(drm,
		 "TPU spec %u.%u, %ux%u MXU, UB %u KiB, ACC %u KiB, %u MHz, %u contexts, %u queues\n",
		 tdev->version >> 16, tdev->version & 0xffff, tdev->mxu_rows, tdev->mxu_cols,
		 tdev->ub_size / SZ_1K, tdev->acc_size / SZ_1K, tdev->clock_mhz, tdev->num_ctx,
		 tdev->num_queues);
	return 0;
}

/**
 * tpu_device_reset - reset the whole card and wait until it is ready
 * @tdev: the device
 *
 * Afterwards the card executes nothing and touches no host memory until
 * tpu_device_start() programs and enables it again. The performance counters the reset
 * clears are carried over in software.
 *
 * Return: 0, or -ETIMEDOUT if the card did not become ready.
 */
int tpu_device_reset(struct tpu_device *tdev)
{
	u32 status;
	int ret, i;

	mutex_lock(&tdev->counter_lock);
	for (i = 0; i < TPU_NUM_COUNTERS; i++)
		tdev->counter_base[i] += tpu_read64(tdev, TPU_REG_CNT_CYCLES + 8 * i);
	if (tpu_inject(tdev, TPU_INJECT_RESET_FAILS)) {
		ret = -ETIMEDOUT;
	} else {
		tpu_write(tdev, TPU_REG_RESET, TPU_RESET_MAGIC);
		ret = readl_poll_timeout(tdev->regs + TPU_REG_STATUS, status,
					 status & TPU_STATUS_READY, 100, TPU_RESET_TIMEOUT_US);
	}
	mutex_unlock(&tdev->counter_lock);
	if (ret)
		drm_err(&tdev->drm, "card not ready %lu ms after reset\n",
			TPU_RESET_TIMEOUT_US / USEC_PER_MSEC);
	return ret;
}

/**
 * tpu_device_counter - read a performance counter, counting across global resets
 * @tdev: the device
 * @reg: TPU_REG_CNT_*
 *
 * Return: the count.
 */
u64 tpu_device_counter(struct tpu_device *tdev, u32 reg)
{
	u64 value;

	mutex_lock(&tdev->counter_lock);
	value = tdev->counter_base[(reg - TPU_REG_CNT_CYCLES) / 8] + tpu_read64(tdev, reg);
	mutex_unlock(&tdev->counter_lock);
	return value;
}

/**
 * tpu_device_counters - read every performance counter at one instant, across resets
 * @tdev: the device
 * @values: out, TPU_NUM_COUNTERS counts in register order
 */
void tpu_device_counters(struct tpu_device *tdev, u64 *values)
{
	int i;

	mutex_lock(&tdev->counter_lock);
	for (i = 0; i < TPU_NUM_COUNTERS; i++)
		values[i] = tdev->counter_base[i] + tpu_read64(tdev, TPU_REG_CNT_CYCLES + 8 * i);
	mutex_unlock(&tdev->counter_lock);
}

/* Program the context table, the queues and the interrupt mask of a freshly reset card. */
void tpu_device_start(struct tpu_device *tdev)
{
	u32 q;

	tpu_write64(tdev, TPU_REG_CTX_TABLE, tdev->ctx_table_dma);
	for (q = 0; q < tdev->num_queues; q++)
		tpu_ring_start(&tdev->rings[q]);
	tpu_write(tdev, TPU_REG_IRQ_STATUS, TPU_IRQ_ALL);
	tpu_write(tdev, TPU_REG_IRQ_MASK, TPU_IRQ_ALL);
	tpu_write(tdev, TPU_REG_CONTROL, TPU_CONTROL_ENABLE);
}

/* Stop the card: whatever it was doing is aborted, no more interrupts. */
void tpu_device_stop(struct tpu_device *tdev)
{
	tpu_device_reset(tdev);
	tpu_write(tdev, TPU_REG_CONTROL, 0);
	tpu_write(tdev, TPU_REG_IRQ_MASK, 0);
	tpu_write(tdev, TPU_REG_IRQ_STATUS, TPU_IRQ_ALL);
}

/**
 * tpu_device_wedge - give the card up until the driver is unbound
 * @tdev: the device
 * @why: what went wrong, for the kernel log
 *
 * The card may still run a job or use stale translations: bus mastering goes off, the jobs in
 * the rings end with -EIO, SUBMIT and the schedulers refuse new ones, and memory freed from now
 * on is quarantined (tpu_ctx_flush_tlb() no longer vouches for any) until PCI remove.
 */
void tpu_device_wedge(struct tpu_device *tdev, const char *why)
{
	bool wedged;

	spin_lock(&tdev->quarantine_lock);
	wedged = tdev->wedged;
	WRITE_ONCE(tdev->wedged, true);
	spin_unlock(&tdev->quarantine_lock);
	if (wedged)
		return;
	pci_clear_master(tdev->pdev);
	drm_err(&tdev->drm,
		"card wedged: %s; bus mastering off, jobs end with -EIO, freed memory is kept until the driver is unbound\n",
		why);
	tpu_ring_cancel(tdev, -EIO);
}

bool tpu_device_wedged(struct tpu_device *tdev)
{
	return READ_ONCE(tdev->wedged);
}

/**
 * tpu_device_quarantine - keep memory the card may still reach until it no longer can
 * @tdev: the device
 * @deferred: the memory, with its free function
 *
 * Return: true if @deferred is kept, to be freed by PCI remove once the card is stopped; false if
 * the card is stopped already: the caller frees it now.
 */
bool tpu_device_quarantine(struct tpu_device *tdev, struct tpu_deferred *deferred)
{
	bool kept;

	spin_lock(&tdev->quarantine_lock);
	kept = !tdev->card_stopped;
	if (kept) {
		list_add_tail(&deferred->node, &tdev->quarantine);
		tdev->quarantined++;
	}
	spin_unlock(&tdev->quarantine_lock);
	return kept;
}

/**
 * tpu_device_release_quarantine - free the memory kept, the card stopped for good
 * @tdev: the device, in PCI remove (or a failed probe) with the card stopped
 *
 * Memory freed from now on goes at once.
 */
void tpu_device_release_quarantine(struct tpu_device *tdev)
{
	struct tpu_deferred *deferred, *tmp;
	LIST_HEAD(kept);

	spin_lock(&tdev->quarantine_lock);
	tdev->card_stopped = true;
	list_splice_init(&tdev->quarantine, &kept);
	tdev->quarantined = 0;
	spin_unlock(&tdev->quarantine_lock);
	list_for_each_entry_safe(deferred, tmp, &kept, node)
		deferred->free(deferred);
}

/* Entries of the quarantine (debugfs). */
unsigned int tpu_device_quarantined(struct tpu_device *tdev)
{
	unsigned int count;

	spin_lock(&tdev->quarantine_lock);
	count = tdev->quarantined;
	spin_unlock(&tdev->quarantine_lock);
	return count;
}

static void tpu_device_report_error(struct tpu_device *tdev)
{
	u32 q;

	tpu_dbg(&tdev->drm, IRQ, "job failed: error %u on queue %u at 0x%llx\n",
		tpu_read(tdev, TPU_REG_ERR_CODE), tpu_read(tdev, TPU_REG_ERR_QUEUE),
		tpu_read64(tdev, TPU_REG_ERR_ADDR));
	for (q = 0; q < tdev->num_queues; q++)
		if (tpu_read(tdev, TPU_REG_QUEUE(q, TPU_QREG_STATUS)) & TPU_QSTAT_ERROR)
			drm_err_ratelimited(&tdev->drm,
					    "queue %u stopped: bad ring configuration\n", q);
}

/* Both vectors (DONE and ERROR) and a shared INTx line land here. */
static irqreturn_t tpu_irq_handler(int irq, void *arg)
{
	struct tpu_device *tdev = arg;
	u32 status = tpu_read(tdev, TPU_REG_IRQ_STATUS);
	u32 q;

	/* All ones: the card is gone (surprise removal). */
	if (!status || status == U32_MAX)
		return IRQ_NONE;

	/* Acknowledge first: a completion after the ring scan raises a new interrupt. */
	tpu_write(tdev, TPU_REG_IRQ_STATUS, status);
	if (status & TPU_IRQ_ERROR)
		tpu_device_report_error(tdev);
	for (q = 0; q < tdev->num_queues; q++)
		tpu_ring_retire(&tdev->rings[q]);
	return IRQ_HANDLED;
}

/**
 * tpu_irq_init - set up interrupts: two MSI-X vectors, or fewer, down to one shared INTx
 * @tdev: the device
 *
 * Return: 0 or a negative error code.
 */
int tpu_irq_init(struct tpu_device *tdev)
{
	struct pci_dev *pdev = tdev->pdev;
	unsigned long flags;
	int ret, i;

	ret = pci_alloc_irq_vectors(pdev, 1, TPU_MSIX_VECTORS,
				    PCI_IRQ_MSIX | PCI_IRQ_MSI | PCI_IRQ_INTX);
	if (ret < 0) {
		drm_err(&tdev->drm, "no interrupt vectors: %d\n", ret);
		return ret;
	}
	tdev->num_irqs = ret;
	if (tdev->num_irqs < TPU_MSIX_VECTORS || !pdev->msix_enabled)
		drm_info(&tdev->drm, "using %d %s interrupt vector(s)\n", tdev->num_irqs,
			 pdev->msix_enabled ? "MSI-X" : pdev->msi_enabled ? "MSI" : "INTx");

	flags = pdev->msix_enabled || pdev->msi_enabled ? 0 : IRQF_SHARED;
	for (i = 0; i < tdev->num_irqs; i++) {
		ret = request_irq(pci_irq_vector(pdev, i), tpu_irq_handler, flags,
				  TPU_DRIVER_NAME, tdev);
		if (ret) {
			drm_err(&tdev->drm, "request_irq of vector %d: %d\n", i, ret);
			goto err_free;
		}
	}
	return 0;

err_free:
	while (--i >= 0)
		free_irq(pci_irq_vector(pdev, i), tdev);
	pci_free_irq_vectors(pdev);
	return ret;
}

void tpu_irq_fini(struct tpu_device *tdev)
{
	int i;

	for (i = 0; i < tdev->num_irqs; i++)
		free_irq(pci_irq_vector(tdev->pdev, i), tdev);
	pci_free_irq_vectors(tdev->pdev);
}
