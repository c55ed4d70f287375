/* SPDX-License-Identifier: MIT */
/*
 * tpu_accel.h - userspace interface of the tpu DRM accel driver (/dev/accel/accelN).
 *
 * Shared by driver/ and runtime/. Rules for growth: ioctl numbers are append-only, pointers are
 * __u64, structs are padded explicitly, reserved fields and unknown flags must be zero (the
 * driver rejects them with -EINVAL), and new fields are only ever appended.
 */
#ifndef _UAPI_DRM_TPU_ACCEL_H
#define _UAPI_DRM_TPU_ACCEL_H

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* ioctl numbers, append-only */
#define DRM_TPU_GET_PARAM	0x00
#define DRM_TPU_BO_CREATE	0x01
#define DRM_TPU_BO_INFO		0x02
#define DRM_TPU_SUBMIT		0x03
#define DRM_TPU_WAIT		0x04
#define DRM_TPU_COUNTERS	0x05

/**
 * enum drm_tpu_param - what DRM_IOCTL_TPU_GET_PARAM can report
 * @DRM_TPU_PARAM_DEVICE_ID: PCI device id
 * @DRM_TPU_PARAM_SPEC_VERSION: the card's spec version, major << 16 | minor
 * @DRM_TPU_PARAM_CAPS: TPU_CAP_* bits of the card (tpu_hw.h)
 * @DRM_TPU_PARAM_MXU_ROWS: rows of the systolic array (max K of a weight tile)
 * @DRM_TPU_PARAM_MXU_COLS: columns of the systolic array (max N of a weight tile)
 * @DRM_TPU_PARAM_UB_SIZE: unified buffer bytes
 * @DRM_TPU_PARAM_ACC_SIZE: accumulator memory bytes
 * @DRM_TPU_PARAM_CLOCK_MHZ: modelled clock
 * @DRM_TPU_PARAM_VA_START: first device virtual address the driver hands out
 * @DRM_TPU_PARAM_VA_SIZE: size of the per-file device address space
 * @DRM_TPU_PARAM_CNT_CYCLES: performance counter: modelled cycles of all jobs
 * @DRM_TPU_PARAM_CNT_MACS: performance counter: multiply-accumulates of all jobs
 * @DRM_TPU_PARAM_CNT_JOBS_DONE: performance counter: jobs completed without error
 * @DRM_TPU_PARAM_CNT_JOBS_FAILED: performance counter: jobs ended by an error
 * @DRM_TPU_PARAM_CNT_MACS_INT8: performance counter: int8 multiply-accumulates
 * @DRM_TPU_PARAM_CNT_MACS_BF16: performance counter: bf16 multiply-accumulates
 * @DRM_TPU_PARAM_CNT_MACS_FP32: performance counter: fp32 multiply-accumulates
 * @DRM_TPU_PARAM_CNT_STALL: performance counter: modelled cycles instructions waited for a
 *	dependency or a busy unit
 * @DRM_TPU_PARAM_CNT_TLB_MISSES: performance counter: device TLB misses (page-table walks)
 * @DRM_TPU_PARAM_NUM_QUEUES: command queues of the card the driver feeds, each with its own
 *	scheduler (1..8); the SUBMIT priorities are spread over them (struct drm_tpu_submit)
 *
 * Counters count from the driver's probe, across resets of the card.
 */
enum drm_tpu_param {
	DRM_TPU_PARAM_DEVICE_ID = 0,
	DRM_TPU_PARAM_SPEC_VERSION = 1,
	DRM_TPU_PARAM_CAPS = 2,
	DRM_TPU_PARAM_MXU_ROWS = 3,
	DRM_TPU_PARAM_MXU_COLS = 4,
	DRM_TPU_PARAM_UB_SIZE = 5,
	DRM_TPU_PARAM_ACC_SIZE = 6,
	DRM_TPU_PARAM_CLOCK_MHZ = 7,
	DRM_TPU_PARAM_VA_START = 8,
	DRM_TPU_PARAM_VA_SIZE = 9,
	DRM_TPU_PARAM_CNT_CYCLES = 10,
	DRM_TPU_PARAM_CNT_MACS = 11,
	DRM_TPU_PARAM_CNT_JOBS_DONE = 12,
	DRM_TPU_PARAM_CNT_JOBS_FAILED = 13,
	DRM_TPU_PARAM_CNT_MACS_INT8 = 14,
	DRM_TPU_PARAM_CNT_MACS_BF16 = 15,
	DRM_TPU_PARAM_CNT_MACS_FP32 = 16,
	DRM_TPU_PARAM_CNT_STALL = 17,
	DRM_TPU_PARAM_CNT_TLB_MISSES = 18,
	DRM_TPU_PARAM_NUM_QUEUES = 19,
};

/* Bits of DRM_TPU_PARAM_CAPS (the card's CAPS register). */
#define DRM_TPU_CAP_INT8	(1u << 0)	/* int8 x int8 -> int32 matmul */
#define DRM_TPU_CAP_BF16	(1u << 1)	/* bf16 x bf16 -> fp32 matmul */
#define DRM_TPU_CAP_FP32	(1u << 2)	/* fp32 x fp32 -> fp32 matmul */
#define DRM_TPU_CAP_VPU		(1u << 3)	/* ACTIVATE, VECTOR, REDUCE, POOL, TRANSPOSE */
#define DRM_TPU_CAP_TLB_DONE	(1u << 4)	/* the card reports TLB invalidations complete */
#define DRM_TPU_CAP_VPU_TRAIN	(1u << 5)	/* LOG, SQRT, RSQRT, RECIP, VECTOR DIV..EQ, B_COL */
#define DRM_TPU_CAP_RUN_INFO	(1u << 6)	/* the card names the job it runs (its resets spare more) */
#define DRM_TPU_CAP_ICI		(1u << 7)	/* spec 2.0: inter-chip links, SEND and RECV */
#define DRM_TPU_CAP_ACT_ERF	(1u << 8)	/* spec 2.3: ACTIVATE ERF */
#define DRM_TPU_CAP_COMPL_LINK	(1u << 9)	/* spec 2.4: a job's link statistics in its wait */

/**
 * struct drm_tpu_get_param - query a device property or counter
 * @param: in, enum drm_tpu_param
 * @pad: must be zero
 * @value: out
 */
struct drm_tpu_get_param {
	__u32 param;
	__u32 pad;
	__u64 value;
};

/**
 * struct drm_tpu_bo_create - create a buffer object mapped into the file's device address space
 * @size: in, bytes (rounded up to the page size); out, the rounded size
 * @flags: in, must be zero
 * @handle: out, GEM handle
 * @device_addr: out, device virtual address of the first byte, valid in programs of this file
 */
struct drm_tpu_bo_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u64 device_addr;
};

/**
 * struct drm_tpu_bo_info - look up a buffer object
 * @handle: in, GEM handle
 * @pad: must be zero
 * @mmap_offset: out, offset to pass to mmap() on the device file
 * @device_addr: out, device virtual address
 * @size: out, bytes
 */
struct drm_tpu_bo_info {
	__u32 handle;
	__u32 pad;
	__u64 mmap_offset;
	__u64 device_addr;
	__u64 size;
};

/**
 * struct drm_tpu_sync - a syncobj and point a job waits for or signals
 * @handle: DRM syncobj handle
 * @flags: must be zero
 * @point: timeline point (DRM_SYNCOBJ_CREATE_TYPE_TIMELINE syncobjs), 0 for a binary syncobj
 */
struct drm_tpu_sync {
	__u32 handle;
	__u32 flags;
	__u64 point;
};

/* At most this many entries in each of drm_tpu_submit's in_syncs and out_syncs. */
#define DRM_TPU_MAX_SYNCS	64

/* drm_tpu_submit.flags */
/* No job id: the job retires when its fence signals; WAIT does not know it (job_id 0). */
#define DRM_TPU_SUBMIT_NO_WAIT	(1u << 0)
/* bo_flags holds a DRM_TPU_BO_* mask for each handle of bo_handles. */
#define DRM_TPU_SUBMIT_BO_FLAGS	(1u << 1)

/* Per-BO access of a job, in drm_tpu_submit.bo_flags. */
#define DRM_TPU_BO_READ		(1u << 0)	/* waits for earlier writers only */
#define DRM_TPU_BO_WRITE	(1u << 1)	/* waits for earlier readers and writers */

/*
 * drm_tpu_submit.priority: the job's scheduling priority, 0 (the default, the lowest) to
 * DRM_TPU_PRIORITY_MAX (the highest). Each priority has its own scheduler entity per file, so
 * jobs of different priorities are ordered only by their buffers and syncobjs. The priority
 * picks the card's command queues the job may run on: queue q of a card with n queues has the
 * hardware PRIORITY q * 4 / n, and a job of priority p goes to the queues with the largest
 * PRIORITY not above p (the least loaded of them). The card starts the next job from the
 * non-empty queue of highest PRIORITY; a running job is not preempted. On a card with one
 * queue, every priority shares it. Since higher-priority jobs can starve every other file's,
 * priorities above DRM_TPU_PRIORITY_LOW take CAP_SYS_NICE: SUBMIT fails with -EACCES without
 * it.
 */
#define DRM_TPU_PRIORITY_LOW	0
#define DRM_TPU_PRIORITY_HIGH	3
#define DRM_TPU_PRIORITY_MAX	DRM_TPU_PRIORITY_HIGH
#define DRM_TPU_PRIORITY_COUNT	(DRM_TPU_PRIORITY_MAX + 1)

/**
 * struct drm_tpu_submit - queue a program for execution
 * @program_handle: in, BO holding the program
 * @program_offset: in, byte offset of the first instruction in that BO, 32-byte aligned
 * @program_size: in, bytes, a non-zero multiple of 32, within the BO
 * @bo_count: in, number of handles at @bo_handles
 * @bo_handles: in, user pointer to __u32[@bo_count]: every BO the program reads or writes; the
 *	job waits for earlier jobs writing them and keeps them alive until it ends
 * @flags: in, DRM_TPU_SUBMIT_* bits, others must be zero
 * @out_syncobj: in, 0 or a DRM syncobj handle that receives the job's fence
 * @job_id: out, id to pass to DRM_IOCTL_TPU_WAIT, unique within the file; 0 with
 *	DRM_TPU_SUBMIT_NO_WAIT
 * @reserved: must be zero
 * @in_syncs: in, user pointer to struct drm_tpu_sync[@in_sync_count]: fences the job waits
 *	for before it runs (a point must have a fence already: -ENOENT otherwise)
 * @out_syncs: in, user pointer to struct drm_tpu_sync[@out_sync_count]: syncobjs that receive
 *	the job's fence, replacing a binary syncobj's fence or adding the timeline point
 * @in_sync_count: in, entries at @in_syncs, at most DRM_TPU_MAX_SYNCS
 * @out_sync_count: in, entries at @out_syncs, at most DRM_TPU_MAX_SYNCS
 * @bo_flags: in, with DRM_TPU_SUBMIT_BO_FLAGS a user pointer to __u32[@bo_count]: a non-zero
 *	DRM_TPU_BO_* mask per handle (a handle listed twice gets both masks); the program's BO
 *	is read unless listed. Without the flag, must be zero: every BO counts as written
 * @priority: in, 0 (DRM_TPU_PRIORITY_LOW, the default) .. DRM_TPU_PRIORITY_MAX: see above.
 *	Appended in driver 1.1: a caller built against an older header passes the struct
 *	without it (DRM's ioctl size handling), which reads as 0
 * @pad: must be zero
 *
 * Without DRM_TPU_SUBMIT_BO_FLAGS every BO, the program's included, counts as written, so two
 * jobs using the same buffer run one after the other; two readers do not wait for each other.
 */
struct drm_tpu_submit {
	__u32 program_handle;
	__u32 program_offset;
	__u32 program_size;
	__u32 bo_count;
	__u64 bo_handles;
	__u32 flags;
	__u32 out_syncobj;
	__u64 job_id;
	__u64 reserved[2];
	__u64 in_syncs;
	__u64 out_syncs;
	__u32 in_sync_count;
	__u32 out_sync_count;
	__u64 bo_flags;
	__u32 priority;
	__u32 pad;
};

/*
 * Job status values of drm_tpu_wait.status: the card's (docs/hardware.md, "Job status codes")
 * and the driver's DRM_TPU_JOB_* below.
 */
#define DRM_TPU_STATUS_NONE		0	/* success */
#define DRM_TPU_STATUS_BAD_OPCODE	1	/* unknown instruction opcode */
#define DRM_TPU_STATUS_BAD_OPERAND	2	/* bad dtype, flags, reserved field, shape */
#define DRM_TPU_STATUS_UB_RANGE		3	/* unified buffer access out of range */
#define DRM_TPU_STATUS_ACC_RANGE	4	/* accumulator access out of range */
#define DRM_TPU_STATUS_MMU_FAULT	5	/* device VA unmapped or access not permitted */
#define DRM_TPU_STATUS_BUS		6	/* host memory access failed */
#define DRM_TPU_STATUS_BAD_CTX		7	/* context id out of range or not valid */
#define DRM_TPU_STATUS_PROGRAM		8	/* bad program size */
#define DRM_TPU_STATUS_RING_ENTRY	9	/* bad ring entry */
#define DRM_TPU_STATUS_NO_WEIGHTS	10	/* MATMUL without matching loaded weights */
#define DRM_TPU_STATUS_ABORTED		11	/* stopped by a reset */
#define DRM_TPU_STATUS_LINK_DOWN	12	/* spec 2.0: no link on the port, or it went down */
#define DRM_TPU_STATUS_LINK_MISMATCH	13	/* spec 2.0: the message waiting has another tag or length */
#define DRM_TPU_STATUS_LINK_PARTIAL	14	/* spec 2.0: the sender cut the message short */

/* drm_tpu_wait.flags: timeout_ns is an absolute CLOCK_MONOTONIC time, not a duration. */
#define DRM_TPU_WAIT_ABSOLUTE	(1u << 0)

/* Job status codes returned by DRM_IOCTL_TPU_WAIT, beyond the card's TPU_ERR_* (tpu_hw.h). */
#define DRM_TPU_JOB_TIMEOUT	0x100	/* the job hung and the card was reset */
#define DRM_TPU_JOB_CANCELED	0x101	/* the card was reset before the job ended */

/**
 * struct drm_tpu_wait - wait for a job and collect its result
 * @job_id: in, from DRM_IOCTL_TPU_SUBMIT
 * @timeout_ns: in, relative timeout, or with DRM_TPU_WAIT_ABSOLUTE a CLOCK_MONOTONIC time;
 *	0 (or a time passed) polls. -ETIMEDOUT if the job has not ended by then
 * @status: out, TPU_ERR_NONE (0) on success, a TPU_ERR_* of the card or a DRM_TPU_JOB_*
 * @error_pc: out, index of the failing instruction
 * @fault_addr: out, the faulting device address or out-of-range offset
 * @cycles: out, modelled cycles of the job
 * @macs: out, multiply-accumulates of the job
 * @reserved: must be zero
 * @flags: in, DRM_TPU_WAIT_* bits, others must be zero
 * @pad: must be zero
 * @mxu_busy_cycles: out, modelled cycles the matrix unit computed for the job
 * @stall_cycles: out, modelled cycles the job's instructions waited for a dependency or a unit
 * @link_cycles: out, modelled cycles the job's SENDs and RECVs kept link units busy
 * @link_tx_bytes: out, bytes the job's SENDs put on links
 * @link_rx_bytes: out, bytes the job's RECVs took from links
 *
 * The link statistics are 0 on a card without DRM_TPU_CAP_COMPL_LINK.
 * A successful wait retires the job: its id is then unknown (-ENOENT).
 */
struct drm_tpu_wait {
	__u64 job_id;
	__s64 timeout_ns;
	__u32 status;
	__u32 error_pc;
	__u64 fault_addr;
	__u64 cycles;
	__u64 macs;
	__u64 reserved;
	__u32 flags;
	__u32 pad;
	__u64 mxu_busy_cycles;
	__u64 stall_cycles;
	__u64 link_cycles;
	__u64 link_tx_bytes;
	__u64 link_rx_bytes;
};

/**
 * struct drm_tpu_counters - the card's performance counters, read together, counting from the
 *	driver's probe across resets
 * @cycles: modelled cycles of all jobs
 * @mxu_busy_cycles: cycles the matrix unit was computing
 * @macs: multiply-accumulates
 * @dma_read_bytes: bytes programs read from host memory
 * @dma_write_bytes: bytes programs wrote to host memory
 * @jobs_done: jobs that ended without error
 * @jobs_failed: jobs that ended with an error
 * @mmu_faults: MMU faults
 * @macs_int8: multiply-accumulates of int8 matmuls
 * @macs_bf16: multiply-accumulates of bf16 matmuls
 * @macs_fp32: multiply-accumulates of fp32 matmuls
 * @stall_cycles: modelled cycles instructions waited for a dependency or a busy unit
 * @tlb_misses: device TLB misses (page-table walks)
 *
 * Later versions append fields; DRM_IOCTL_TPU_COUNTERS says how many bytes it filled.
 */
struct drm_tpu_counters {
	__u64 cycles;
	__u64 mxu_busy_cycles;
	__u64 macs;
	__u64 dma_read_bytes;
	__u64 dma_write_bytes;
	__u64 jobs_done;
	__u64 jobs_failed;
	__u64 mmu_faults;
	__u64 macs_int8;
	__u64 macs_bf16;
	__u64 macs_fp32;
	__u64 stall_cycles;
	__u64 tlb_misses;
};

/**
 * struct drm_tpu_get_counters - take a snapshot of the performance counters
 * @size: in, bytes at @counters, a non-zero multiple of 8; out, the bytes the driver wrote:
 *	the smaller of that and the size of its struct drm_tpu_counters
 * @pad: must be zero
 * @counters: in, user pointer to a struct drm_tpu_counters (or a prefix of it)
 */
struct drm_tpu_get_counters {
	__u32 size;
	__u32 pad;
	__u64 counters;
};

#define DRM_IOCTL_TPU_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TPU_GET_PARAM, struct drm_tpu_get_param)
#define DRM_IOCTL_TPU_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TPU_BO_CREATE, struct drm_tpu_bo_create)
#define DRM_IOCTL_TPU_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TPU_BO_INFO, struct drm_tpu_bo_info)
#define DRM_IOCTL_TPU_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TPU_SUBMIT, struct drm_tpu_submit)
#define DRM_IOCTL_TPU_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TPU_WAIT, struct drm_tpu_wait)
#define DRM_IOCTL_TPU_COUNTERS \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TPU_COUNTERS, struct drm_tpu_get_counters)

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_DRM_TPU_ACCEL_H */
