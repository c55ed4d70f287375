/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Limits that keep one user or file from taking the card from the others: contexts per user,
 * pinned memory and jobs in flight per file and per device.
 */
#ifndef TPU_LIMITS_H
#define TPU_LIMITS_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

struct tpu_ctx;
struct tpu_device;

/**
 * struct tpu_limits - the device's limits and what is in use against them
 * @user_contexts: contexts (of open files, or of closed ones with live buffers) one user may
 *	hold on the device
 * @file_pinned: bytes of buffer objects and page tables one file may have pinned
 * @device_pinned: bytes of buffer objects and page tables pinned on the device, all files
 *	together
 * @file_jobs: jobs of one file submitted and not yet ended
 * @device_jobs: jobs of all files submitted and not yet ended
 * @lock: protects @users
 * @users: contexts per user, by uid (xa_mk_value() counts)
 * @pinned: bytes pinned on the device
 * @jobs: jobs in flight on the device
 */
struct tpu_limits {
	u32 user_contexts;
	u64 file_pinned;
	u64 device_pinned;
	u32 file_jobs;
	u32 device_jobs;
	struct mutex lock;		/* users */
	struct xarray users;
	atomic64_t pinned;
	atomic_t jobs;
};

int tpu_limits_init(struct tpu_device *tdev);
int tpu_limits_open(struct tpu_device *tdev, kuid_t uid);
void tpu_limits_close(struct tpu_device *tdev, kuid_t uid);
int tpu_limits_pin(struct tpu_ctx *ctx, u64 bytes);
void tpu_limits_unpin(struct tpu_ctx *ctx, u64 bytes);
int tpu_limits_job_start(struct tpu_ctx *ctx);
void tpu_limits_job_end(struct tpu_ctx *ctx);

#endif /* TPU_LIMITS_H */
