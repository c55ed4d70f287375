// SPDX-License-Identifier: GPL-2.0
/*
 * Explicit synchronisation of DRM_IOCTL_TPU_SUBMIT.
 *
 * in_syncs: each (syncobj, point) adds the fence found there as a scheduler dependency of the
 * job; a point without a fence yet is -ENOENT (no wait-for-submit). out_syncs, and the legacy
 * out_syncobj: each syncobj gets the job's finished fence, replacing the fence of a binary
 * syncobj (point 0) or adding a timeline point. Everything that can fail (lookups, chain
 * nodes) happens before the job is armed; signalling afterwards cannot fail. The arrays are
 * copied from userspace first, before SUBMIT enters the device (drm_dev_enter()): a fault on
 * them may block for long (userfaultfd, FUSE), and an unplug waits for every entered section.
 */
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/gpu_scheduler.h>
#include <drm/tpu_accel.h>
#include <linux/dma-fence-chain.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "tpu_debug.h"
#include "tpu_sync.h"

int tpu_sync_check(struct drm_device *drm, const struct drm_tpu_submit *args)
{
	if (args->in_sync_count > DRM_TPU_MAX_SYNCS || args->out_sync_count > DRM_TPU_MAX_SYNCS) {
		tpu_dbg(drm, SYNC, "submit: %u in- and %u out-syncs, at most %u each\n",
			args->in_sync_count, args->out_sync_count, DRM_TPU_MAX_SYNCS);
		return -EINVAL;
	}
	return 0;
}

/* Copy @count entries from @ptr, checking their flags. */
static struct drm_tpu_sync *tpu_sync_copy(struct drm_device *drm, u64 ptr, u32 count)
{
	struct drm_tpu_sync *syncs;
	u32 i;

	syncs = kvmalloc_array(count, sizeof(*syncs), GFP_KERNEL);
	if (!syncs)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(syncs, u64_to_user_ptr(ptr), count * sizeof(*syncs))) {
		tpu_dbg(drm, SYNC, "submit: cannot read %u syncs at 0x%llx\n", count, ptr);
		kvfree(syncs);
		return ERR_PTR(-EFAULT);
	}
	for (i = 0; i < count; i++) {
		if (syncs[i].flags) {
			tpu_dbg(drm, SYNC, "submit: sync %u has flags 0x%x, must be 0\n", i,
				syncs[i].flags);
			kvfree(syncs);
			return ERR_PTR(-EINVAL);
		}
	}
	return syncs;
}

/**
 * tpu_sync_copy_arrays - copy the in_syncs and out_syncs of a SUBMIT from userspace
 * @drm: the device
 * @args: the SUBMIT arguments, checked by tpu_sync_check()
 * @arrays: out, the copies; tpu_sync_free_arrays() frees them, also on failure
 *
 * Return: 0, -EFAULT, -EINVAL for an entry with flags, or -ENOMEM.
 */
int tpu_sync_copy_arrays(struct drm_device *drm, const struct drm_tpu_submit *args,
			 struct tpu_sync_arrays *arrays)
{
	arrays->in = NULL;
	arrays->out = NULL;
	if (args->in_sync_count) {
		arrays->in = tpu_sync_copy(drm, args->in_syncs, args->in_sync_count);
		if (IS_ERR(arrays->in)) {
			int ret = PTR_ERR(arrays->in);

			arrays->in = NULL;
			return ret;
		}
	}
	if (args->out_sync_count) {
		arrays->out = tpu_sync_copy(drm, args->out_syncs, args->out_sync_count);
		if (IS_ERR(arrays->out)) {
			int ret = PTR_ERR(arrays->out);

			arrays->out = NULL;
			return ret;
		}
	}
	return 0;
}

void tpu_sync_free_arrays(struct tpu_sync_arrays *arrays)
{
	kvfree(arrays->in);
	kvfree(arrays->out);
	arrays->in = NULL;
	arrays->out = NULL;
}

/**
 * tpu_sync_add_deps - make @job wait for the fences of the in-syncs
 * @file: the submitting file
 * @job: the initialised, not yet armed job
 * @args: the SUBMIT arguments
 * @arrays: the in- and out-syncs, copied by tpu_sync_copy_arrays()
 *
 * Return: 0, -ENOENT for a syncobj or point without a fence, or -ENOMEM.
 */
int tpu_sync_add_deps(struct drm_file *file, struct drm_sched_job *job,
		      const struct drm_tpu_submit *args, const struct tpu_sync_arrays *arrays)
{
	struct drm_device *drm = file->minor->dev;
	const struct drm_tpu_sync *syncs = arrays->in;
	int ret = 0;
	u32 i;

	for (i = 0; i < args->in_sync_count && !ret; i++) {
		ret = drm_sched_job_add_syncobj_dependency(job, file, syncs[i].handle,
							   syncs[i].point);
		/* drm_syncobj_find_fence()'s -EINVAL: no fence (at that point) yet. */
		if (ret == -EINVAL)
			ret = -ENOENT;
		if (ret)
			tpu_dbg(drm, SYNC, "submit: no fence in syncobj %u at point %llu: %d\n",
				syncs[i].handle, syncs[i].point, ret);
	}
	return ret;
}

static int tpu_sync_get_one(struct drm_file *file, struct tpu_out_sync *out, u32 handle,
			    u64 point)
{
	out->syncobj = drm_syncobj_find(file, handle);
	if (!out->syncobj) {
		tpu_dbg(file->minor->dev, SYNC, "submit: no syncobj with handle %u\n", handle);
		return -ENOENT;
	}
	out->point = point;
	if (point) {
		out->chain = dma_fence_chain_alloc();
		if (!out->chain)
			return -ENOMEM;
	}
	return 0;
}

/**
 * tpu_sync_get_out - look up the out-syncs (and the legacy out_syncobj) of a SUBMIT
 * @file: the submitting file
 * @args: the SUBMIT arguments
 * @arrays: the in- and out-syncs, copied by tpu_sync_copy_arrays()
 * @out: out, the syncobjs; tpu_sync_put_out() releases them, also on failure
 *
 * Return: 0, -ENOENT for an unknown syncobj, or -ENOMEM.
 */
int tpu_sync_get_out(struct drm_file *file, const struct drm_tpu_submit *args,
		     const struct tpu_sync_arrays *arrays, struct tpu_out_syncs *out)
{
	const struct drm_tpu_sync *syncs = arrays->out;
	u32 n = args->out_sync_count + (args->out_syncobj ? 1 : 0);
	int ret = 0;
	u32 i;

	out->count = 0;
	out->entries = NULL;
	if (!n)
		return 0;
	out->entries = kvcalloc(n, sizeof(*out->entries), GFP_KERNEL);
	if (!out->entries)
		return -ENOMEM;
	for (i = 0; i < args->out_sync_count && !ret; i++, out->count++)
		ret = tpu_sync_get_one(file, &out->entries[i], syncs[i].handle, syncs[i].point);
	if (!ret && args->out_syncobj) {
		ret = tpu_sync_get_one(file, &out->entries[out->count], args->out_syncobj, 0);
		out->count++;
	}
	return ret;
}

/* Hand @fence to every out-syncobj; the chain nodes are used up. */
void tpu_sync_signal_out(struct tpu_out_syncs *out, struct dma_fence *fence)
{
	u32 i;

	for (i = 0; i < out->count; i++) {
		struct tpu_out_sync *sync = &out->entries[i];

		if (sync->chain) {
			drm_syncobj_add_point(sync->syncobj, sync->chain, fence, sync->point);
			sync->chain = NULL;
		} else {
			drm_syncobj_replace_fence(sync->syncobj, fence);
		}
	}
}

void tpu_sync_put_out(struct tpu_out_syncs *out)
{
	u32 i;

	for (i = 0; i < out->count; i++) {
		dma_fence_chain_free(out->entries[i].chain);
		if (out->entries[i].syncobj)
			drm_syncobj_put(out->entries[i].syncobj);
	}
	kvfree(out->entries);
	out->entries = NULL;
	out->count = 0;
}
