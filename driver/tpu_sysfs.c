// SPDX-License-Identifier: GPL-2.0
/*
 * Sysfs attributes of the card, in /sys/bus/pci/devices/<PCI address>/tpu/, one value per
 * file (docs/driver-sysfs.md lists them): identity, spec version, array geometry, memories,
 * clock, NUMA node, queues and their depth, memory and jobs in use, busy time, resets and
 * the performance counters. The driver core creates them once probe has succeeded and removes
 * them before remove, so the device is bound while they are read.
 */
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/sysfs.h>

#include "tpu_device.h"
#include "tpu_drv.h"
#include "tpu_sysfs.h"

static struct tpu_device *tpu_sysfs_dev(struct device *dev)
{
	return dev_get_drvdata(dev);
}

static ssize_t device_id_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%04x\n", tpu_sysfs_dev(dev)->pdev->device);
}
static DEVICE_ATTR_RO(device_id);

static ssize_t accel_minor_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", tpu_sysfs_dev(dev)->drm.accel->index);
}
static DEVICE_ATTR_RO(accel_minor);

static ssize_t spec_version_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	u32 version = tpu_sysfs_dev(dev)->version;

	return sysfs_emit(buf, "%u.%u\n", version >> 16, version & 0xffff);
}
static DEVICE_ATTR_RO(spec_version);

static ssize_t caps_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	static const struct {
		u32 bit;
		const char *name;
	} caps[] = {
		{ TPU_CAP_INT8, "int8" },
		{ TPU_CAP_BF16, "bf16" },
		{ TPU_CAP_FP32, "fp32" },
		{ TPU_CAP_VPU, "vpu" },
		{ TPU_CAP_TLB_DONE, "tlb_done" },
		{ TPU_CAP_VPU_TRAIN, "vpu_train" },
		{ TPU_CAP_RUN_INFO, "run_info" },
		{ TPU_CAP_ICI, "ici" },
		{ TPU_CAP_ACT_ERF, "act_erf" },
	};
	u32 have = tpu_sysfs_dev(dev)->caps;
	int i, len = 0;

	for (i = 0; i < ARRAY_SIZE(caps); i++)
		if (have & caps[i].bit)
			len += sysfs_emit_at(buf, len, "%s%s", len ? " " : "", caps[i].name);
	return len + sysfs_emit_at(buf, len, "\n");
}
static DEVICE_ATTR_RO(caps);

static ssize_t mxu_rows_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", tpu_sysfs_dev(dev)->mxu_rows);
}
static DEVICE_ATTR_RO(mxu_rows);

static ssize_t mxu_cols_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", tpu_sysfs_dev(dev)->mxu_cols);
}
static DEVICE_ATTR_RO(mxu_cols);

static ssize_t ub_bytes_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", tpu_sysfs_dev(dev)->ub_size);
}
static DEVICE_ATTR_RO(ub_bytes);

static ssize_t acc_bytes_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", tpu_sysfs_dev(dev)->acc_size);
}
static DEVICE_ATTR_RO(acc_bytes);

static ssize_t clock_mhz_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", tpu_sysfs_dev(dev)->clock_mhz);
}
static DEVICE_ATTR_RO(clock_mhz);

static ssize_t contexts_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", tpu_sysfs_dev(dev)->num_ctx);
}
static DEVICE_ATTR_RO(contexts);

static ssize_t resets_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", tpu_sysfs_dev(dev)->reset_count);
}
static DEVICE_ATTR_RO(resets);

static ssize_t numa_node_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", dev_to_node(dev));
}
static DEVICE_ATTR_RO(numa_node);

static ssize_t card_queues_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct tpu_device *tdev = tpu_sysfs_dev(dev);
	u32 queues;
	int idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;
	queues = tpu_read(tdev, TPU_REG_NUM_QUEUES);
	drm_dev_exit(idx);
	return sysfs_emit(buf, "%u\n", queues);
}
static DEVICE_ATTR_RO(card_queues);

static ssize_t queues_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", tpu_sysfs_dev(dev)->num_queues);
}
static DEVICE_ATTR_RO(queues);

static ssize_t ring_entries_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", TPU_RING_ENTRIES);
}
static DEVICE_ATTR_RO(ring_entries);

static ssize_t jobs_in_ring_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct tpu_device *tdev = tpu_sysfs_dev(dev);
	unsigned long flags;
	size_t jobs = 0;
	u32 q;

	spin_lock_irqsave(&tdev->job_lock, flags);
	for (q = 0; q < tdev->num_queues; q++)
		jobs += list_count_nodes(&tdev->rings[q].inflight);
	spin_unlock_irqrestore(&tdev->job_lock, flags);
	return sysfs_emit(buf, "%zu\n", jobs);
}
static DEVICE_ATTR_RO(jobs_in_ring);

static ssize_t jobs_in_flight_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&tpu_sysfs_dev(dev)->limits.jobs));
}
static DEVICE_ATTR_RO(jobs_in_flight);

static ssize_t pinned_bytes_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&tpu_sysfs_dev(dev)->limits.pinned));
}
static DEVICE_ATTR_RO(pinned_bytes);

static ssize_t pinned_limit_bytes_show(struct device *dev, struct device_attribute *attr,
				       char *buf)
{
	return sysfs_emit(buf, "%llu\n", tpu_sysfs_dev(dev)->limits.device_pinned);
}
static DEVICE_ATTR_RO(pinned_limit_bytes);

static ssize_t open_files_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct tpu_device *tdev = tpu_sysfs_dev(dev);
	size_t files;

	mutex_lock(&tdev->files_lock);
	files = list_count_nodes(&tdev->files);
	mutex_unlock(&tdev->files_lock);
	return sysfs_emit(buf, "%zu\n", files);
}
static DEVICE_ATTR_RO(open_files);

static ssize_t busy_ns_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct tpu_device *tdev = tpu_sysfs_dev(dev);
	unsigned long flags;
	u64 busy;

	spin_lock_irqsave(&tdev->job_lock, flags);
	busy = tdev->busy_ns;
	spin_unlock_irqrestore(&tdev->job_lock, flags);
	return sysfs_emit(buf, "%llu\n", busy);
}
static DEVICE_ATTR_RO(busy_ns);

/* A performance counter, counting across resets; the attribute's var is its register. */
static ssize_t tpu_counter_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct tpu_device *tdev = tpu_sysfs_dev(dev);
	u32 reg = (uintptr_t)container_of(attr, struct dev_ext_attribute, attr)->var;
	u64 value;
	int idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;
	value = tpu_device_counter(tdev, reg);
	drm_dev_exit(idx);
	return sysfs_emit(buf, "%llu\n", value);
}

#define TPU_COUNTER_ATTR(name, reg)							\
static struct dev_ext_attribute dev_attr_counter_##name = {				\
	__ATTR(counter_##name, 0444, tpu_counter_show, NULL), (void *)(reg)		\
}

TPU_COUNTER_ATTR(cycles, TPU_REG_CNT_CYCLES);
TPU_COUNTER_ATTR(mxu_busy_cycles, TPU_REG_CNT_MXU_BUSY);
TPU_COUNTER_ATTR(macs, TPU_REG_CNT_MACS);
TPU_COUNTER_ATTR(dma_read_bytes, TPU_REG_CNT_DMA_RD);
TPU_COUNTER_ATTR(dma_write_bytes, TPU_REG_CNT_DMA_WR);
TPU_COUNTER_ATTR(jobs_done, TPU_REG_CNT_JOBS_DONE);
TPU_COUNTER_ATTR(jobs_failed, TPU_REG_CNT_JOBS_FAILED);
TPU_COUNTER_ATTR(mmu_faults, TPU_REG_CNT_MMU_FAULTS);
TPU_COUNTER_ATTR(macs_int8, TPU_REG_CNT_MACS_INT8);
TPU_COUNTER_ATTR(macs_bf16, TPU_REG_CNT_MACS_BF16);
TPU_COUNTER_ATTR(macs_fp32, TPU_REG_CNT_MACS_FP32);
TPU_COUNTER_ATTR(stall_cycles, TPU_REG_CNT_STALL);
TPU_COUNTER_ATTR(tlb_misses, TPU_REG_CNT_TLB_MISSES);

static struct attribute *tpu_sysfs_attrs[] = {
	&dev_attr_device_id.attr,
	&dev_attr_accel_minor.attr,
	&dev_attr_spec_version.attr,
	&dev_attr_caps.attr,
	&dev_attr_mxu_rows.attr,
	&dev_attr_mxu_cols.attr,
	&dev_attr_ub_bytes.attr,
	&dev_attr_acc_bytes.attr,
	&dev_attr_clock_mhz.attr,
	&dev_attr_contexts.attr,
	&dev_attr_numa_node.attr,
	&dev_attr_card_queues.attr,
	&dev_attr_queues.attr,
	&dev_attr_ring_entries.attr,
	&dev_attr_jobs_in_ring.attr,
	&dev_attr_jobs_in_flight.attr,
	&dev_attr_pinned_bytes.attr,
	&dev_attr_pinned_limit_bytes.attr,
	&dev_attr_open_files.attr,
	&dev_attr_busy_ns.attr,
	&dev_attr_resets.attr,
	&dev_attr_counter_cycles.attr.attr,
	&dev_attr_counter_mxu_busy_cycles.attr.attr,
	&dev_attr_counter_macs.attr.attr,
	&dev_attr_counter_dma_read_bytes.attr.attr,
	&dev_attr_counter_dma_write_bytes.attr.attr,
	&dev_attr_counter_jobs_done.attr.attr,
	&dev_attr_counter_jobs_failed.attr.attr,
	&dev_attr_counter_mmu_faults.attr.attr,
	&dev_attr_counter_macs_int8.attr.attr,
	&dev_attr_counter_macs_bf16.attr.attr,
	&dev_attr_counter_macs_fp32.attr.attr,
	&dev_attr_counter_stall_cycles.attr.attr,
	&dev_attr_counter_tlb_misses.attr.attr,
	NULL
};

static const struct attribute_group tpu_sysfs_group = {
	.name = "tpu",
	.attrs = tpu_sysfs_attrs,
};

const struct attribute_group *tpu_sysfs_groups[] = {
	&tpu_sysfs_group,
	&tpu_ici_sysfs_group,
	&tpu_ici_port0_group,
	&tpu_ici_port1_group,
	&tpu_ici_port2_group,
	&tpu_ici_port3_group,
	NULL
};
