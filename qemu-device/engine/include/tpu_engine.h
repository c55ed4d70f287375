/* SPDX-License-Identifier: MIT */
/*
 * tpu_engine.h - C interface of the card's engine: the program executor, device MMU and
 * systolic matrix unit, with no QEMU or kernel types. The QEMU device (qemu-device/tpu.c)
 * owns registers, rings and interrupts and calls tpu_engine_run() once per job from its
 * worker thread; host tests call the same entry points with a plain memory callback.
 */
#ifndef TPU_ENGINE_H
#define TPU_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tpu_engine;

/*
 * Reads (is_write false) or writes len bytes of host physical memory at addr.
 * Returns 0 on success, non-zero if any byte could not be accessed.
 * Called from the thread that called tpu_engine_run(), possibly concurrently from the
 * engine's own worker threads.
 */
typedef int (*tpu_phys_rw_fn)(void *opaque, uint64_t addr, void *buf, uint64_t len,
			      bool is_write);

/*
 * Optional direct access to host physical memory (tpu_engine_set_phys_map()): map returns a
 * host pointer to the len bytes at addr, for reading or (is_write) for writing them, or NULL
 * if they cannot be mapped (the engine then uses the rw callback for them). The engine asks
 * for at most one page (TPU_PAGE_SIZE, page-aligned) at a time and gives every pointer back
 * to unmap, with the same len and is_write, before the instruction that mapped it ends.
 * Called from the thread that called tpu_engine_run().
 */
typedef void *(*tpu_phys_map_fn)(void *opaque, uint64_t addr, uint64_t len, bool is_write);
typedef void (*tpu_phys_unmap_fn)(void *opaque, void *ptr, uint64_t len, bool is_write);

enum tpu_engine_mode {
	TPU_ENGINE_FAST = 0,		/* functional: host SIMD, threads, analytic cycle model */
	TPU_ENGINE_CYCLE_ACCURATE = 1,	/* simulates the PE grid cycle by cycle; same results */
};

struct tpu_engine_config {
	uint32_t mxu_rows;	/* systolic array rows (K of a weight tile), 1..4096 */
	uint32_t mxu_cols;	/* systolic array columns (N of a weight tile), 1..4096 */
	uint32_t ub_bytes;	/* unified buffer size */
	uint32_t acc_bytes;	/* accumulator memory size, multiple of 4 */
	uint32_t clock_mhz;	/* modelled clock, for the cycle model */
	uint32_t threads;	/* worker threads for fast mode, 0 = one per host CPU */
	uint32_t mode;		/* enum tpu_engine_mode */
	uint32_t dma_mbps;	/* modelled host DMA bandwidth, MB/s; 0 = default (44800) */
	uint32_t tlb_entries;	/* device TLB entries kept across jobs; 0 = default (8192) */
};

struct tpu_job_result {
	uint32_t status;	/* TPU_ERR_* (tpu_hw.h) */
	uint32_t error_pc;	/* index of the failing instruction */
	uint64_t fault_addr;
	uint64_t cycles;
	uint64_t mxu_busy_cycles;
	uint64_t macs;
	uint64_t dma_read_bytes;
	uint64_t dma_write_bytes;
	uint32_t mmu_faults;
	uint32_t reserved;
	uint64_t stall_cycles;	/* cycles instructions waited for a dependency or a busy unit */
	uint64_t macs_int8;	/* macs split by data type */
	uint64_t macs_bf16;
	uint64_t macs_fp32;
	uint64_t tlb_misses;	/* translations that walked the page tables */
	uint64_t link_cycles;	/* spec 2.0: cycles SEND and RECV kept link units busy */
	uint64_t link_tx_bytes;	/* bytes SENDs put on links */
	uint64_t link_rx_bytes;	/* bytes RECVs took from links */
};

/*
 * Creates an engine. Returns NULL and a message in err (if errlen > 0) when the
 * configuration is invalid or memory cannot be allocated.
 */
struct tpu_engine *tpu_engine_create(const struct tpu_engine_config *cfg, tpu_phys_rw_fn rw,
				     void *opaque, char *err, size_t errlen);
void tpu_engine_destroy(struct tpu_engine *eng);

/*
 * Lets DMA with short rows (many rows on one page) copy through mapped pages instead of a
 * rw callback per row; before the first job. Both NULL: the rw callback only (the default).
 */
void tpu_engine_set_phys_map(struct tpu_engine *eng, tpu_phys_map_fn map,
			     tpu_phys_unmap_fn unmap);

/* Physical address and entry count of the context table (TPU_REG_CTX_TABLE, NUM_CTX). */
void tpu_engine_set_ctx_table(struct tpu_engine *eng, uint64_t addr, uint32_t entries);

/*
 * Runs one program to completion (HALT or its last instruction) or to its first error.
 * Never aborts on guest input: every malformed program ends with result->status set. A job
 * for which host memory runs out ends with TPU_ERR_ABORTED; nothing is thrown.
 */
void tpu_engine_run(struct tpu_engine *eng, uint32_t ctx_id, uint64_t program_addr,
		    uint32_t program_size, struct tpu_job_result *result);

/*
 * Drops cached translations of one context (TPU_TLB_INVAL_ALL: all contexts). Safe from any
 * thread; takes effect before the next translation of a running job, and returns once no
 * translation made before the call is still in use (a DMA copy between its translation and
 * its access has ended), so the host may free the pages of a mapping it removed.
 */
void tpu_engine_tlb_invalidate(struct tpu_engine *eng, uint32_t ctx_id);

/*
 * Drops cached translations like tpu_engine_tlb_invalidate() but returns at once, without
 * waiting for the translations in use (a posted invalidation: the caller completes it later
 * with tpu_engine_tlb_invalidate(), from a thread that may wait). Safe from any thread.
 */
void tpu_engine_tlb_drop(struct tpu_engine *eng, uint32_t ctx_id);

/*
 * Asks a running tpu_engine_run() to stop with TPU_ERR_ABORTED: between instructions, and
 * inside long ones between rows (DMA, vector unit) or blocks of rows and simulated cycles
 * (MATMUL); a SEND waiting for credits or a RECV waiting for data stops at once (spec 2.0).
 * Safe from any thread. Until tpu_engine_reset() clears the request, translations
 * fill no TLB entry.
 */
void tpu_engine_abort(struct tpu_engine *eng);

/*
 * How many instructions jobs have started on this engine since it was created (fast mode
 * counts a fused group of LOAD_W / MATMUL pairs once). Safe from any thread: a test waits for
 * it to pass a job's first instructions before it calls tpu_engine_abort(), instead of
 * sleeping and hoping the job is running by then.
 */
uint64_t tpu_engine_progress(struct tpu_engine *eng);

/*
 * Test only (QEMU's x-test-hold, the TEST_HOLD register of docs/hardware.md): arms the hold at
 * instruction pc (arm true) or disarms it (arm false); a job held now stays held. While armed,
 * the next job to reach an instruction boundary at or after pc (fast mode may run a group of
 * LOAD_W / MATMUL pairs as one step) waits there, before that instruction, until
 * tpu_engine_test_release() or tpu_engine_abort() is called; it then goes on, or ends
 * TPU_ERR_ABORTED at that instruction as at any boundary. Holding a job disarms the hold (which
 * may be armed again for the next job meanwhile); a job is held once at most. The job waits on
 * the thread that called tpu_engine_run(), holding no lock of the engine (TLB invalidations are
 * not held up). Safe from any thread.
 */
void tpu_engine_test_hold(struct tpu_engine *eng, bool arm, uint32_t pc);

/* Test only: lets the job held now, if any, go on; the hold stays as armed. Safe from any thread. */
void tpu_engine_test_release(struct tpu_engine *eng);

/*
 * Test only: whether a job is held (tpu_engine_test_hold()) now, and if so the instruction it
 * waits before in *pc. Safe from any thread.
 */
bool tpu_engine_test_held(struct tpu_engine *eng, uint32_t *pc);

/*
 * Empties the TLB and clears on-chip state (unified buffer, accumulators, weights), the packets
 * waiting in the link ports' receive buffers (spec 2.0) and any abort request;
 * no job may run. A reset of the card aborts first, then resets once the job stopped.
 */
void tpu_engine_reset(struct tpu_engine *eng);

/* ---- the inter-chip interconnect (spec 2.0, docs/hardware.md section 10) ------------------ */

struct tpu_fabric;

struct tpu_fabric_config {
	uint32_t topology;	/* enum tpu_ici_topology: RING or TORUS2D */
	uint32_t dim_x;		/* cards along x, 2..TPU_ICI_MAX_DIM */
	uint32_t dim_y;		/* 1 for a ring; 2..TPU_ICI_MAX_DIM for a torus */
	uint32_t link_gbps;	/* each link direction's bandwidth, Gbit/s (>= 1) */
	uint32_t hop_ns;	/* latency of one hop, ns */
	uint32_t credits;	/* packets (TPU_ICI_PACKET_BYTES) a receive buffer holds, 2..65536 */
	uint32_t y_link_gbps;	/* spec 2.4, a torus: the y links' own figures (links between */
	uint32_t y_hop_ns;	/* servers); 0: link_gbps and hop_ns, as the x links */
};

struct tpu_link_info {
	uint32_t ports;		/* 0: not on a fabric */
	uint32_t topology;
	uint32_t x, y;
	uint32_t dim_x, dim_y;
	uint32_t link_gbps;
	uint32_t hop_ns;
	uint32_t credits;
	uint32_t y_link_gbps;	/* the y links' figures (= link_gbps, hop_ns unless set apart) */
	uint32_t y_hop_ns;
};

struct tpu_link_port_info {
	uint32_t up;		/* a card sits at the other end */
	uint32_t error;		/* a job ended with a link error on the port since the last clear */
	uint32_t peer_port;
	uint32_t peer_x, peer_y;
	uint32_t rx_queued;	/* packets waiting in the port's receive buffer */
	uint64_t tx_bytes, rx_bytes, tx_packets, rx_packets;
	uint64_t errors;	/* jobs that ended with a link error on the port */
};

/*
 * A fabric that engines join at coordinates. NULL and a message in err if cfg is invalid.
 * Destroying it leaves the engines attached wired until they detach.
 */
struct tpu_fabric *tpu_fabric_create(const struct tpu_fabric_config *cfg, char *err,
				     size_t errlen);
void tpu_fabric_destroy(struct tpu_fabric *fabric);

/*
 * Joins the engine to the fabric at (x, y); its ports are wired to the engines at the
 * neighbouring coordinates (now or when they join). 0, or -1 and a message in err (coordinate
 * outside the fabric or taken, a clock other than the cards' already there, already joined).
 * No job may run.
 */
int tpu_engine_attach(struct tpu_engine *eng, struct tpu_fabric *fabric, uint32_t x, uint32_t y,
		      char *err, size_t errlen);
/* Leaves the fabric: the engine's links go down and a peer's job waiting on one of them ends
 * with TPU_ERR_LINK_DOWN. No job of this engine may run. Destroying an engine detaches it. */
void tpu_engine_detach(struct tpu_engine *eng);

/* The engine's place on its fabric, all zero when it has none. Safe from any thread. */
void tpu_engine_link_info(struct tpu_engine *eng, struct tpu_link_info *out);
/* A port's state and counters; false (and *out zeroed) if the engine has no such port. */
bool tpu_engine_port_info(struct tpu_engine *eng, uint32_t port, struct tpu_link_port_info *out);
/* Clears the ports' counters and error flags (a global reset). Safe from any thread. */
void tpu_engine_link_clear(struct tpu_engine *eng);

/*
 * Takes the link on a port of the card at (x, y) down (jobs using it end TPU_ERR_LINK_DOWN), or
 * up again once cards sit at both ends (a link to another process: with its next connection).
 * 0, or -1 and a message in err (no card of this process there, no such port).
 */
int tpu_fabric_set_link(struct tpu_fabric *fabric, uint32_t x, uint32_t y, uint32_t port, bool up,
			char *err, size_t errlen);

/*
 * ---- links to cards in other processes (docs/hardware.md section 10) ----------------------
 * A port of an engine on a fabric bound to its neighbour in another process, over a byte stream
 * the caller carries (QEMU: a socket chardev). The link is up from the hello exchange until the
 * stream closes, breaks the protocol or the link is taken down. All calls on one thread (the
 * main loop) and none blocks; notify(opaque) may come from any thread, under an engine lock:
 * there may be bytes to write (tpu_remote_link_output) or the stream to close.
 */
struct tpu_remote_link;

/* NULL and a message in err if the port cannot be bound (no fabric, no such port, a card of
 * this process at its neighbour's coordinate). Destroy it before the engine leaves the fabric. */
struct tpu_remote_link *tpu_remote_link_create(struct tpu_engine *eng, uint32_t port,
					       void (*notify)(void *opaque), void *opaque,
					       char *err, size_t errlen);
void tpu_remote_link_destroy(struct tpu_remote_link *link);
/* The stream opened (a hello is due) or closed (the link goes down). */
void tpu_remote_link_open(struct tpu_remote_link *link);
void tpu_remote_link_close(struct tpu_remote_link *link);
/* Bytes that arrived: NULL, or why the link went down (valid until the next call). */
const char *tpu_remote_link_input(struct tpu_remote_link *link, const void *data, size_t len);
/* Bytes to write now in *data (0: none), and how many of them were written. */
size_t tpu_remote_link_output(struct tpu_remote_link *link, const void **data);
void tpu_remote_link_written(struct tpu_remote_link *link, size_t n);
/* The stream is to be closed (the link failed or was taken down); the next one starts afresh. */
bool tpu_remote_link_close_due(struct tpu_remote_link *link);

#ifdef __cplusplus
}
#endif

#endif /* TPU_ENGINE_H */
