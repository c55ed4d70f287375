// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs: DRM_IOCTL_TPU_SUBMIT and DRM_IOCTL_TPU_WAIT, the DRM GPU schedulers that feed
 * the rings of the card's queues (one per queue); their timeout is tpu_reset.c's.
 *
 * A job is pushed to its file's scheduler entity of its priority after waiting (implicitly) for
 * the earlier jobs using its BOs; its finished fence is added to every BO it lists as a write
 * fence and optionally to a syncobj. The entity feeds the schedulers of the queues serving the
 * priority (tdev->prio_scheds; the least loaded one whenever the entity is idle). A scheduler
 * writes the job to its ring (run_job) when its dependencies are met and the ring has room
 * (credit limit TPU_RING_ENTRIES - 1). The interrupt handler retires it from its completion
 * record, signalling the hardware fence.
 *
 * Fences carry how a job ended: 0, -EIO for an error the card reported, -ETIMEDOUT for a
 * job ended by the timeout, -ECANCELED for one ended by a reset, -ENODEV when the device
 * went away before or while it ran.
 *
 * Unplug (PCI remove, e.g. an unbind through sysfs while files are open): remove stops the
 * card, ends the jobs in the rings with -ENODEV, destroys the entities of every open file (the
 * jobs queued there end with -ENODEV in run_job), waits for the closes in progress to destroy
 * theirs and until the schedulers have freed every job, and only then tears the schedulers
 * down: never from their own free_job work. Each job holds a reference to the device until it
 * is freed. Files stay open and see -ENODEV until they close. On a wedged card
 * (tpu_device_wedge()) jobs end with -EIO and SUBMIT fails with -EIO.
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/tpu_accel.h>
#include <linux/capability.h>
#include <linux/dma-resv.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

#include "tpu_debugfs.h"
#include "tpu_device.h"
#include "tpu_drv.h"
#include "tpu_fdinfo.h"
#include "tpu_gem.h"
#include "tpu_job.h"
#include "tpu_limits.h"
#include "tpu_mmu.h"
#include "tpu_reset.h"
#include "tpu_ring.h"
#include "tpu_sync.h"

static unsigned int tpu_job_timeout_ms = 10000;
module_param_named(job_timeout_ms, tpu_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "Time a job may run before the card is reset, 0 = never (default: 10000)");

static const char *tpu_fence_get_driver_name(struct dma_fence *fence)
{
	return TPU_DRIVER_NAME;
}

static const char *tpu_fence_get_timeline_name(struct dma_fence *fence)
{
	return "tpu-queue";
}

static const struct dma_fence_ops tpu_fence_ops = {
	.get_driver_name = tpu_fence_get_driver_name,
	.get_timeline_name = tpu_fence_get_timeline_name,
};

/* Frees only what may be freed in interrupt context: the last reference may be the ring's. */
static void tpu_job_release(struct kref *kref)
{
	struct tpu_job *job = container_of(kref, struct tpu_job, refcount);

	dma_fence_put(job->done);
	if (job->hw_fence->ops)
		dma_fence_put(job->hw_fence);
	else
		kfree(job->hw_fence);
	kfree(job);
}

static void tpu_job_put(struct tpu_job *job)
{
	kref_put(&job->refcount, tpu_job_release);
}

/*
 * The job's finished fence signalled: it no longer counts as in flight. Runs under the fence's
 * lock, which tpu_job_free() takes before the job drops its context.
 */
static void tpu_job_ended(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct tpu_job *job = container_of(cb, struct tpu_job, end_cb);

	tpu_inject_delay(job->tdev, TPU_INJECT_SLOW_END);
	tpu_limits_job_end(job->ctx);
}

/* Drop the BOs and the address space, once the job can no longer run. */
static void tpu_job_put_resources(struct tpu_job *job)
{
	u32 i;

	if (job->in_flight && !job->done)
		tpu_limits_job_end(job->ctx);
	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i]);
	kvfree(job->bos);
	kvfree(job->bo_write);
	job->bos = NULL;
	job->bo_write = NULL;
	job->bo_count = 0;
	tpu_ctx_put(job->ctx);
	job->ctx = NULL;
}

/**
 * tpu_job_complete - end a job of the ring
 * @job: the job, on the ring's in-flight list
 * @res: how it ended
 * @error: 0, or the error of its fences
 *
 * Called with tdev->job_lock held.
 */
void tpu_job_complete(struct tpu_job *job, const struct tpu_job_result *res, int error)
{
	u32 i;

	lockdep_assert_held(&job->tdev->job_lock);

	/* Before the fences signal: their waiters may read the BOs at once. */
	for (i = 0; i < job->bo_count; i++)
		if (job->bo_write[i])
			tpu_bo_sync_for_cpu(job->bos[i]);
	list_del_init(&job->inflight_node);
	tpu_fdinfo_job_end(job, res);
	job->result = *res;
	if (error)
		dma_fence_set_error(job->hw_fence, error);
	dma_fence_signal(job->hw_fence);
	tpu_job_put(job);
}

static struct dma_fence *tpu_job_run(struct drm_sched_job *sched_job)
{
	struct tpu_job *job = to_tpu_job(sched_job);
	struct tpu_ring *ring = to_tpu_ring(sched_job->sched);
	struct tpu_device *tdev = job->tdev;
	unsigned long flags;
	int idx;
	u32 i;

	/* Killed with its file, banned, or the device is gone: end it, status CANCELED. */
	if (unlikely(sched_job->s_fence->finished.error))
		return ERR_PTR(sched_job->s_fence->finished.error);
	if (unlikely(READ_ONCE(job->ctx->banned)))
		return ERR_PTR(-ECANCELED);
	if (unlikely(tpu_device_wedged(tdev)))
		return ERR_PTR(-EIO);
	if (!drm_dev_enter(&tdev->drm, &idx))
		return ERR_PTR(-ENODEV);

	/* Under bounce buffering (tpu_gem.c) the card sees the BOs' contents only from here. */
	for (i = 0; i < job->bo_count; i++)
		tpu_bo_sync_for_device(job->bos[i], job->bo_write[i]);
	spin_lock_irqsave(&tdev->job_lock, flags);
	job->seqno = ++ring->seqno;
	dma_fence_init(job->hw_fence, &tpu_fence_ops, &tdev->fence_lock, ring->fence_context,
		       job->seqno);
	kref_get(&job->refcount);
	tpu_ring_push(ring, job);
	spin_unlock_irqrestore(&tdev->job_lock, flags);

	drm_dev_exit(idx);
	return dma_fence_get(job->hw_fence);
}

static void tpu_job_free(struct drm_sched_job *sched_job)
{
	struct tpu_job *job = to_tpu_job(sched_job);
	struct tpu_device *tdev = job->tdev;

	tpu_hold(tdev, TPU_HOLD_FREE);
	/*
	 * drm_sched frees a job once it sees its finished fence signalled, which another CPU may
	 * see before that fence's callbacks have run. They run under the fence's lock, which
	 * removing tpu_job_ended() takes (it has run: there is nothing to remove), so that it is
	 * done with the job's context before the job drops it.
	 */
	WARN_ON(dma_fence_remove_callback(job->done, &job->end_cb));
	drm_sched_job_cleanup(sched_job);
	tpu_job_put_resources(job);
	tpu_job_put(job);
	/* PCI remove waits for this before it tears the scheduler down. */
	if (atomic_dec_and_test(&tdev->jobs_alive)) {
		/* A remove that comes now finds no job alive and does not wait for this one. */
		tpu_hold(tdev, TPU_HOLD_LAST_FREE);
		wake_up_all(&tdev->jobs_freed);
	}
	/*
	 * Last: the job's reference keeps the device alive until here, even once remove, woken
	 * above or finding no job alive, is done (jobs killed with their entity are freed from
	 * system_wq, which remove does not flush).
	 */
	drm_dev_put(&tdev->drm);
}

static const struct drm_sched_backend_ops tpu_sched_ops = {
	.run_job = tpu_job_run,
	.timedout_job = tpu_reset_timedout,
	.free_job = tpu_job_free,
};

/*
 * The queues serving each SUBMIT priority p: those whose PRIORITY is the largest not above p
 * (queue 0 has PRIORITY 0, so there is one).
 */
static void tpu_job_map_priorities(struct tpu_device *tdev)
{
	u32 p, q, level;

	for (p = 0; p < DRM_TPU_PRIORITY_COUNT; p++) {
		struct tpu_prio_scheds *ps = &tdev->prio_scheds[p];

		level = 0;
		for (q = 0; q < tdev->num_queues; q++)
			if (tdev->rings[q].priority <= p)
				level = max(level, tdev->rings[q].priority);
		ps->count = 0;
		for (q = 0; q < tdev->num_queues; q++)
			if (tdev->rings[q].priority == level)
				ps->list[ps->count++] = &tdev->rings[q].sched;
	}
}

int tpu_job_init(struct tpu_device *tdev)
{
	long timeout = tpu_job_timeout_ms ? msecs_to_jiffies(tpu_job_timeout_ms) :
					    MAX_SCHEDULE_TIMEOUT;
	u64 fence_context;
	u32 q;
	int ret;

	tdev->last_progress = ktime_get_ns();
	atomic_set(&tdev->jobs_alive, 0);
	atomic_set(&tdev->closing, 0);
	init_waitqueue_head(&tdev->jobs_freed);
	INIT_LIST_HEAD(&tdev->files);
	init_completion(&tdev->files_done);
	ret = drmm_mutex_init(&tdev->drm, &tdev->files_lock);
	if (ret)
		return ret;
	/* One ordered timeout workqueue: a handler may reset the card, under every queue. */
	tdev->timeout_wq = alloc_ordered_workqueue("%s-timeout", 0, dev_name(tdev->drm.dev));
	if (!tdev->timeout_wq)
		return -ENOMEM;
	fence_context = dma_fence_context_alloc(tdev->num_queues);
	for (q = 0; q < tdev->num_queues; q++) {
		struct tpu_ring *ring = &tdev->rings[q];

		ring->fence_context = fence_context + q;
		/* No submit_wq: each scheduler allocates its own ordered workqueue. */
		ret = drm_sched_init(&ring->sched, &tpu_sched_ops, NULL, DRM_SCHED_PRIORITY_COUNT,
				     TPU_RING_ENTRIES - 1, 0, timeout, tdev->timeout_wq, NULL,
				     ring->name, tdev->drm.dev);
		if (ret) {
			while (q--)
				drm_sched_fini(&tdev->rings[q].sched);
			destroy_workqueue(tdev->timeout_wq);
			return ret;
		}
	}
	tpu_job_map_priorities(tdev);
	return 0;
}

static void tpu_job_destroy_entities(struct tpu_file *tfile, unsigned int count)
{
	while (count--)
		drm_sched_entity_destroy(&tfile->entity[count]);
}

/**
 * tpu_job_fini - tear the schedulers down, in PCI remove or a failed probe
 * @tdev: the device, unplugged, with the card stopped and the rings cancelled
 *
 * Destroys the entities of every open file (their queued jobs end with -ENODEV), waits until
 * the closes that took their file off the list before have destroyed its entities and the
 * schedulers have freed every job, then finishes the schedulers: no entity outlives them. Files
 * closed afterwards find their entities gone.
 */
void tpu_job_fini(struct tpu_device *tdev)
{
	struct tpu_file *tfile;
	LIST_HEAD(files);
	u32 q;

	mutex_lock(&tdev->files_lock);
	tdev->gone = true;
	list_splice_init(&tdev->files, &files);
	mutex_unlock(&tdev->files_lock);

	list_for_each_entry(tfile, &files, node)
		tpu_job_destroy_entities(tfile, DRM_TPU_PRIORITY_COUNT);
	complete_all(&tdev->files_done);

	wait_event(tdev->jobs_freed,
		   !atomic_read(&tdev->closing) && !atomic_read(&tdev->jobs_alive));
	for (q = 0; q < tdev->num_queues; q++)
		drm_sched_fini(&tdev->rings[q].sched);
	destroy_workqueue(tdev->timeout_wq);
}

int tpu_job_open(struct tpu_file *tfile)
{
	struct tpu_device *tdev = tfile->tdev;
	unsigned int p;
	int ret = 0;

	mutex_init(&tfile->lock);
	xa_init_flags(&tfile->jobs, XA_FLAGS_ALLOC1);
	mutex_lock(&tdev->files_lock);
	if (tdev->gone) {
		ret = -ENODEV;
		goto out;
	}
	for (p = 0; p < DRM_TPU_PRIORITY_COUNT; p++) {
		ret = drm_sched_entity_init(&tfile->entity[p], DRM_SCHED_PRIORITY_NORMAL,
					    tdev->prio_scheds[p].list, tdev->prio_scheds[p].count,
					    NULL);
		if (ret) {
			tpu_job_destroy_entities(tfile, p);
			goto out;
		}
	}
	list_add_tail(&tfile->node, &tdev->files);
out:
	mutex_unlock(&tdev->files_lock);
	if (ret)
		mutex_destroy(&tfile->lock);
	return ret;
}

/*
 * Close of a file: its queued jobs are flushed to the rings (or killed if the process is
 * being killed); jobs in the rings run to completion and keep the address space alive. PCI
 * remove waits for a close that took the file off the list (tdev->closing) before it finishes
 * the schedulers; once remove has the file, it destroys the entities: wait until it has.
 */
void tpu_job_close(struct tpu_file *tfile)
{
	struct tpu_device *tdev = tfile->tdev;
	struct tpu_job *job;
	unsigned long id;
	bool mine;

	mutex_lock(&tdev->files_lock);
	mine = !tdev->gone;
	if (mine) {
		list_del(&tfile->node);
		atomic_inc(&tdev->closing);
	}
	mutex_unlock(&tdev->files_lock);
	if (mine) {
		tpu_hold(tdev, TPU_HOLD_CLOSE);
		tpu_job_destroy_entities(tfile, DRM_TPU_PRIORITY_COUNT);
		/* The file holds the device: it outlives the wake-up. */
		if (atomic_dec_and_test(&tdev->closing))
			wake_up_all(&tdev->jobs_freed);
	} else {
		wait_for_completion(&tdev->files_done);
	}

	xa_for_each(&tfile->jobs, id, job)
		tpu_job_put(job);
	xa_destroy(&tfile->jobs);
	mutex_destroy(&tfile->lock);
}

static int tpu_submit_check(struct drm_device *drm, const struct drm_tpu_submit *args)
{
	if (args->flags & ~(DRM_TPU_SUBMIT_NO_WAIT | DRM_TPU_SUBMIT_BO_FLAGS)) {
		tpu_dbg(drm, JOB, "submit: unknown flags 0x%x\n", args->flags);
		return -EINVAL;
	}
	if (!(args->flags & DRM_TPU_SUBMIT_BO_FLAGS) && args->bo_flags) {
		tpu_dbg(drm, JOB, "submit: bo_flags without DRM_TPU_SUBMIT_BO_FLAGS\n");
		return -EINVAL;
	}
	if (args->reserved[0] || args->reserved[1] || args->pad) {
		tpu_dbg(drm, JOB, "submit: reserved fields must be 0\n");
		return -EINVAL;
	}
	if (args->priority > DRM_TPU_PRIORITY_MAX) {
		tpu_dbg(drm, JOB, "submit: priority %u over %u\n", args->priority,
			DRM_TPU_PRIORITY_MAX);
		return -EINVAL;
	}
	/*
	 * The card serves its highest non-empty queue and does not preempt: a higher priority
	 * can starve every other file, so it takes CAP_SYS_NICE (as amdgpu and panthor).
	 */
	if (args->priority > DRM_TPU_PRIORITY_LOW && !capable(CAP_SYS_NICE)) {
		tpu_dbg(drm, JOB, "submit: priority %u needs CAP_SYS_NICE\n", args->priority);
		return -EACCES;
	}
	if (!args->program_size || args->program_size % TPU_INSN_SIZE ||
	    args->program_size > TPU_PROGRAM_MAX_BYTES) {
		tpu_dbg(drm, JOB, "submit: program_size %u not a multiple of %u in [%u, %u]\n",
			args->program_size, TPU_INSN_SIZE, TPU_INSN_SIZE, TPU_PROGRAM_MAX_BYTES);
		return -EINVAL;
	}
	if (args->program_offset % TPU_INSN_SIZE) {
		tpu_dbg(drm, JOB, "submit: program_offset %u not a multiple of %u\n",
			args->program_offset, TPU_INSN_SIZE);
		return -EINVAL;
	}
	if (args->bo_count > TPU_JOB_MAX_BOS) {
		tpu_dbg(drm, JOB, "submit: bo_count %u over %u\n", args->bo_count, TPU_JOB_MAX_BOS);
		return -EINVAL;
	}
	return tpu_sync_check(drm, args);
}

/* A listed BO: its handle and DRM_TPU_BO_* access. */
struct tpu_bo_ref {
	u32 handle;
	u32 flags;
};

static int tpu_cmp_bo_ref(const void *a, const void *b)
{
	u32 x = ((const struct tpu_bo_ref *)a)->handle, y = ((const struct tpu_bo_ref *)b)->handle;

	return x < y ? -1 : x > y;
}

/*
 * Copy bo_handles and, with DRM_TPU_SUBMIT_BO_FLAGS, bo_flags from userspace into a new array
 * of bo_count + 1 entries (the last one is the program's, to fill in).
 */
static struct tpu_bo_ref *tpu_job_copy_bo_refs(struct drm_device *drm,
					       const struct drm_tpu_submit *args)
{
	u32 __user *handles = u64_to_user_ptr(args->bo_handles);
	u32 __user *flags = u64_to_user_ptr(args->bo_flags);
	bool with_flags = args->flags & DRM_TPU_SUBMIT_BO_FLAGS;
	struct tpu_bo_ref *refs;
	int ret = 0;
	u32 i;

	refs = kvmalloc_array(args->bo_count + 1, sizeof(*refs), GFP_KERNEL);
	if (!refs)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < args->bo_count && !ret; i++) {
		if (get_user(refs[i].handle, &handles[i]) ||
		    (with_flags && get_user(refs[i].flags, &flags[i]))) {
			tpu_dbg(drm, JOB, "submit: cannot read BO %u of %u at 0x%llx\n", i,
				args->bo_count, with_flags ? args->bo_flags : args->bo_handles);
			ret = -EFAULT;
		} else if (!with_flags) {
			refs[i].flags = DRM_TPU_BO_WRITE;
		} else if (!refs[i].flags ||
			   refs[i].flags & ~(DRM_TPU_BO_READ | DRM_TPU_BO_WRITE)) {
			tpu_dbg(drm, JOB, "submit: BO %u has flags 0x%x\n", refs[i].handle,
				refs[i].flags);
			ret = -EINVAL;
		}
	}
	if (ret) {
		kvfree(refs);
		return ERR_PTR(ret);
	}
	return refs;
}

/*
 * Look up the program BO and the listed BOs of @refs, from tpu_job_copy_bo_refs() (a handle
 * listed twice counts once, with both accesses; @refs is sorted and merged in place), check
 * they belong to this file and that the program lies within its BO.
 */
static int tpu_job_lookup_bos(struct drm_device *drm, struct drm_file *file, struct tpu_job *job,
			      const struct drm_tpu_submit *args, struct tpu_bo_ref *refs)
{
	struct tpu_file *tfile = file->driver_priv;
	struct drm_gem_object *program = NULL;
	u32 count = args->bo_count + 1;
	u32 i, n;

	/* The program is read; without per-BO flags, written like every BO (the old rule). */
	refs[args->bo_count].handle = args->program_handle;
	refs[args->bo_count].flags = args->flags & DRM_TPU_SUBMIT_BO_FLAGS ? DRM_TPU_BO_READ :
					DRM_TPU_BO_WRITE;
	sort(refs, count, sizeof(*refs), tpu_cmp_bo_ref, NULL);
	for (i = 1, n = 1; i < count; i++) {
		if (refs[i].handle == refs[n - 1].handle)
			refs[n - 1].flags |= refs[i].flags;
		else
			refs[n++] = refs[i];
	}

	job->bos = kvcalloc(n, sizeof(*job->bos), GFP_KERNEL);
	job->bo_write = kvcalloc(n, sizeof(*job->bo_write), GFP_KERNEL);
	if (!job->bos || !job->bo_write)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct drm_gem_object *obj = drm_gem_object_lookup(file, refs[i].handle);

		if (!obj) {
			tpu_dbg(drm, JOB, "submit: no BO with handle %u\n", refs[i].handle);
			return -ENOENT;
		}
		job->bo_write[job->bo_count] = refs[i].flags & DRM_TPU_BO_WRITE;
		job->bos[job->bo_count++] = obj;
		if (to_tpu_bo(obj)->ctx != tfile->ctx) {
			tpu_dbg(drm, JOB, "submit: BO %u is mapped in another file's address space\n",
				refs[i].handle);
			return -EINVAL;
		}
		if (refs[i].handle == args->program_handle)
			program = obj;
	}

	if (args->program_offset > program->size ||
	    args->program_size > program->size - args->program_offset) {
		tpu_dbg(drm, JOB, "submit: program at %u, %u bytes, outside BO %u of %zu bytes\n",
			args->program_offset, args->program_size, args->program_handle,
			program->size);
		return -EINVAL;
	}
	job->program_addr = to_tpu_bo(program)->va.start + args->program_offset;
	job->program_size = args->program_size;
	return 0;
}

int tpu_submit_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct tpu_file *tfile = file->driver_priv;
	struct drm_tpu_submit *args = data;
	struct tpu_sync_arrays syncs;
	struct tpu_out_syncs out = {};
	struct ww_acquire_ctx acquire;
	struct tpu_bo_ref *refs;
	struct tpu_job *job;
	u32 i, id;
	int ret, idx;

	ret = tpu_submit_check(drm, args);
	if (ret)
		return ret;
	if (tpu_device_wedged(tfile->tdev)) {
		tpu_dbg(drm, JOB, "submit: the card is wedged\n");
		return -EIO;
	}
	if (READ_ONCE(tfile->ctx->banned)) {
		tpu_dbg(drm, JOB, "submit: context %u banned after %u timed-out jobs\n",
			tfile->ctx->id, TPU_CTX_BAN_HANGS);
		return -ECANCELED;
	}
	/*
	 * The user arrays first: a fault on them may block for long (userfaultfd, FUSE), and PCI
	 * remove (drm_dev_unplug()) waits for every section entered below.
	 */
	refs = tpu_job_copy_bo_refs(drm, args);
	if (IS_ERR(refs))
		return PTR_ERR(refs);
	ret = tpu_sync_copy_arrays(drm, args, &syncs);
	if (ret)
		goto err_free_arrays;
	/* PCI remove destroys the entities only once no SUBMIT can push to them. */
	ret = -ENODEV;
	if (!drm_dev_enter(drm, &idx))
		goto err_free_arrays;

	ret = -ENOMEM;
	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		goto err_exit;
	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL);
	if (!job->hw_fence) {
		kfree(job);
		goto err_exit;
	}
	kref_init(&job->refcount);
	INIT_LIST_HEAD(&job->inflight_node);
	job->tdev = tfile->tdev;
	job->ctx = tpu_ctx_get(tfile->ctx);
	job->result.status = DRM_TPU_JOB_CANCELED;

	ret = tpu_job_lookup_bos(drm, file, job, args, refs);
	if (ret)
		goto err_put_job;

	ret = tpu_sync_get_out(file, args, &syncs, &out);
	if (ret)
		goto err_put_syncobj;

	ret = tpu_limits_job_start(job->ctx);
	if (ret) {
		tpu_dbg(drm, LIMITS, "submit: over the %s's limit of jobs in flight\n",
			ret == -EDQUOT ? "file" : "device");
		goto err_put_syncobj;
	}
	job->in_flight = true;

	ret = drm_sched_job_init(&job->base, &tfile->entity[args->priority], 1, tfile);
	if (ret)
		goto err_put_syncobj;
	ret = tpu_sync_add_deps(file, &job->base, args, &syncs);
	if (ret)
		goto err_cleanup_job;

	ret = drm_gem_lock_reservations(job->bos, job->bo_count, &acquire);
	if (ret)
		goto err_cleanup_job;
	for (i = 0; i < job->bo_count; i++) {
		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (ret)
			goto err_unlock;
		ret = drm_sched_job_add_implicit_dependencies(&job->base, job->bos[i],
							      job->bo_write[i]);
		if (ret)
			goto err_unlock;
	}

	/* Ids and the entity's queue in the same order; WAIT sees the job once it is queued. */
	mutex_lock(&tfile->lock);
	if (args->flags & DRM_TPU_SUBMIT_NO_WAIT) {
		id = 0;		/* retired by its fence alone */
	} else if (tfile->job_count >= TPU_FILE_MAX_JOBS) {
		tpu_dbg(drm, JOB, "submit: %u jobs not yet waited for\n", tfile->job_count);
		ret = -EBUSY;
		goto err_unlock_file;
	} else {
		ret = xa_alloc_cyclic(&tfile->jobs, &id, job, XA_LIMIT(1, U32_MAX),
				      &tfile->next_job_id, GFP_KERNEL);
		if (ret < 0)
			goto err_unlock_file;
		tfile->job_count++;
		kref_get(&job->refcount);
	}

	drm_sched_job_arm(&job->base);
	job->done = dma_fence_get(&job->base.s_fence->finished);
	/* Not signalled before the push below. */
	dma_fence_add_callback(job->done, &job->end_cb, tpu_job_ended);
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, job->done,
				   job->bo_write[i] ? DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire);
	tpu_sync_signal_out(&out, job->done);
	tpu_sync_put_out(&out);
	/* The scheduler owns the job from here; it may end and be freed at once. */
	atomic_inc(&tfile->tdev->jobs_alive);
	drm_dev_get(drm);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&tfile->lock);
	drm_dev_exit(idx);
	tpu_sync_free_arrays(&syncs);
	kvfree(refs);

	args->job_id = id;
	return 0;

err_unlock_file:
	mutex_unlock(&tfile->lock);
err_unlock:
	drm_gem_unlock_reservations(job->bos, job->bo_count, &acquire);
err_cleanup_job:
	drm_sched_job_cleanup(&job->base);
err_put_syncobj:
	tpu_sync_put_out(&out);
err_put_job:
	tpu_job_put_resources(job);
	tpu_job_put(job);
err_exit:
	drm_dev_exit(idx);
err_free_arrays:
	tpu_sync_free_arrays(&syncs);
	kvfree(refs);
	return ret;
}

/*
 * A timeout in jiffies for dma_fence_wait_timeout(): 0 polls, any other at least 1. An absolute
 * CLOCK_MONOTONIC time is turned into what is left of it; one that has passed polls.
 */
static long tpu_timeout_to_jiffies(s64 timeout_ns, bool absolute)
{
	if (absolute)
		timeout_ns = max_t(s64, timeout_ns - ktime_get_ns(), 0);
	if (!timeout_ns)
		return 0;
	return clamp_t(u64, nsecs_to_jiffies64(timeout_ns), 1, MAX_SCHEDULE_TIMEOUT);
}

int tpu_wait_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct tpu_file *tfile = file->driver_priv;
	struct drm_tpu_wait *args = data;
	struct tpu_job *job = NULL;
	long ret;

	if (args->reserved || args->pad) {
		tpu_dbg(drm, JOB, "wait: reserved fields must be 0\n");
		return -EINVAL;
	}
	if (args->flags & ~DRM_TPU_WAIT_ABSOLUTE) {
		tpu_dbg(drm, JOB, "wait: unknown flags 0x%x\n", args->flags);
		return -EINVAL;
	}
	if (args->timeout_ns < 0) {
		tpu_dbg(drm, JOB, "wait: negative timeout %lld\n", args->timeout_ns);
		return -EINVAL;
	}

	mutex_lock(&tfile->lock);
	if (args->job_id <= U32_MAX)
		job = xa_load(&tfile->jobs, args->job_id);
	if (job)
		kref_get(&job->refcount);
	mutex_unlock(&tfile->lock);
	if (!job) {
		tpu_dbg(drm, JOB, "wait: no job with id %llu\n", args->job_id);
		return -ENOENT;
	}

	ret = dma_fence_wait_timeout(job->done, true,
				     tpu_timeout_to_jiffies(args->timeout_ns,
							    args->flags & DRM_TPU_WAIT_ABSOLUTE));
	if (ret > 0) {
		/* Pairs with the (fully ordered) signalling of the job's fences. */
		smp_rmb();
		args->status = job->result.status;
		args->error_pc = job->result.error_pc;
		args->fault_addr = job->result.fault_addr;
		args->cycles = job->result.cycles;
		args->macs = job->result.macs;
		args->mxu_busy_cycles = job->result.mxu_busy_cycles;
		args->stall_cycles = job->result.stall_cycles;
		args->link_cycles = job->result.link_cycles;
		args->link_tx_bytes = job->result.link_tx_bytes;
		args->link_rx_bytes = job->result.link_rx_bytes;

		mutex_lock(&tfile->lock);
		if (xa_erase(&tfile->jobs, args->job_id) == job) {
			tfile->job_count--;
			tpu_job_put(job);
		}
		mutex_unlock(&tfile->lock);
		ret = 0;
	} else if (!ret) {
		ret = -ETIMEDOUT;
	}

	tpu_job_put(job);
	return ret;
}
