/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device address spaces: contexts, page tables and VA allocation.
 */
#ifndef TPU_MMU_H
#define TPU_MMU_H

#include <drm/drm_mm.h>
#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/uidgid.h>

#include "tpu_drv.h"

struct tpu_bo;
struct tpu_device;
struct tpu_pt;

/**
 * struct tpu_ctx - one device address space, the one of an open file
 * @refcount: held by the file, by each of its BOs and by each of its jobs
 * @tdev: the device
 * @id: index in the context table, the ctx_id of ring entries
 * @uid: the user who opened the file, whose contexts (max_user_contexts) this one counts against
 * @lock: protects @root's tables, @detached, @va and @bos
 * @root: level-0 page table; NULL once PCI remove has freed the tables (tpu_mmu_fini())
 * @detached: tables unmapping left empty while the card might still walk them (a TLB
 *	invalidation that did not complete): freed with the context or by PCI remove
 * @va: allocator of device virtual addresses
 * @bos: the buffers mapped (tpu_bo.ctx_node)
 * @node: link in the device's list of live contexts
 * @deferred: the tables and the id kept after the release while the card may still use them
 * @pinned: bytes of the context's buffer objects and page tables, counted against
 *	max_file_pinned_mb
 * @jobs: jobs of the context in flight, counted against max_file_jobs
 * @hangs: jobs of the context that timed out; changed under the device's reset_lock
 * @banned: the context had TPU_CTX_BAN_HANGS jobs time out: its jobs are no longer run
 * @busy_ns: time the card spent on the context's jobs (fdinfo drm-engine-mxu)
 * @cycles: modelled cycles of the context's jobs (fdinfo drm-cycles-mxu)
 * @link_cycles: modelled cycles its jobs kept link units busy (fdinfo drm-cycles-ici)
 * @link_tx_bytes: bytes its jobs sent on links (fdinfo tpu-ici-tx-bytes)
 * @link_rx_bytes: bytes its jobs received from links (fdinfo tpu-ici-rx-bytes)
 *
 * The page tables and the context id live until the last job that may use them has ended,
 * the last buffer of the context is freed (an exported buffer may outlive the file) and the
 * card dropped its translations: the context counts against its user's contexts until then.
 * A context holds a reference to the DRM device.
 */
struct tpu_ctx {
	struct kref refcount;
	struct tpu_device *tdev;
	u32 id;
	kuid_t uid;
	struct mutex lock;		/* page tables, VA allocator */
	struct tpu_pt *root;
	struct list_head detached;
	struct drm_mm va;
	struct list_head bos;
	struct list_head node;
	struct tpu_deferred deferred;
	atomic64_t pinned;
	atomic_t jobs;
	unsigned int hangs;
	bool banned;
	atomic64_t busy_ns;
	atomic64_t cycles;
	atomic64_t link_cycles;
	atomic64_t link_tx_bytes;
	atomic64_t link_rx_bytes;
};

int tpu_mmu_init(struct tpu_device *tdev);
struct tpu_ctx *tpu_ctx_create(struct tpu_device *tdev, kuid_t uid);
void tpu_ctx_put(struct tpu_ctx *ctx);
int tpu_ctx_map(struct tpu_ctx *ctx, struct tpu_bo *bo, struct sg_table *sgt, u64 size);
bool tpu_ctx_unmap(struct tpu_ctx *ctx, struct tpu_bo *bo);
void tpu_mmu_fini(struct tpu_device *tdev);

static inline struct tpu_ctx *tpu_ctx_get(struct tpu_ctx *ctx)
{
	kref_get(&ctx->refcount);
	return ctx;
}

#endif /* TPU_MMU_H */
