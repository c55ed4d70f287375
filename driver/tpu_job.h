/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Jobs: SUBMIT and WAIT, the schedulers feeding the rings.
 */
#ifndef TPU_JOB_H
#define TPU_JOB_H

#include <drm/gpu_scheduler.h>
#include <linux/dma-fence.h>
#include <linux/kref.h>
#include <linux/list.h>

struct drm_gem_object;
struct tpu_ctx;
struct tpu_device;
struct tpu_file;
struct tpu_ring;

/**
 * struct tpu_job_result - how a job ended, reported by DRM_IOCTL_TPU_WAIT
 * @status: TPU_ERR_* of the card or DRM_TPU_JOB_*
 * @error_pc: index of the failing instruction
 * @fault_addr: faulting device address or out-of-range offset
 * @cycles: modelled cycles
 * @macs: multiply-accumulates
 * @mxu_busy_cycles: modelled cycles the matrix unit computed
 * @stall_cycles: modelled cycles instructions waited for a dependency or a busy unit
 * @link_cycles: modelled cycles its SENDs and RECVs kept link units busy (spec 2.4; else 0)
 * @link_tx_bytes: bytes its SENDs put on links (spec 2.4; else 0)
 * @link_rx_bytes: bytes its RECVs took from links (spec 2.4; else 0)
 */
struct tpu_job_result {
	u32 status;
	u32 error_pc;
	u64 fault_addr;
	u64 cycles;
	u64 macs;
	u64 mxu_busy_cycles;
	u64 stall_cycles;
	u64 link_cycles;
	u64 link_tx_bytes;
	u64 link_rx_bytes;
};

/**
 * struct tpu_job - one program run
 * @base: scheduler job
 * @refcount: held by the scheduler (until free_job), the file's job table and the ring
 * @tdev: the device
 * @ctx: address space the program runs in
 * @bos: BOs the job uses (the program's included), sorted by handle, no duplicates
 * @bo_write: for each of @bos, whether the job writes it (else it only reads it)
 * @bo_count: entries of @bos
 * @program_addr: device VA of the first instruction
 * @program_size: bytes of the program
 * @seqno: seqno of the ring entry
 * @slot: ring slot of the job, valid while in the ring
 * @inflight_node: link in the ring's in-flight list
 * @pushed: CLOCK_MONOTONIC ns when the job was last written to the ring
 * @hw_fence: signalled when the card retires the job; initialised when written to the ring
 * @done: the scheduler's finished fence: the job has ended, @result is valid
 * @in_flight: counted in the jobs in flight of its context and device (tpu_limits.h)
 * @end_cb: callback on @done that ends the count
 * @result: how the job ended
 */
struct tpu_job {
	struct drm_sched_job base;
	struct kref refcount;
	struct tpu_device *tdev;
	struct tpu_ctx *ctx;
	struct drm_gem_object **bos;
	bool *bo_write;
	u32 bo_count;
	u64 program_addr;
	u32 program_size;
	u64 seqno;
	u32 slot;
	struct list_head inflight_node;
	u64 pushed;
	struct dma_fence *hw_fence;
	struct dma_fence *done;
	bool in_flight;
	struct dma_fence_cb end_cb;
	struct tpu_job_result result;
};

static inline struct tpu_job *to_tpu_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct tpu_job, base);
}

/* The ring a scheduler feeds. */
static inline struct tpu_ring *to_tpu_ring(struct drm_gpu_scheduler *sched)
{
	return container_of(sched, struct tpu_ring, sched);
}

int tpu_job_init(struct tpu_device *tdev);
void tpu_job_fini(struct tpu_device *tdev);
int tpu_job_open(struct tpu_file *tfile);
void tpu_job_close(struct tpu_file *tfile);
void tpu_job_complete(struct tpu_job *job, const struct tpu_job_result *res, int error);
int tpu_submit_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int tpu_wait_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* TPU_JOB_H */
