// SPDX-License-Identifier: GPL-2.0
/*
 * Device address spaces.
 *
 * The card translates every host address of a job through the page tables of the job's
 * context: the context table (one coherent DMA buffer, NUM_CTX entries) points at a 3-level
 * page table per context, each table one 4 KiB page of 512 entries, tables allocated on
 * demand as buffer objects are mapped. A context's VAs are handed out by a drm_mm allocator
 * with an unmapped guard page after each buffer, so an overrun faults instead of touching
 * the neighbour.
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
#include "tpu_mmu.h"

static_assert(PAGE_SIZE == TPU_PAGE_SIZE);

/**
 * struct tpu_pt - one page table
 * @entries: TPU_PT_ENTRIES entries read by the device
 * @dma: bus address of @entries
 * @children: tables of the next level by index; NULL on the leaf level
 */
struct tpu_pt {
	u64 *entries;
	dma_addr_t dma;
	struct tpu_pt **children;
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

static void tpu_pt_free(struct tpu_device *tdev, struct tpu_pt *pt)
{
	int i;

	if (pt->children) {
		for (i = 0; i < TPU_PT_ENTRIES; i++)
			if (pt->children[i])
				tpu_pt_free(tdev, pt->children[i]);
		kfree(pt->children);
	}
	dma_free_coherent(&tdev->pdev->dev, TPU_PAGE_SIZE, pt->entries, pt->dma);
	kfree(pt);
}

static struct tpu_pt *tpu_pt_alloc(struct tpu_device *tdev, int level)
{
	struct tpu_pt *pt = kzalloc(sizeof(*pt), GFP_KERNEL);

	if (!pt)
		return NULL;
	pt->entries = dma_alloc_coherent(&tdev->pdev->dev, TPU_PAGE_SIZE, &pt->dma, GFP_KERNEL);
	if (!pt->entries)
		goto err_free;
	if (level < TPU_PT_LEVELS - 1) {
		pt->children = kcalloc(TPU_PT_ENTRIES, sizeof(*pt->children), GFP_KERNEL);
		if (!pt->children)
			goto err_free_entries;
	}
	return pt;

err_free_entries:
	dma_free_coherent(&tdev->pdev->dev, TPU_PAGE_SIZE, pt->entries, pt->dma);
err_free:
	kfree(pt);
	return NULL;
}

/*
 * The leaf entry of @va, allocating missing tables on the way if @alloc. Returns NULL if a
 * table is missing and !@alloc, an ERR_PTR if an allocation failed.
 */
static u64 *tpu_pt_entry(struct tpu_ctx *ctx, u64 va, bool alloc)
{
	struct tpu_pt *pt = ctx->root;
	int level;

	for (level = 0; level < TPU_PT_LEVELS - 1; level++) {
		unsigned int idx = TPU_PT_INDEX(va, level);
		struct tpu_pt *child = pt->children[idx];

		if (!child) {
			if (!alloc)
				return NULL;
			child = tpu_pt_alloc(ctx->tdev, level + 1);
			if (!child)
				return ERR_PTR(-ENOMEM);
			pt->children[idx] = child;
			WRITE_ONCE(pt->entries[idx], child->dma | TPU_PTE_VALID);
		}
		pt = child;
	}
	return &pt->entries[TPU_PT_INDEX(va, TPU_PT_LEVELS - 1)];
}

static void tpu_pt_clear(struct tpu_ctx *ctx, u64 va, u64 size)
{
	u64 end = va + size;
	u64 *pte;

	for (; va < end; va += TPU_PAGE_SIZE) {
		pte = tpu_pt_entry(ctx, va, false);
		if (pte)
			WRITE_ONCE(*pte, 0);
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
 *
 * Return: the context with one reference, or an ERR_PTR (-ENOSPC: all context ids in use).
 */
struct tpu_ctx *tpu_ctx_create(struct tpu_device *tdev)
{
	struct tpu_ctx *ctx;
	int ret, idx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	kref_init(&ctx->refcount);
	ctx->tdev = tdev;
	drm_dev_get(&tdev->drm);
	mutex_init(&ctx->lock);
	drm_mm_init(&ctx->va, TPU_VA_START, TPU_VA_SIZE);
	INIT_LIST_HEAD(&ctx->bos);

	ctx->root = tpu_pt_alloc(tdev, 0);
	if (!ctx->root) {
		ret = -ENOMEM;
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
	tpu_pt_free(tdev, ctx->root);
err_free:
	drm_mm_takedown(&ctx->va);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
	drm_dev_put(&tdev->drm);
	return ERR_PTR(ret);
}

static void tpu_ctx_free(struct tpu_ctx *ctx)
{
	struct tpu_device *tdev = ctx->tdev;

	ida_free(&tdev->ctx_ida, ctx->id);
	if (ctx->root)
		tpu_pt_free(tdev, ctx->root);
	drm_mm_takedown(&ctx->va);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
	/* Last: this may be the final reference to the device. */
	drm_dev_put(&tdev->drm);
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
 * Return: 0, -ENOSPC if the address space is full, -ENOMEM, or -ENODEV once the device is gone.
 */
int tpu_ctx_map(struct tpu_ctx *ctx, struct tpu_bo *bo, struct sg_table *sgt, u64 size)
{
	struct drm_mm_node *node = &bo->va;
	struct sg_dma_page_iter iter;
	u64 va;
	u64 *pte;
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
		pte = tpu_pt_entry(ctx, va, true);
		if (IS_ERR(pte)) {
			ret = PTR_ERR(pte);
			/* A job may have walked the new entries already: invalidate too. */
			tpu_pt_clear(ctx, node->start, va - node->start);
			if (tpu_ctx_flush_tlb(ctx)) {
				list_del_init(&bo->ctx_node);
				drm_mm_remove_node(node);
			}
			goto out_unlock;
		}
		WRITE_ONCE(*pte, sg_page_iter_dma_address(&iter) | TPU_PTE_VALID | TPU_PTE_READ |
			   TPU_PTE_WRITE);
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
 * Return: true if the card holds no translation of the buffer and no access through one is in
 * progress: its pages may be freed, even if a job of the context still runs. False if that
 * cannot be known (tpu_ctx_flush_tlb()): the pages go to tpu_device_quarantine().
 */
bool tpu_ctx_unmap(struct tpu_ctx *ctx, struct tpu_bo *bo)
{
	bool done;

	mutex_lock(&ctx->lock);
	if (ctx->root)
		tpu_pt_clear(ctx, bo->va.start, bo->va.size);
	list_del_init(&bo->ctx_node);
	drm_mm_remove_node(&bo->va);
	done = tpu_ctx_flush_tlb(ctx);
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
		if (ctx->root)
			tpu_pt_free(tdev, ctx->root);
		ctx->root = NULL;
		mutex_unlock(&ctx->lock);
	}
	mutex_unlock(&tdev->ctxs_lock);
}
