/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device-wide and per-file state of the tpu DRM accel driver, register access.
 */
#ifndef TPU_DRV_H
#define TPU_DRV_H

#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/tpu_accel.h>
#include <drm/gpu_scheduler.h>
#include <linux/completion.h>
#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "tpu_debug.h"
#include "tpu_hw.h"
#include "tpu_limits.h"

#define TPU_DRIVER_NAME		"tpu"

/*
 * The driver uses every command queue of the card, up to this many, each with a ring of
 * TPU_RING_ENTRIES entries and a scheduler of its own.
 */
#define TPU_MAX_QUEUES		8
#define TPU_RING_ENTRIES	256

/* Per-file device address space handed out by the VA allocator. */
#define TPU_VA_START		0x100000ull
#define TPU_VA_SIZE		((1ull << TPU_VA_BITS) - TPU_VA_START)

/* Performance counters: TPU_REG_CNT_CYCLES .. TPU_REG_CNT_TLB_MISSES, 8 bytes apart. */
#define TPU_NUM_COUNTERS	((TPU_REG_CNT_TLB_MISSES - TPU_REG_CNT_CYCLES) / 8 + 1)

/* Limits that keep one process from eating kernel memory. */
#define TPU_BO_MAX_SIZE		SZ_1G
#define TPU_JOB_MAX_BOS		1024
#define TPU_FILE_MAX_JOBS	4096

/* A context whose jobs timed out this often is banned: SUBMIT fails with -ECANCELED. */
#define TPU_CTX_BAN_HANGS	3

/*
 * Test hooks (tpu_debugfs.c), in builds with TPU_TEST_HOOKS only: points where the driver can be
 * held, through debugfs "<point>_hold", until the device is unplugged (PCI remove), so that a
 * test can unbind exactly there, or until what the point waits for happened; each is off, armed
 * (the next pass through the point holds) or holding.
 */
enum tpu_hold_point {
	TPU_HOLD_TIMEOUT,	/* the job timeout handler, before it does anything */
	TPU_HOLD_CLOSE,		/* a file's close, off the device's list, before its entities go */
	TPU_HOLD_FREE,		/* the schedulers' free_job, before the job drops its BOs */
	TPU_HOLD_HANG,		/* the timeout handler, its job found hung, before the reset */
	TPU_HOLD_LAST_FREE,	/* free_job of the last job, counted out, before its wake-up */
	TPU_HOLD_PENDING,	/* the timeout handler, its job back on the pending list */
	TPU_HOLD_COUNT
};

#define TPU_HOLD_OFF		0
#define TPU_HOLD_ARMED		1
#define TPU_HOLD_HOLDING	2

/*
 * Test hooks (tpu_debugfs.c, TPU_TEST_HOOKS builds): failures the card cannot be made to show,
 * armed through debugfs "inject_<failure>", each happening once; and a slowness, on while armed.
 */
enum tpu_inject_point {
	TPU_INJECT_TLB_TIMEOUT,	/* a TLB invalidation does not complete (not waited for) */
	TPU_INJECT_RESET_FAILS,	/* a reset of the card does not take (RESET not written) */
	TPU_INJECT_SLOW_END,	/* each job's end (its fence's callback) takes longer */
	TPU_INJECT_COUNT
};

struct tpu_ctx;
struct tpu_job;

/**
 * struct tpu_deferred - memory the card may still reach, kept until it no longer can
 * @node: link in tpu_device.quarantine
 * @free: frees it
 */
struct tpu_deferred {
	struct list_head node;
	void (*free)(struct tpu_deferred *deferred);
};

/**
 * struct tpu_ring - one command queue of the card: its ring and completion records (in
 *	coherent DMA memory) and the scheduler feeding it
 * @tdev: the device
 * @id: queue number, the register block the ring is programmed into
 * @priority: value of the queue's PRIORITY register (docs/architecture.md, "Priorities")
 * @name: name of the scheduler, "tpu-queue<id>"
 * @entries: TPU_RING_ENTRIES ring entries the device fetches
 * @entries_dma: bus address of @entries
 * @compl: TPU_RING_ENTRIES completion records of @compl_size bytes, slot i for ring entry i
 * @compl_dma: bus address of @compl
 * @compl_size: TPU_COMPL_SIZE_LINK (records with the job's link statistics) on a card with
 *	TPU_CAP_COMPL_LINK (spec 2.4), else TPU_COMPL_SIZE
 * @tail: index of the next free entry (the value last written to RING_TAIL)
 * @seqno: seqno of the last job written to the ring
 * @inflight: jobs written to the ring and not yet retired, oldest first
 * @fence_context: dma_fence context of the ring's hardware fences
 * @sched: the scheduler feeding the ring (its own ordered workqueue runs and frees jobs)
 * @resets: queue resets after a job timeout since probe (under reset_lock)
 */
struct tpu_ring {
	struct tpu_device *tdev;
	u32 id;
	u32 priority;
	char name[16];
	struct tpu_ring_entry *entries;
	dma_addr_t entries_dma;
	void *compl;
	dma_addr_t compl_dma;
	u32 compl_size;
	u32 tail;
	u64 seqno;
	struct list_head inflight;
	u64 fence_context;
	struct drm_gpu_scheduler sched;
	unsigned int resets;
};

/**
 * struct tpu_prio_scheds - the schedulers the jobs of one SUBMIT priority go to
 * @list: the schedulers of the rings serving the priority
 * @count: entries of @list
 */
struct tpu_prio_scheds {
	struct drm_gpu_scheduler *list[TPU_MAX_QUEUES];
	unsigned int count;
};

/**
 * struct tpu_device - one TPU card
 * @drm: DRM device, the base object
 * @pdev: PCI device
 * @regs: BAR0 registers
 * @version: spec version register
 * @caps: TPU_CAP_* bits
 * @mxu_rows: rows of the systolic array
 * @mxu_cols: columns of the systolic array
 * @ub_size: unified buffer bytes
 * @acc_size: accumulator memory bytes
 * @clock_mhz: modelled clock
 * @num_ctx: entries of the context table
 * @num_irqs: interrupt vectors in use
 * @ctx_table: context table shared with the device
 * @ctx_table_dma: bus address of @ctx_table
 * @ctx_ida: allocator of context ids
 * @tlb_lock: serialises TLB invalidations, so each waits for its own completion
 * @tlb_invalidations: TLB invalidations the driver waited for (debugfs)
 * @page_tables: page tables of all contexts, 4 KiB each (debugfs)
 * @ctxs_lock: protects @ctxs and @ctxs_gone
 * @ctxs: the live address spaces (tpu_ctx.node)
 * @ctxs_gone: set by PCI remove, which has unmapped them: no more are created
 * @quarantine_lock: protects @quarantine, @quarantined, @card_stopped and @wedged
 * @quarantine: memory freed while the card might still reach it (struct tpu_deferred)
 * @quarantined: entries of @quarantine
 * @card_stopped: set by PCI remove once the card touches no memory any more: nothing is kept
 * @wedged: the card is given up (tpu_device_wedge()): bus mastering off, no more jobs
 * @job_lock: protects @rings, @last_progress and the in-flight jobs' results; taken in the
 *	IRQ handler
 * @last_progress: CLOCK_MONOTONIC ns when the card last retired a job or was reset: the job
 *	it runs started no earlier
 * @last_end_ns: when the card last retired a job (busy-time accounting; the card runs one job
 *	at a time, whatever its queue)
 * @busy_ns: time the card spent on jobs since probe (sysfs busy_ns)
 * @num_queues: command queues the driver uses: rings[0..num_queues)
 * @rings: one per command queue
 * @prio_scheds: for each SUBMIT priority, the schedulers its jobs go to
 * @fence_lock: lock of the hardware fences
 * @jobs_alive: jobs pushed to the scheduler and not yet freed by it
 * @jobs_freed: woken when @jobs_alive drops to 0
 * @files_lock: protects @files and @gone
 * @files: open files whose scheduler entity is live
 * @gone: set by PCI remove, which has taken over the entities of @files: no more opens
 * @files_done: completed once PCI remove has destroyed those entities
 * @closing: closes that took their file off @files and have not yet destroyed its entities
 * @timeout_wq: the ordered workqueue of every scheduler's timeout handler
 * @reset_lock: serialises queue and card resets (job timeout, debugfs) with each other
 * @reset_count: resets (of a queue or of the card) after a job timeout or on request since probe
 * @card_resets: resets of the whole card after a job timeout or on request since probe
 * @hold: test hooks (debugfs "<point>_hold"), by enum tpu_hold_point: TPU_HOLD_OFF, _ARMED,
 *	_HOLDING
 * @inject: test hooks (debugfs "inject_<failure>"), by enum tpu_inject_point: 1 if armed
 * @counter_lock: protects @counter_base against resets
 * @counter_base: counts of the card's counters before its last reset, which cleared them
 * @limits: contexts, pinned memory and jobs in flight: limits and use
 */
struct tpu_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;

	u32 version;
	u32 caps;
	u32 ici_info;		/* ICI_INFO (spec 2.0): ports and topology, 0 off a fabric */
	u32 mxu_rows;
	u32 mxu_cols;
	u32 ub_size;
	u32 acc_size;
	u32 clock_mhz;
	u32 num_ctx;
	int num_irqs;

	struct tpu_ctx_entry *ctx_table;
	dma_addr_t ctx_table_dma;
	struct ida ctx_ida;
	struct mutex tlb_lock;		/* TLB_INVAL and its completion */
	u64 tlb_invalidations;
	atomic_t page_tables;
	struct mutex ctxs_lock;		/* ctxs, ctxs_gone */
	struct list_head ctxs;
	bool ctxs_gone;
	spinlock_t quarantine_lock;	/* quarantine, card_stopped, wedged */
	struct list_head quarantine;
	unsigned int quarantined;
	bool card_stopped;
	bool wedged;

	spinlock_t job_lock;		/* rings, in-flight jobs */
	u32 num_queues;
	struct tpu_ring rings[TPU_MAX_QUEUES];
	u64 last_progress;
	u64 last_end_ns;
	u64 busy_ns;
	struct tpu_prio_scheds prio_scheds[DRM_TPU_PRIORITY_COUNT];
	spinlock_t fence_lock;		/* hardware fences */

	atomic_t jobs_alive;
	wait_queue_head_t jobs_freed;
	struct mutex files_lock;	/* files, gone */
	struct list_head files;
	bool gone;
	struct completion files_done;
	atomic_t closing;
	struct workqueue_struct *timeout_wq;
	struct mutex reset_lock;	/* card resets */
	unsigned int reset_count;
	unsigned int card_resets;
	atomic_t hold[TPU_HOLD_COUNT];
	atomic_t inject[TPU_INJECT_COUNT];
	struct mutex counter_lock;	/* counter_base vs. resets */
	u64 counter_base[TPU_NUM_COUNTERS];
	struct tpu_limits limits;
};

/**
 * struct tpu_file - state of one open file of the device
 * @tdev: the device
 * @ctx: device address space (context id, page tables, VA allocator) of this file
 * @entity: scheduler entities of this file's jobs, one per SUBMIT priority
 * @lock: protects @jobs, @next_job_id and @job_count; orders job ids with the entity's queue
 * @jobs: submitted jobs not yet retired by DRM_IOCTL_TPU_WAIT, by id
 * @next_job_id: next id the cyclic allocator tries
 * @job_count: entries of @jobs
 * @node: link in the device's list of files with a live entity
 */
struct tpu_file {
	struct tpu_device *tdev;
	struct tpu_ctx *ctx;
	struct drm_sched_entity entity[DRM_TPU_PRIORITY_COUNT];
	struct mutex lock;		/* jobs, ids, count, entity order */
	struct xarray jobs;
	u32 next_job_id;
	unsigned int job_count;
	struct list_head node;
};

static inline struct tpu_device *to_tpu_device(struct drm_device *drm)
{
	return container_of(drm, struct tpu_device, drm);
}

static inline u32 tpu_read(struct tpu_device *tdev, u32 reg)
{
	return readl(tdev->regs + reg);
}

static inline void tpu_write(struct tpu_device *tdev, u32 reg, u32 val)
{
	writel(val, tdev->regs + reg);
}

static inline u64 tpu_read64(struct tpu_device *tdev, u32 reg)
{
	return readq(tdev->regs + reg);
}

static inline void tpu_write64(struct tpu_device *tdev, u32 reg, u64 val)
{
	writeq(val, tdev->regs + reg);
}

#endif /* TPU_DRV_H */
