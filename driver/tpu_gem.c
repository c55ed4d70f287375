// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer objects.
 *
 * A BO is a shmem GEM object whose pages are pinned and DMA-mapped at creation and mapped
 * into the creating file's device address space until the BO is freed. Jobs hold references
 * to the BOs they list, so those outlive the jobs. A job can reach every BO of its context,
 * listed or not: freeing one clears its mapping and waits for the card's TLB invalidation to
 * complete (tpu_ctx_unmap()) before the pages go, so the job faults instead of touching them;
 * if the card cannot be known to have dropped them, they are kept until PCI remove stopped it.
 * Userspace maps BOs with mmap() at the offset DRM_IOCTL_TPU_BO_INFO reports.
 *
 * The DMA mapping may bounce (swiotlb=force, SEV and TDX guests): the card then works on
 * bounce buffers, not on the pages the CPU sees. The BOs a job lists are synced for the card
 * before it runs and, those it may write, back for the CPU before its fence signals; a BO a
 * job reaches without listing it is not.
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/tpu_accel.h>
#include <linux/dma-mapping.h>

#include "tpu_device.h"
#include "tpu_drv.h"
#include "tpu_gem.h"
#include "tpu_limits.h"
#include "tpu_mmu.h"

static void tpu_bo_free(struct tpu_bo *bo)
{
	struct tpu_ctx *ctx = bo->ctx;

	if (ctx)
		tpu_limits_unpin(ctx, bo->base.base.size);
	drm_gem_shmem_free(&bo->base);
	/* Last: the context may hold the final reference to the device (obj->dev). */
	if (ctx)
		tpu_ctx_put(ctx);
}

static void tpu_bo_free_deferred(struct tpu_deferred *deferred)
{
	tpu_bo_free(container_of(deferred, struct tpu_bo, deferred));
}

static void tpu_gem_free(struct drm_gem_object *obj)
{
	struct tpu_bo *bo = to_tpu_bo(obj);

	/* Pages the card may still reach are kept until it no longer can (tpu_ctx_unmap()). */
	if (bo->ctx && drm_mm_node_allocated(&bo->va) && !tpu_ctx_unmap(bo->ctx, bo)) {
		bo->deferred.free = tpu_bo_free_deferred;
		if (tpu_device_quarantine(bo->ctx->tdev, &bo->deferred))
			return;
	}
	tpu_bo_free(bo);
}

/**
 * tpu_gem_unmap_dma - undo the DMA mapping of a buffer's pages, in PCI remove
 * @bo: the buffer, of a context being unmapped (tpu_mmu_fini()), the card stopped
 *
 * The pages stay the buffer's (and in the mappings of processes) until it is freed.
 */
void tpu_gem_unmap_dma(struct tpu_bo *bo)
{
	struct drm_gem_shmem_object *shmem = &bo->base;

	dma_resv_lock(shmem->base.resv, NULL);
	if (shmem->sgt) {
		dma_unmap_sgtable(shmem->base.dev->dev, shmem->sgt, DMA_BIDIRECTIONAL, 0);
		sg_free_table(shmem->sgt);
		kfree(shmem->sgt);
		shmem->sgt = NULL;
	}
	dma_resv_unlock(shmem->base.resv);
}

/* fdinfo: a BO's pages are pinned from its creation to its free. */
static enum drm_gem_object_status tpu_gem_status(struct drm_gem_object *obj)
{
	return to_drm_gem_shmem_obj(obj)->pages ? DRM_GEM_OBJECT_RESIDENT : 0;
}

static const struct drm_gem_object_funcs tpu_gem_funcs = {
	.free = tpu_gem_free,
	.status = tpu_gem_status,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/* drm_driver.gem_create_object: drm_gem_shmem_create() allocates a struct tpu_bo. */
struct drm_gem_object *tpu_gem_create_object(struct drm_device *drm, size_t size)
{
	struct tpu_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &tpu_gem_funcs;
	INIT_LIST_HEAD(&bo->ctx_node);
	return &bo->base.base;
}

/**
 * tpu_bo_sync_for_device - hand a BO's contents to the card before a job that lists it runs
 * @obj: the BO
 * @write: the job may write it (tpu_bo_sync_for_cpu() brings the card's writes back)
 */
void tpu_bo_sync_for_device(struct drm_gem_object *obj, bool write)
{
	dma_sync_sgtable_for_device(obj->dev->dev, to_drm_gem_shmem_obj(obj)->sgt,
				    write ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE);
}

/**
 * tpu_bo_sync_for_cpu - make the card's writes to a BO visible to the CPU, once a job that
 * may have written it ended; may be called in interrupt context
 * @obj: the BO
 */
void tpu_bo_sync_for_cpu(struct drm_gem_object *obj)
{
	dma_sync_sgtable_for_cpu(obj->dev->dev, to_drm_gem_shmem_obj(obj)->sgt, DMA_FROM_DEVICE);
}

int tpu_bo_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct tpu_file *tfile = file->driver_priv;
	struct drm_tpu_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	struct sg_table *sgt;
	struct tpu_bo *bo;
	u64 size;
	int ret, idx;

	if (args->flags) {
		tpu_dbg(drm, IOCTL, "bo_create: flags 0x%x, must be 0\n", args->flags);
		return -EINVAL;
	}
	if (!args->size || args->size > TPU_BO_MAX_SIZE) {
		tpu_dbg(drm, MEM, "bo_create: size %llu not in [1, %u]\n", args->size,
			TPU_BO_MAX_SIZE);
		return -EINVAL;
	}
	size = PAGE_ALIGN(args->size);

	ret = tpu_limits_pin(tfile->ctx, size);
	if (ret) {
		tpu_dbg(drm, LIMITS, "bo_create: %llu bytes over the %s's pinned-memory limit\n",
			size, ret == -EDQUOT ? "file" : "device");
		return ret;
	}
	shmem = drm_gem_shmem_create(drm, size);
	if (IS_ERR(shmem)) {
		tpu_limits_unpin(tfile->ctx, size);
		return PTR_ERR(shmem);
	}
	bo = container_of(shmem, struct tpu_bo, base);
	/* From here the BO's free gives the pinned bytes back. */
	bo->ctx = tpu_ctx_get(tfile->ctx);

	/* DMA-mapped only while the device is bound: PCI remove undoes it (tpu_mmu_fini()). */
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out_put;
	}
	sgt = drm_gem_shmem_get_pages_sgt(shmem);
	ret = IS_ERR(sgt) ? PTR_ERR(sgt) : tpu_ctx_map(tfile->ctx, bo, sgt, size);
	drm_dev_exit(idx);
	if (ret)
		goto out_put;

	ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	if (ret)
		goto out_put;
	args->size = size;
	args->device_addr = bo->va.start;

out_put:
	/* The handle holds the BO now; on failure this frees it. */
	drm_gem_object_put(&shmem->base);
	return ret;
}

int tpu_bo_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_tpu_bo_info *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad) {
		tpu_dbg(drm, IOCTL, "bo_info: pad 0x%x, must be 0\n", args->pad);
		return -EINVAL;
	}
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj) {
		tpu_dbg(drm, MEM, "bo_info: no BO with handle %u\n", args->handle);
		return -ENOENT;
	}

	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
		args->device_addr = to_tpu_bo(obj)->va.start;
		args->size = obj->size;
	}
	drm_gem_object_put(obj);
	return ret;
}
