/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Buffer objects: shmem-backed, pinned and mapped into their file's address space.
 */
#ifndef TPU_GEM_H
#define TPU_GEM_H

#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>
#include <linux/list.h>

#include "tpu_drv.h"

struct tpu_ctx;

/**
 * struct tpu_bo - a buffer object
 * @base: shmem GEM object, the base object
 * @ctx: address space of the creating file: the buffer's pages count against its pinned memory
 * @va: device virtual address range of the buffer (plus a guard page), once mapped
 * @ctx_node: link in the context's list of mapped buffers
 * @deferred: the buffer kept after its free while the card may still reach its pages
 */
struct tpu_bo {
	struct drm_gem_shmem_object base;
	struct tpu_ctx *ctx;
	struct drm_mm_node va;
	struct list_head ctx_node;
	struct tpu_deferred deferred;
};

static inline struct tpu_bo *to_tpu_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct tpu_bo, base);
}

struct drm_gem_object *tpu_gem_create_object(struct drm_device *drm, size_t size);
void tpu_bo_sync_for_device(struct drm_gem_object *obj, bool write);
void tpu_bo_sync_for_cpu(struct drm_gem_object *obj);
void tpu_gem_unmap_dma(struct tpu_bo *bo);
int tpu_bo_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int tpu_bo_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* TPU_GEM_H */
