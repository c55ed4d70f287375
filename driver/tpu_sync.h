/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Explicit synchronisation of SUBMIT: in-syncobjs a job waits for, out-syncobjs (binary or
 * timeline points) that receive its fence.
 */
#ifndef TPU_SYNC_H
#define TPU_SYNC_H

#include <linux/types.h>

struct dma_fence;
struct dma_fence_chain;
struct drm_device;
struct drm_file;
struct drm_sched_job;
struct drm_syncobj;
struct drm_tpu_submit;
struct drm_tpu_sync;

/**
 * struct tpu_out_sync - a syncobj that receives a job's fence
 * @syncobj: the syncobj, referenced
 * @chain: the chain node of a timeline point, NULL for a binary syncobj
 * @point: the timeline point, 0 for a binary syncobj
 */
struct tpu_out_sync {
	struct drm_syncobj *syncobj;
	struct dma_fence_chain *chain;
	u64 point;
};

/**
 * struct tpu_out_syncs - the out-syncobjs of one SUBMIT
 * @entries: @count entries
 * @count: out_sync_count, plus one for the legacy out_syncobj
 */
struct tpu_out_syncs {
	struct tpu_out_sync *entries;
	u32 count;
};

/**
 * struct tpu_sync_arrays - SUBMIT's in_syncs and out_syncs, copied from userspace
 * @in: in_sync_count entries, or NULL
 * @out: out_sync_count entries, or NULL
 */
struct tpu_sync_arrays {
	struct drm_tpu_sync *in;
	struct drm_tpu_sync *out;
};

int tpu_sync_check(struct drm_device *drm, const struct drm_tpu_submit *args);
int tpu_sync_copy_arrays(struct drm_device *drm, const struct drm_tpu_submit *args,
			 struct tpu_sync_arrays *arrays);
void tpu_sync_free_arrays(struct tpu_sync_arrays *arrays);
int tpu_sync_add_deps(struct drm_file *file, struct drm_sched_job *job,
		      const struct drm_tpu_submit *args, const struct tpu_sync_arrays *arrays);
int tpu_sync_get_out(struct drm_file *file, const struct drm_tpu_submit *args,
		     const struct tpu_sync_arrays *arrays, struct tpu_out_syncs *out);
void tpu_sync_signal_out(struct tpu_out_syncs *out, struct dma_fence *fence);
void tpu_sync_put_out(struct tpu_out_syncs *out);

#endif /* TPU_SYNC_H */
