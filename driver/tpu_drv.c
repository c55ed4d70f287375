// SPDX-License-Identifier: GPL-2.0
/*
 * Module and PCI driver of the emulated TPU card: probe and remove, the DRM
 * accel driver (/dev/accel/accelN: file open/close, the ioctl table), GET_PARAM and the
 * counters snapshot.
 */
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/tpu_accel.h>
#include <linux/dma-mapping.h>
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/uaccess.h>

#include "tpu_debugfs.h"
#include "tpu_device.h"
#include "tpu_drv.h"
#include "tpu_fdinfo.h"
#include "tpu_gem.h"
#include "tpu_job.h"
#include "tpu_mmu.h"
#include "tpu_ring.h"
#include "tpu_sysfs.h"

#ifndef __LITTLE_ENDIAN
#error "the card's structures in host memory are little-endian, like this driver's host"
#endif
/* DONE_SEQ, RUN_SEQNO and the counters are read with one readq(): no tearing. */
#ifndef CONFIG_64BIT
#error "the driver reads and writes the card's 64-bit registers with readq()/writeq()"
#endif

unsigned int tpu_debug_mask;
module_param_named(debug, tpu_debug_mask, uint, 0644);
MODULE_PARM_DESC(debug,
		 "Debug messages by category (bitmask): 0x1 ioctl, 0x2 job, 0x4 memory, 0x8 sync, 0x10 card errors, 0x20 limits");

/* Page-table entries hold bits 51..12 of a physical address. */
#define TPU_DMA_BITS		52

static int tpu_read_counter(struct tpu_device *tdev, u32 reg, u64 *value)
{
	int idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;
	*value = tpu_device_counter(tdev, reg);
	drm_dev_exit(idx);
	return 0;
}

static int tpu_get_param_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct tpu_device *tdev = to_tpu_device(drm);
	struct drm_tpu_get_param *args = data;

	if (args->pad) {
		tpu_dbg(drm, IOCTL, "get_param: pad 0x%x, must be 0\n", args->pad);
		return -EINVAL;
	}

	switch (args->param) {
	case DRM_TPU_PARAM_DEVICE_ID:
		args->value = tdev->pdev->device;
		break;
	case DRM_TPU_PARAM_SPEC_VERSION:
		args->value = tdev->version;
		break;
	case DRM_TPU_PARAM_CAPS:
		args->value = tdev->caps;
		break;
	case DRM_TPU_PARAM_MXU_ROWS:
		args->value = tdev->mxu_rows;
		break;
	case DRM_TPU_PARAM_MXU_COLS:
		args->value = tdev->mxu_cols;
		break;
	case DRM_TPU_PARAM_UB_SIZE:
		args->value = tdev->ub_size;
		break;
	case DRM_TPU_PARAM_ACC_SIZE:
		args->value = tdev->acc_size;
		break;
	case DRM_TPU_PARAM_CLOCK_MHZ:
		args->value = tdev->clock_mhz;
		break;
	case DRM_TPU_PARAM_VA_START:
		args->value = TPU_VA_START;
		break;
	case DRM_TPU_PARAM_VA_SIZE:
		args->value = TPU_VA_SIZE;
		break;
	case DRM_TPU_PARAM_CNT_CYCLES:
		return tpu_read_counter(tdev, TPU_REG_CNT_CYCLES, &args->value);
	case DRM_TPU_PARAM_CNT_MACS:
		return tpu_read_counter(tdev, TPU_REG_CNT_MACS, &args->value);
	case DRM_TPU_PARAM_CNT_JOBS_DONE:
		return tpu_read_counter(tdev, TPU_REG_CNT_JOBS_DONE, &args->value);
	case DRM_TPU_PARAM_CNT_JOBS_FAILED:
		return tpu_read_counter(tdev, TPU_REG_CNT_JOBS_FAILED, &args->value);
	case DRM_TPU_PARAM_CNT_MACS_INT8:
		return tpu_read_counter(tdev, TPU_REG_CNT_MACS_INT8, &args->value);
	case DRM_TPU_PARAM_CNT_MACS_BF16:
		return tpu_read_counter(tdev, TPU_REG_CNT_MACS_BF16, &args->value);
	case DRM_TPU_PARAM_CNT_MACS_FP32:
		return tpu_read_counter(tdev, TPU_REG_CNT_MACS_FP32, &args->value);
	case DRM_TPU_PARAM_CNT_STALL:
		return tpu_read_counter(tdev, TPU_REG_CNT_STALL, &args->value);
	case DRM_TPU_PARAM_CNT_TLB_MISSES:
		return tpu_read_counter(tdev, TPU_REG_CNT_TLB_MISSES, &args->value);
	case DRM_TPU_PARAM_NUM_QUEUES:
		args->value = tdev->num_queues;
		break;
	default:
		tpu_dbg(drm, IOCTL, "get_param: unknown param %u\n", args->param);
		return -EINVAL;
	}
	return 0;
}

/* The uapi's status and capability values are the card's. */
#define TPU_UAPI_IS_HW(uapi, hw)	static_assert((uapi) == (hw))
TPU_UAPI_IS_HW(DRM_TPU_STATUS_NONE, TPU_ERR_NONE);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_BAD_OPCODE, TPU_ERR_BAD_OPCODE);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_BAD_OPERAND, TPU_ERR_BAD_OPERAND);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_UB_RANGE, TPU_ERR_UB_RANGE);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_ACC_RANGE, TPU_ERR_ACC_RANGE);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_MMU_FAULT, TPU_ERR_MMU_FAULT);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_BUS, TPU_ERR_BUS);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_BAD_CTX, TPU_ERR_BAD_CTX);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_PROGRAM, TPU_ERR_PROGRAM);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_RING_ENTRY, TPU_ERR_RING_ENTRY);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_NO_WEIGHTS, TPU_ERR_NO_WEIGHTS);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_ABORTED, TPU_ERR_ABORTED);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_LINK_DOWN, TPU_ERR_LINK_DOWN);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_LINK_MISMATCH, TPU_ERR_LINK_MISMATCH);
TPU_UAPI_IS_HW(DRM_TPU_STATUS_LINK_PARTIAL, TPU_ERR_LINK_PARTIAL);
TPU_UAPI_IS_HW(DRM_TPU_CAP_INT8, TPU_CAP_INT8);
TPU_UAPI_IS_HW(DRM_TPU_CAP_BF16, TPU_CAP_BF16);
TPU_UAPI_IS_HW(DRM_TPU_CAP_FP32, TPU_CAP_FP32);
TPU_UAPI_IS_HW(DRM_TPU_CAP_VPU, TPU_CAP_VPU);
TPU_UAPI_IS_HW(DRM_TPU_CAP_TLB_DONE, TPU_CAP_TLB_DONE);
TPU_UAPI_IS_HW(DRM_TPU_CAP_VPU_TRAIN, TPU_CAP_VPU_TRAIN);
TPU_UAPI_IS_HW(DRM_TPU_CAP_RUN_INFO, TPU_CAP_RUN_INFO);
TPU_UAPI_IS_HW(DRM_TPU_CAP_ICI, TPU_CAP_ICI);
TPU_UAPI_IS_HW(DRM_TPU_CAP_ACT_ERF, TPU_CAP_ACT_ERF);
TPU_UAPI_IS_HW(DRM_TPU_CAP_COMPL_LINK, TPU_CAP_COMPL_LINK);
/* struct drm_tpu_counters holds the counter registers in their order. */
static_assert(sizeof(struct drm_tpu_counters) == TPU_NUM_COUNTERS * sizeof(u64) &&
	      offsetof(struct drm_tpu_counters, tlb_misses) ==
	      TPU_REG_CNT_TLB_MISSES - TPU_REG_CNT_CYCLES);

static int tpu_counters_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct tpu_device *tdev = to_tpu_device(drm);
	struct drm_tpu_get_counters *args = data;
	u64 values[TPU_NUM_COUNTERS];
	u32 size;
	int idx;

	if (args->pad) {
		tpu_dbg(drm, IOCTL, "counters: pad 0x%x, must be 0\n", args->pad);
		return -EINVAL;
	}
	if (!args->size || args->size % sizeof(u64)) {
		tpu_dbg(drm, IOCTL, "counters: size %u not a non-zero multiple of 8\n", args->size);
		return -EINVAL;
	}
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	tpu_device_counters(tdev, values);
	drm_dev_exit(idx);

	size = min_t(u32, args->size, sizeof(values));
	if (copy_to_user(u64_to_user_ptr(args->counters), values, size)) {
		tpu_dbg(drm, IOCTL, "counters: cannot write %u bytes at 0x%llx\n", size,
			args->counters);
		return -EFAULT;
	}
	args->size = size;
	return 0;
}

static int tpu_open(struct drm_device *drm, struct drm_file *file)
{
	struct tpu_file *tfile;
	int ret;

	tfile = kzalloc(sizeof(*tfile), GFP_KERNEL);
	if (!tfile)
		return -ENOMEM;
	tfile->tdev = to_tpu_device(drm);

	tfile->ctx = tpu_ctx_create(tfile->tdev, current_euid());
	if (IS_ERR(tfile->ctx)) {
		ret = PTR_ERR(tfile->ctx);
		tpu_dbg(drm, MEM, "open: no device context: %d\n", ret);
		goto err_free;
	}
	ret = tpu_job_open(tfile);
	if (ret)
		goto err_put_ctx;

	file->driver_priv = tfile;
	return 0;

err_put_ctx:
	tpu_ctx_put(tfile->ctx);
err_free:
	kfree(tfile);
	return ret;
}

static void tpu_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct tpu_file *tfile = file->driver_priv;

	tpu_job_close(tfile);
	tpu_ctx_put(tfile->ctx);
	kfree(tfile);
}

static const struct drm_ioctl_desc tpu_ioctls[] = {
	DRM_IOCTL_DEF_DRV(TPU_GET_PARAM, tpu_get_param_ioctl, 0),
	DRM_IOCTL_DEF_DRV(TPU_BO_CREATE, tpu_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(TPU_BO_INFO, tpu_bo_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(TPU_SUBMIT, tpu_submit_ioctl, 0),
	DRM_IOCTL_DEF_DRV(TPU_WAIT, tpu_wait_ioctl, 0),
	DRM_IOCTL_DEF_DRV(TPU_COUNTERS, tpu_counters_ioctl, 0),
};

static const struct file_operations tpu_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_driver tpu_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = tpu_open,
	.postclose = tpu_postclose,
	.show_fdinfo = tpu_fdinfo_show,
	.gem_create_object = tpu_gem_create_object,
	.ioctls = tpu_ioctls,
	.num_ioctls = ARRAY_SIZE(tpu_ioctls),
	.fops = &tpu_fops,
	.name = TPU_DRIVER_NAME,
	.desc = "Emulated TPU accelerator",
	.date = "20251130",
	.major = 1,
	.minor = 1,
};

static int tpu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct tpu_device *tdev;
	int ret;

	tdev = devm_drm_dev_alloc(&pdev->dev, &tpu_drm_driver, struct tpu_device, drm);
	if (IS_ERR(tdev))
		return PTR_ERR(tdev);
	tdev->pdev = pdev;
	pci_set_drvdata(pdev, tdev);
	spin_lock_init(&tdev->job_lock);
	spin_lock_init(&tdev->fence_lock);
	ret = drmm_mutex_init(&tdev->drm, &tdev->counter_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&tdev->drm, &tdev->reset_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&tdev->drm, &tdev->tlb_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&tdev->drm, &tdev->ctxs_lock);
	if (ret)
		return ret;
	INIT_LIST_HEAD(&tdev->ctxs);
	spin_lock_init(&tdev->quarantine_lock);
	INIT_LIST_HEAD(&tdev->quarantine);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	tdev->regs = pcim_iomap_region(pdev, TPU_BAR_REGS, TPU_DRIVER_NAME);
	if (IS_ERR(tdev->regs))
		return PTR_ERR(tdev->regs);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(TPU_DMA_BITS));
	if (ret)
		return ret;
	pci_set_master(pdev);

	ret = tpu_device_identify(tdev);
	if (ret)
		return ret;
	ret = tpu_limits_init(tdev);
	if (ret)
		return ret;
	ret = tpu_mmu_init(tdev);
	if (ret)
		return ret;
	ret = tpu_ring_init(tdev);
	if (ret)
		return ret;
	ret = tpu_device_reset(tdev);
	if (ret)
		return ret;

	ret = tpu_job_init(tdev);
	if (ret)
		return ret;
	ret = tpu_irq_init(tdev);
	if (ret)
		goto err_job_fini;
	tpu_device_start(tdev);

	tpu_debugfs_init(tdev);
	ret = drm_dev_register(&tdev->drm, 0);
	if (ret)
		goto err_stop;
	return 0;

err_stop:
	tpu_device_stop(tdev);
	pci_clear_master(pdev);
	tpu_device_release_quarantine(tdev);
	tpu_irq_fini(tdev);
err_job_fini:
	tpu_job_fini(tdev);
	return ret;
}

static void tpu_remove(struct pci_dev *pdev)
{
	struct tpu_device *tdev = pci_get_drvdata(pdev);

	/*
	 * Files may stay open: they see -ENODEV. Once no ioctl or scheduler callback is inside
	 * the device (drm_dev_unplug()), the card stops, the jobs in the ring end with -ENODEV,
	 * and the scheduler goes once it has freed every job, queued ones included. Then the
	 * address spaces that outlive the binding are unmapped, while the device is bound.
	 */
	drm_dev_unplug(&tdev->drm);
	tpu_device_stop(tdev);
	pci_clear_master(pdev);
	/* Memory kept while the card could reach it goes, and from now on goes at once. */
	tpu_device_release_quarantine(tdev);
	tpu_irq_fini(tdev);
	tpu_ring_cancel(tdev, -ENODEV);
	tpu_job_fini(tdev);
	tpu_mmu_fini(tdev);
}

static const struct pci_device_id tpu_pci_ids[] = {
	{ PCI_DEVICE(TPU_PCI_VENDOR_ID, TPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, tpu_pci_ids);

static struct pci_driver tpu_pci_driver = {
	.name = TPU_DRIVER_NAME,
	.id_table = tpu_pci_ids,
	.probe = tpu_probe,
	.remove = tpu_remove,
	.dev_groups = tpu_sysfs_groups,
};
module_pci_driver(tpu_pci_driver);

MODULE_DESCRIPTION("DRM accel driver of the emulated TPU card");
MODULE_VERSION("1.0");
MODULE_AUTHOR("tpu-stack developers");
MODULE_LICENSE("GPL");
