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
 * driver waits until the card reports the invalidation complete (TLB_INVAL_DONE, spec 1.3):
 * from then on no translation made before can be used, so no job of the context - even one
 * that reaches the buffer without listing it - can touch the pages, and they may be freed.
 */

/* The card is emulated, possibly under slow TCG: be generous. */
#define TPU_TLB_TIMEOUT_US	(1 * USEC_PER_SEC)
#include <drm/drm_drv.h>
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <linux/slab.h>

#include "tpu_debugfs.h"
#include "tpu_drv.h"
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
 * wait until it no longer uses any translation made before: the pages that were mapped may
 * be freed on return. A card without TLB_INVAL_DONE gives no completion: a read of a
 * register orders the posted write, which is all the driver can do then.
 */
static void tpu_ctx_flush_tlb(struct tpu_ctx *ctx)
{
	struct tpu_device *tdev = ctx->tdev;
	u32 before, now;
	int idx, ret;

	if (!drm_dev_enter(&tdev->drm, &idx)) {
		/* PCI remove: the card touches no memory once it is stopped. */
		wait_for_completion(&tdev->card_stopped);
		return;
	}
	mutex_lock(&tdev->tlb_lock);
	if (tdev->caps & TPU_CAP_TLB_DONE) {
		before = tpu_read(tdev, TPU_REG_TLB_INVAL_DONE);
		tpu_write(tdev, TPU_REG_TLB_INVAL, ctx->id);
		if (tpu_inject(tdev, TPU_INJECT_TLB_TIMEOUT))
			ret = -ETIMEDOUT;
		else
			ret = readl_poll_timeout(tdev->regs + TPU_REG_TLB_INVAL_DONE, now,
						 now != before, 10, TPU_TLB_TIMEOUT_US);
		if (ret)
			drm_err_ratelimited(&tdev->drm,
					    "TLB invalidation of context %u not done after %lu ms\n",
					    ctx->id, TPU_TLB_TIMEOUT_US / USEC_PER_MSEC);
		else
			tdev->tlb_invalidations++;
	} else {
		tpu_write(tdev, TPU_REG_TLB_INVAL, ctx->id);
		tpu_read(tdev, TPU_REG_STATUS);
	}
	mutex_unlock(&tdev->tlb_lock);
	drm_dev_exit(idx);
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

	ctx->root = tpu_pt_alloc(tdev, 0);
	if (!ctx->root) {
		ret = -ENOMEM;
		goto err_free;
	}

	ret = ida_alloc_range(&tdev->ctx_ida, 1, tdev->num_ctx - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_free_pt;
	ctx->id = ret;

	if (drm_dev_enter(&tdev->drm, &idx)) {
		tdev->ctx_table[ctx->id].reserved = 0;
		WRITE_ONCE(tdev->ctx_table[ctx->id].pt_root, ctx->root->dma | TPU_PTE_VALID);
		drm_dev_exit(idx);
	}
	return ctx;

err_free_pt:
	tpu_pt_free(tdev, ctx->root);
err_free:
	drm_mm_takedown(&ctx->va);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
	drm_dev_put(&tdev->drm);
	return ERR_PTR(ret);
}

static void tpu_ctx_release(struct kref *kref)
{
	struct tpu_ctx *ctx = container_of(kref, struct tpu_ctx, refcount);
	struct tpu_device *tdev = ctx->tdev;
	int idx;

	if (drm_dev_enter(&tdev->drm, &idx)) {
		WRITE_ONCE(tdev->ctx_table[ctx->id].pt_root, 0);
		drm_dev_exit(idx);
	}
	/* No job of the context runs; the card may still hold its translations. */
	tpu_ctx_flush_tlb(ctx);
	ida_free(&tdev->ctx_ida, ctx->id);
	tpu_pt_free(tdev, ctx->root);
	drm_mm_takedown(&ctx->va);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
	/* Last: this may be the final reference to the device. */
	drm_dev_put(&tdev->drm);
}

void tpu_ctx_put(struct tpu_ctx *ctx)
{
	kref_put(&ctx->refcount, tpu_ctx_release);
}

/**
 * tpu_ctx_map - allocate device VA for a buffer and map its pages, readable and writable
 * @ctx: the address space
 * @node: out, the allocated VA range (@size plus a guard page)
 * @sgt: the buffer's pages, DMA-mapped for the card
 * @size: bytes, a multiple of the page size, as many as @sgt holds
 *
 * Return: 0, -ENOSPC if the address space is full, or -ENOMEM.
 */
int tpu_ctx_map(struct tpu_ctx *ctx, struct drm_mm_node *node, struct sg_table *sgt, u64 size)
{
	struct sg_dma_page_iter iter;
	u64 va;
	u64 *pte;
	int ret;

	mutex_lock(&ctx->lock);
	ret = drm_mm_insert_node_generic(&ctx->va, node, size + TPU_PAGE_SIZE, TPU_PAGE_SIZE, 0,
					 DRM_MM_INSERT_BEST);
	if (ret)
		goto out_unlock;

	va = node->start;
	for_each_sgtable_dma_page(sgt, &iter, 0) {
		pte = tpu_pt_entry(ctx, va, true);
		if (IS_ERR(pte)) {
			ret = PTR_ERR(pte);
			/* A job may have walked the new entries already: invalidate too. */
			tpu_pt_clear(ctx, node->start, va - node->start);
			tpu_ctx_flush_tlb(ctx);
			drm_mm_remove_node(node);
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
 * @node: the VA range
 *
 * On return the card holds no translation of the buffer and no access through one is in
 * progress: its pages may be freed, even if a job of the context still runs.
 */
void tpu_ctx_unmap(struct tpu_ctx *ctx, struct drm_mm_node *node)
{
	mutex_lock(&ctx->lock);
	tpu_pt_clear(ctx, node->start, node->size);
	drm_mm_remove_node(node);
	tpu_ctx_flush_tlb(ctx);
	mutex_unlock(&ctx->lock);
}
