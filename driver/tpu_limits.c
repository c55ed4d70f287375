// SPDX-License-Identifier: GPL-2.0
/*
 * Limits that keep one user or file from taking the card from the others.
 *
 * Each open file takes a context (a slot of the card's context table), which lives until the
 * file is closed and its last buffer freed (a buffer exported as a dma-buf outlives the file):
 * one user may hold at most max_user_contexts of them (-EDQUOT beyond; -ENOSPC when the table
 * itself is full).
 * Buffer objects are pinned for their whole life, and so are the page tables that map them
 * (tpu_mmu.c): a file (its context) may pin at most max_file_pinned_mb of both (-EDQUOT), the
 * device at most max_device_pinned_mb (-ENOSPC). A job is
 * in flight from SUBMIT until its fence signals: at most max_file_jobs per file (-EDQUOT)
 * and max_device_jobs per device (-ENOSPC). Freed buffers and ended jobs give their room
 * back at once. The module parameters are read at probe.
 */
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sizes.h>

#include "tpu_drv.h"
#include "tpu_limits.h"
#include "tpu_mmu.h"

static unsigned int tpu_max_user_contexts;
module_param_named(max_user_contexts, tpu_max_user_contexts, uint, 0444);
MODULE_PARM_DESC(max_user_contexts,
		 "Contexts (open files, or closed ones whose exported buffers live) one user may hold per card, 0 = a quarter of them (default: 0)");

static unsigned int tpu_max_file_pinned_mb;
module_param_named(max_file_pinned_mb, tpu_max_file_pinned_mb, uint, 0444);
MODULE_PARM_DESC(max_file_pinned_mb,
		 "MiB of buffers and page tables one file may pin, 0 = half the device's limit (default: 0)");

static unsigned int tpu_max_device_pinned_mb;
module_param_named(max_device_pinned_mb, tpu_max_device_pinned_mb, uint, 0444);
MODULE_PARM_DESC(max_device_pinned_mb,
		 "MiB of buffers and page tables all files may pin per card, 0 = half the RAM (default: 0)");

static unsigned int tpu_max_file_jobs = 1024;
module_param_named(max_file_jobs, tpu_max_file_jobs, uint, 0444);
MODULE_PARM_DESC(max_file_jobs, "Jobs in flight per file (default: 1024)");

static unsigned int tpu_max_device_jobs = 4096;
module_param_named(max_device_jobs, tpu_max_device_jobs, uint, 0444);
MODULE_PARM_DESC(max_device_jobs, "Jobs in flight per card (default: 4096)");

static void tpu_limits_fini(struct drm_device *drm, void *arg)
{
	struct tpu_limits *lim = arg;

	xa_destroy(&lim->users);
}

int tpu_limits_init(struct tpu_device *tdev)
{
	struct tpu_limits *lim = &tdev->limits;
	int ret;

	lim->user_contexts = tpu_max_user_contexts ?: max(tdev->num_ctx / 4, 1u);
	lim->device_pinned = tpu_max_device_pinned_mb ? (u64)tpu_max_device_pinned_mb * SZ_1M :
			     (u64)totalram_pages() * PAGE_SIZE / 2;
	lim->file_pinned = tpu_max_file_pinned_mb ? (u64)tpu_max_file_pinned_mb * SZ_1M :
			   lim->device_pinned / 2;
	lim->file_jobs = max(tpu_max_file_jobs, 1u);
	lim->device_jobs = max(tpu_max_device_jobs, 1u);
	xa_init(&lim->users);
	atomic64_set(&lim->pinned, 0);
	atomic_set(&lim->jobs, 0);
	ret = drmm_mutex_init(&tdev->drm, &lim->lock);
	if (ret)
		return ret;
	return drmm_add_action_or_reset(&tdev->drm, tpu_limits_fini, lim);
}

/**
 * tpu_limits_open - count a new context against its user's contexts
 * @tdev: the device
 * @uid: the opening user
 *
 * tpu_limits_close() gives it back when the context is released.
 *
 * Return: 0, -EDQUOT if the user holds max_user_contexts contexts already, or -ENOMEM.
 */
int tpu_limits_open(struct tpu_device *tdev, kuid_t uid)
{
	struct tpu_limits *lim = &tdev->limits;
	unsigned long key = from_kuid(&init_user_ns, uid);
	unsigned long count;
	int ret = 0;

	mutex_lock(&lim->lock);
	count = xa_to_value(xa_load(&lim->users, key) ?: xa_mk_value(0));
	if (count >= lim->user_contexts) {
		tpu_dbg(&tdev->drm, LIMITS, "open: user %lu holds %lu contexts, the limit\n", key,
			count);
		ret = -EDQUOT;
	} else {
		ret = xa_err(xa_store(&lim->users, key, xa_mk_value(count + 1), GFP_KERNEL));
	}
	mutex_unlock(&lim->lock);
	return ret;
}

void tpu_limits_close(struct tpu_device *tdev, kuid_t uid)
{
	struct tpu_limits *lim = &tdev->limits;
	unsigned long key = from_kuid(&init_user_ns, uid);
	unsigned long count;

	mutex_lock(&lim->lock);
	count = xa_to_value(xa_load(&lim->users, key) ?: xa_mk_value(0));
	if (count > 1)
		xa_store(&lim->users, key, xa_mk_value(count - 1), GFP_KERNEL);
	else
		xa_erase(&lim->users, key);
	mutex_unlock(&lim->lock);
}

/**
 * tpu_limits_pin - count @bytes of a new buffer object or page table of @ctx as pinned
 * @ctx: the file's context
 * @bytes: the buffer's or table's size
 *
 * Return: 0, -EDQUOT over the file's limit, -ENOSPC over the device's.
 */
int tpu_limits_pin(struct tpu_ctx *ctx, u64 bytes)
{
	struct tpu_limits *lim = &ctx->tdev->limits;

	if (atomic64_add_return(bytes, &ctx->pinned) > lim->file_pinned) {
		atomic64_sub(bytes, &ctx->pinned);
		return -EDQUOT;
	}
	if (atomic64_add_return(bytes, &lim->pinned) > lim->device_pinned) {
		atomic64_sub(bytes, &lim->pinned);
		atomic64_sub(bytes, &ctx->pinned);
		return -ENOSPC;
	}
	return 0;
}

void tpu_limits_unpin(struct tpu_ctx *ctx, u64 bytes)
{
	atomic64_sub(bytes, &ctx->tdev->limits.pinned);
	atomic64_sub(bytes, &ctx->pinned);
}

/**
 * tpu_limits_job_start - count a job of @ctx as in flight
 * @ctx: the file's context
 *
 * Return: 0, -EDQUOT over the file's limit, -ENOSPC over the device's.
 */
int tpu_limits_job_start(struct tpu_ctx *ctx)
{
	struct tpu_limits *lim = &ctx->tdev->limits;

	if (atomic_inc_return(&ctx->jobs) > lim->file_jobs) {
		atomic_dec(&ctx->jobs);
		return -EDQUOT;
	}
	if (atomic_inc_return(&lim->jobs) > lim->device_jobs) {
		atomic_dec(&lim->jobs);
		atomic_dec(&ctx->jobs);
		return -ENOSPC;
	}
	return 0;
}

/* The job ended (its fence signalled); may be called in interrupt context. */
void tpu_limits_job_end(struct tpu_ctx *ctx)
{
	atomic_dec(&ctx->tdev->limits.jobs);
	atomic_dec(&ctx->jobs);
}
