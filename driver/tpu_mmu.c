// SPDX-License-Identifier: GPL-2.0
/*
 * Device address spaces.
 *
 * The card translates every host address of a job through the page tables of the job's
 * context: the context table (one coherent DMA buffer, NUM_CTX entries) points at a 3-level
 * page table per context, each table one 4 KiB page of 512 entries, tables allocated on
 * demand as buffer objects are mapped and freed once unmapping left them empty (after the TLB
 * invalidation, as the buffer's pages); they count against the file's pinned memory
 * (tpu_limits.c) and are charged to the allocating task's memory cgroup. A context's VAs
 * are handed out by a drm_mm allocator with an unmapped guard page after each buffer, so an
 * overrun faults instead of touching the neighbour.
 *
 * Unmapping: the entries are cleared, then the context's TLB entries invalidated, and the
 * driver waits until the card reports the invalidation complete (TLB_INVAL_DONE, spec 1.3,
 * which the driver requires): from then on no translation made before can be used, so no job of
 * the context - even one that reaches the buffer without listing it - can touch the pages, and
 * they may be freed. If the invalidation does not complete, the card is wedged; while it is, and
 * while the device is being unplugged, freed pages and tables are kept (tpu_device_quarantine())
 * until PCI remove has stopped the card. Remove also frees the tables of every context and
 * undoes its buffers' DMA mappings (tpu_mmu_fini()): files may stay open after it.
 */

/* The card is emulated, possibly under slow TCG: be generous. */
#define TPU_TLB_TIMEOUT_US	(1 * USEC_PER_SEC)
#include <drm/drm_drv.h>
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <linux/slab.h>

#include "tpu_debugfs.h"
#include "tpu_device.h"
#include "tpu_drv.h"
#include "tpu_gem.h"
#include "tpu_limits.h"
#include "tpu_mmu.h"

static_assert(PAGE_SIZE == TPU_PAGE_SIZE);

/**
 * struct tpu_pt - one page table
 * @entries: TPU_PT_ENTRIES entries read by the device
 * @dma: bus address of @entries
 * @children: tables of the next level by index; NULL on the leaf level
 * @used: valid entries (children, on the upper levels)
 * @link: in a list of tables detached from the tree, to be freed after a TLB invalidation
 */
struct tpu_pt {
	u64 *entries;
	dma_addr_t dma;
	struct tpu_pt **children;
	unsigned int used;
	struct list_head link;
};

int tpu_mmu_init(struct tpu_device *tdev)
{
	tdev->ctx_table = dmam_alloc_coherent(&tdev->pdev->dev,
					      tdev->num_ctx * sizeof(*tdev->ctx_table),
					      &tdev->ctx_table_dma, GFP_KERNEL);
	if (!tdev->ctx_table)
		return -ENOMEM;
	ida_init(&tdev->ctx_ida);
	return 0;
}

/* Bytes of a table, counted against the context's pinned memory: entries and child pointers. */
static u64 tpu_pt_bytes(const struct tpu_pt *pt)
{
	return TPU_PAGE_SIZE + (pt->children ? TPU_PT_ENTRIES * sizeof(*pt->children) : 0);
}

/* Free @pt and the tables under it, giving back the pinned memory they were counted as. */
static void tpu_pt_free(struct tpu_ctx *ctx, struct tpu_pt *pt)
{
	struct tpu_device *tdev = ctx->tdev;
	int i;

	tpu_limits_unpin(ctx, tpu_pt_bytes(pt));
	if (pt->children) {
		for (i = 0; i < TPU_PT_ENTRIES; i++)
			if (pt->children[i])
				tpu_pt_free(ctx, pt->children[i]);
		kfree(pt->children);
	}
	dma_free_coherent(&tdev->pdev->dev, TPU_PAGE_SIZE, pt->entries, pt->dma);
	kfree(pt);
	atomic_dec(&tdev->page_tables);
}

/*
 * A new, empty table of @level for @ctx, counted against its pinned memory (and charged to
 * the allocating task's memory cgroup). Returns an ERR_PTR: -EDQUOT or -ENOSPC over the
 * file's or device's pinned-memory limit, -ENOMEM.
 */
static struct tpu_pt *tpu_pt_alloc(struct tpu_ctx *ctx, int level)
{
	struct tpu_device *tdev = ctx->tdev;
	struct tpu_pt *pt;
	int ret;

	pt = kzalloc(sizeof(*pt), GFP_KERNEL_ACCOUNT);
	if (!pt)
		return ERR_PTR(-ENOMEM);
	ret = -ENOMEM;
	pt->entries = dma_alloc_coherent(&tdev->pdev->dev, TPU_PAGE_SIZE, &pt->dma,
					 GFP_KERNEL_ACCOUNT);
	if (!pt->entries)
		goto err_free;
	if (level < TPU_PT_LEVELS - 1) {
		pt->children = kcalloc(TPU_PT_ENTRIES, sizeof(*pt->children), GFP_KERNEL_ACCOUNT);
		if (!pt->children)
			goto err_free_entries;
	}
	ret = tpu_limits_pin(ctx, tpu_pt_bytes(pt));
	if (ret) {
		tpu_dbg(&tdev->drm, LIMITS, "page table: over the %s's pinned-memory limit\n",
			ret == -EDQUOT ? "file" : "device");
		goto err_free_children;
	}
	atomic_inc(&tdev->page_tables);
	return pt;

err_free_children:
	kfree(pt->children);
err_free_entries:
	dma_free_coherent(&tdev->pdev->dev, TPU_PAGE_SIZE, pt->entries, pt->dma);
err_free:
	kfree(pt);
	return ERR_PTR(ret);
}

/*
 * The leaf table holding the entry of @va, allocating missing tables on the way. Returns an
 * ERR_PTR if an allocation failed.
 */
static struct tpu_pt *tpu_pt_leaf(struct tpu_ctx *ctx, u64 va)
{
	struct tpu_pt *pt = ctx->root;
	int level;

	for (level = 0; level < TPU_PT_LEVELS - 1; level++) {
		unsigned int idx = TPU_PT_INDEX(va, level);
		struct tpu_pt *child = pt->children[idx];

		if (!child) {
			child = tpu_pt_alloc(ctx, level + 1);
			if (IS_ERR(child))
				return child;
			pt->children[idx] = child;
			pt->used++;
			WRITE_ONCE(pt->entries[idx], child->dma | TPU_PTE_VALID);
		}
		pt = child;
	}
	return pt;
}

/* Bytes of VA one entry of a table of @level maps. */
#define TPU_PT_SPAN(level)	(1ull << (TPU_PAGE_SHIFT + 9 * (TPU_PT_LEVELS - 1 - (level))))

/*
 * Clear the leaf entries of [@va, @end) under @pt, a table of @level, and detach the tables
 * left empty under it onto @freed: the card may still walk them until the next TLB
 * invalidation completes, tpu_pt_free_detached() frees them after it.
 */
static void tpu_pt_clear(struct tpu_pt *pt, int level, u64 va, u64 end, struct list_head *freed)
{
	u64 next;

	for (; va < end; va = next) {
		unsigned int idx = TPU_PT_INDEX(va, level);
		struct tpu_pt *child;

		next = min(round_down(va, TPU_PT_SPAN(level)) + TPU_PT_SPAN(level), end);
		if (!pt->children) {
			if (pt->entries[idx]) {
				WRITE_ONCE(pt->entries[idx], 0);
				pt->used--;
			}
			continue;
		}
		child = pt->children[idx];
		if (!child)
			continue;
		tpu_pt_clear(child, level + 1, va, next, freed);
		if (!child->used) {
			WRITE_ONCE(pt->entries[idx], 0);
			pt->children[idx] = NULL;
			pt->used--;
			list_add(&child->link, freed);
		}
	}
}

/* Free the tables tpu_pt_clear() detached, once the card's TLB holds nothing of them. */
static void tpu_pt_free_detached(struct tpu_ctx *ctx, struct list_head *freed)
{
	struct tpu_pt *pt, *tmp;

	list_for_each_entry_safe(pt, tmp, freed, link) {
		list_del(&pt->link);
		tpu_pt_free(ctx, pt);
	}
}

/*
 * Make the card forget cached translations of @ctx, the tables being updated already, and
 * wait until it no longer uses any translation made before (TLB_INVAL_DONE).
 *
 * Return: true if the pages that were mapped may be freed. False if that cannot be known: the
 * card is wedged (an invalidation that does not complete wedges it), or the device is being
 * unplugged - PCI remove stops the card only once the drm_dev_enter() sections have ended, maybe
 * the caller's own, so this does not wait for it. The caller then hands the pages to
 * tpu_device_quarantine().
 */
static bool tpu_ctx_flush_tlb(struct tpu_ctx *ctx)
{
	struct tpu_device *tdev = ctx->tdev;
	bool done = false;
	u32 before, now;
	int idx, ret;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return false;
	mutex_lock(&tdev->tlb_lock);
	if (!tpu_device_wedged(tdev)) {
		before = tpu_read(tdev, TPU_REG_TLB_INVAL_DONE);
		tpu_write(tdev, TPU_REG_TLB_INVAL, ctx->id);
		if (tpu_inject(tdev, TPU_INJECT_TLB_TIMEOUT))
			ret = -ETIMEDOUT;
		else
			ret = readl_poll_timeout(tdev->regs + TPU_REG_TLB_INVAL_DONE, now,
						 now != before, 10, TPU_TLB_TIMEOUT_US);
		if (ret) {
			drm_err(&tdev->drm, "TLB invalidation of context %u not done after %lu ms\n",
				ctx->id, TPU_TLB_TIMEOUT_US / USEC_PER_MSEC);
			/* A late completion would satisfy a later invalidation early. */
			tpu_device_wedge(tdev, "a TLB invalidation did not complete");
		} else {
			tdev->tlb_invalidations++;
			done = true;
		}
	}
	mutex_unlock(&tdev->tlb_lock);
	drm_dev_exit(idx);
	return done;
}

/**
 * tpu_ctx_create - create an empty address space with its own context id
 * @tdev: the device
 * @uid: the opening user, whose contexts it counts against until it is released
 *
 * Return: the context with one reference, or an ERR_PTR (-EDQUOT: @uid holds
 * max_user_contexts contexts; -ENOSPC: all context ids in use; -ENODEV: the device is gone).
 */
struct tpu_ctx *tpu_ctx_create(struct tpu_device *tdev, kuid_t uid)
{
	struct tpu_ctx *ctx;
	int ret, idx;

	ret = tpu_limits_open(tdev, uid);
	if (ret)
		return ERR_PTR(ret);
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx) {
		tpu_limits_close(tdev, uid);
		return ERR_PTR(-ENOMEM);
	}
	ctx->uid = uid;
	kref_init(&ctx->refcount);
	ctx->tdev = tdev;
	drm_dev_get(&tdev->drm);
	mutex_init(&ctx->lock);
	drm_mm_init(&ctx->va, TPU_VA_START, TPU_VA_SIZE);
	INIT_LIST_HEAD(&ctx->bos);
	INIT_LIST_HEAD(&ctx->detached);

	ctx->root = tpu_pt_alloc(ctx, 0);
	if (IS_ERR(ctx->root)) {
		ret = PTR_ERR(ctx->root);
		goto err_free;
	}

	ret = ida_alloc_range(&tdev->ctx_ida, 1, tdev->num_ctx - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_free_pt;
	ctx->id = ret;

	mutex_lock(&tdev->ctxs_lock);
	if (tdev->ctxs_gone) {
		mutex_unlock(&tdev->ctxs_lock);
		ret = -ENODEV;
		goto err_free_id;
	}
	list_add_tail(&ctx->node, &tdev->ctxs);
	mutex_unlock(&tdev->ctxs_lock);

	if (drm_dev_enter(&tdev->drm, &idx)) {
		tdev->ctx_table[ctx->id].reserved = 0;
		WRITE_ONCE(tdev->ctx_table[ctx->id].pt_root, ctx->root->dma | TPU_PTE_VALID);
		drm_dev_exit(idx);
	}
	return ctx;

err_free_id:
	ida_free(&tdev->ctx_ida, ctx->id);
err_free_pt:
	tpu_pt_free(ctx, ctx->root);
err_free:
	drm_mm_takedown(&ctx->va);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
	tpu_limits_close(tdev, uid);
	drm_dev_put(&tdev->drm);
	return ERR_PTR(ret);
}

/* Free the tables of @ctx, those in the tree and those detached from it; the card is done. */
static void tpu_ctx_free_tables(struct tpu_ctx *ctx)
{
	tpu_pt_free_detached(ctx, &ctx->detached);
	if (ctx->root)
		tpu_pt_free(ctx, ctx->root);
	ctx->root = NULL;
}

static void tpu_ctx_free(struct tpu_ctx *ctx)
{
	struct tpu_device *tdev = ctx->tdev;

	ida_free(&tdev->ctx_ida, ctx->id);
	tpu_ctx_free_tables(ctx);
	drm_mm_takedown(&ctx->va);
	mutex_destroy(&ctx->lock);
	tpu_limits_close(tdev, ctx->uid);
	kfree(ctx);
	/* Last: this may be the final reference to the device. */
	drm_dev_put(&tdev->drm);
}

/*
 * After clearing entries of @ctx: free the tables tpu_pt_clear() detached into @freed if the
 * card dropped its translations (@flushed), else keep them with the context until it is freed
 * (a context whose flush fails is quarantined too) or PCI remove frees its tables.
 */
static void tpu_ctx_retire_tables(struct tpu_ctx *ctx, struct list_head *freed, bool flushed)
{
	if (flushed)
		tpu_pt_free_detached(ctx, freed);
	else
		list_splice(freed, &ctx->detached);
}

static void tpu_ctx_free_deferred(struct tpu_deferred *deferred)
{
	tpu_ctx_free(container_of(deferred, struct tpu_ctx, deferred));
}

static void tpu_ctx_release(struct kref *kref)
{
	struct tpu_ctx *ctx = container_of(kref, struct tpu_ctx, refcount);
	struct tpu_device *tdev = ctx->tdev;
	int idx;

	mutex_lock(&tdev->ctxs_lock);
	list_del(&ctx->node);
	mutex_unlock(&tdev->ctxs_lock);
	if (drm_dev_enter(&tdev->drm, &idx)) {
		WRITE_ONCE(tdev->ctx_table[ctx->id].pt_root, 0);
		drm_dev_exit(idx);
	}
	/*
	 * No job of the context runs; the card may still hold its translations. Unless it is
	 * known to have dropped them, the tables and the id are kept until it is stopped.
	 */
	ctx->deferred.free = tpu_ctx_free_deferred;
	if (tpu_ctx_flush_tlb(ctx) || !tpu_device_quarantine(tdev, &ctx->deferred))
		tpu_ctx_free(ctx);
}

void tpu_ctx_put(struct tpu_ctx *ctx)
{
	kref_put(&ctx->refcount, tpu_ctx_release);
}

/**
 * tpu_ctx_map - allocate device VA for a buffer and map its pages, readable and writable
 * @ctx: the address space
 * @bo: the buffer; its VA range (@size plus a guard page) goes into bo->va
 * @sgt: the buffer's pages, DMA-mapped for the card
 * @size: bytes, a multiple of the page size, as many as @sgt holds
 *
 * On failure bo->va may stay allocated (its entries cleared): the buffer's free unmaps it.
 *
 * Return: 0, -ENOSPC if the address space is full, -EDQUOT or -ENOSPC if the page tables
 * needed are over the file's or the device's pinned-memory limit, -ENOMEM, or -ENODEV once the
 * device is gone.
 */
int tpu_ctx_map(struct tpu_ctx *ctx, struct tpu_bo *bo, struct sg_table *sgt, u64 size)
{
	struct drm_mm_node *node = &bo->va;
	struct sg_dma_page_iter iter;
	struct tpu_pt *leaf;
	LIST_HEAD(freed);
	unsigned int idx;
	bool flushed;
	u64 va;
	int ret;

	mutex_lock(&ctx->lock);
	if (!ctx->root) {
		ret = -ENODEV;
		goto out_unlock;
	}
	ret = drm_mm_insert_node_generic(&ctx->va, node, size + TPU_PAGE_SIZE, TPU_PAGE_SIZE, 0,
					 DRM_MM_INSERT_BEST);
	if (ret)
		goto out_unlock;
	list_add_tail(&bo->ctx_node, &ctx->bos);

	va = node->start;
	for_each_sgtable_dma_page(sgt, &iter, 0) {
		leaf = tpu_pt_leaf(ctx, va);
		if (IS_ERR(leaf)) {
			ret = PTR_ERR(leaf);
			/* A job may have walked the new entries already: invalidate too. */
			tpu_pt_clear(ctx->root, 0, node->start, node->start + node->size, &freed);
			flushed = tpu_ctx_flush_tlb(ctx);
			tpu_ctx_retire_tables(ctx, &freed, flushed);
			if (flushed) {
				list_del_init(&bo->ctx_node);
				drm_mm_remove_node(node);
			}
			goto out_unlock;
		}
		idx = TPU_PT_INDEX(va, TPU_PT_LEVELS - 1);
		if (!leaf->entries[idx])
			leaf->used++;
		WRITE_ONCE(leaf->entries[idx], sg_page_iter_dma_address(&iter) | TPU_PTE_VALID |
			   TPU_PTE_READ | TPU_PTE_WRITE);
		va += TPU_PAGE_SIZE;
	}
out_unlock:
	mutex_unlock(&ctx->lock);
	return ret;
}

/**
 * tpu_ctx_unmap - unmap a buffer mapped by tpu_ctx_map() and release its VA range
 * @ctx: the address space
 * @bo: the buffer
 *
 * The page tables left empty are freed too, once the card dropped its translations.
 *
 * Return: true if the card holds no translation of the buffer and no access through one is in
 * progress: its pages may be freed, even if a job of the context still runs. False if that
 * cannot be known (tpu_ctx_flush_tlb()): the pages go to tpu_device_quarantine().
 */
bool tpu_ctx_unmap(struct tpu_ctx *ctx, struct tpu_bo *bo)
{
	LIST_HEAD(freed);
	bool done;

	mutex_lock(&ctx->lock);
	if (ctx->root)
		tpu_pt_clear(ctx->root, 0, bo->va.start, bo->va.start + bo->va.size, &freed);
	list_del_init(&bo->ctx_node);
	drm_mm_remove_node(&bo->va);
	done = tpu_ctx_flush_tlb(ctx);
	tpu_ctx_retire_tables(ctx, &freed, done);
	mutex_unlock(&ctx->lock);
	return done;
}

/**
 * tpu_mmu_fini - unmap every address space, in PCI remove
 * @tdev: the device, its card stopped
 *
 * Files (and the buffers and jobs they hold) may outlive the driver's binding: their page tables
 * are freed and their buffers' DMA mappings undone now, while the device is still bound. Their
 * mappings into userspace stay. Contexts created from now on fail with -ENODEV.
 */
void tpu_mmu_fini(struct tpu_device *tdev)
{
	struct tpu_ctx *ctx;
	struct tpu_bo *bo;

	mutex_lock(&tdev->ctxs_lock);
	tdev->ctxs_gone = true;
	list_for_each_entry(ctx, &tdev->ctxs, node) {
		mutex_lock(&ctx->lock);
		list_for_each_entry(bo, &ctx->bos, ctx_node)
			tpu_gem_unmap_dma(bo);
		tpu_ctx_free_tables(ctx);
		mutex_unlock(&ctx->lock);
	}
	mutex_unlock(&tdev->ctxs_lock);
}
