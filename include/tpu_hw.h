/* SPDX-License-Identifier: MIT */
/*
 * tpu_hw.h - hardware definitions of the emulated TPU card.
 *
 * The one description of the card shared by the QEMU device model, the Linux driver and the
 * runtime's program builder: PCI identity, the BAR0 register map, command ring entries,
 * completion records, the device MMU's context table and page-table format, and the
 * instruction encoding. docs/hardware.md is the prose version of this file; the two change
 * together. Everything is little-endian.
 */
#ifndef TPU_HW_H
#define TPU_HW_H

#include <linux/types.h>

/* ---- PCI identity ------------------------------------------------------------------- */

#define TPU_PCI_VENDOR_ID	0x1234	/* QEMU's experimental vendor id */
#define TPU_PCI_DEVICE_ID	0x7470
#define TPU_PCI_REVISION	0x01
#define TPU_PCI_CLASS		0x1200	/* processing accelerator */

#define TPU_BAR_REGS		0	/* BAR0: registers, 32-bit memory */
#define TPU_BAR_REGS_SIZE	0x1000
#define TPU_BAR_MSIX		2	/* BAR2: MSI-X table and PBA, 64-bit memory */

#define TPU_MSIX_VEC_DONE	0	/* a job completed successfully */
#define TPU_MSIX_VEC_ERROR	1	/* a job failed or a queue entered error state */
#define TPU_MSIX_VECTORS	2

/* ---- BAR0 registers (32-bit unless marked 64; 64-bit registers take 8-byte accesses) ---- */

#define TPU_REG_ID		0x000	/* RO  TPU_ID_MAGIC */
#define TPU_REG_VERSION		0x004	/* RO  spec version, major << 16 | minor */
#define TPU_REG_CAPS		0x008	/* RO  TPU_CAP_* */
#define TPU_REG_MXU_DIM		0x00c	/* RO  rows << 16 | cols of the systolic array */
#define TPU_REG_UB_SIZE		0x010	/* RO  unified buffer size, bytes */
#define TPU_REG_ACC_SIZE	0x014	/* RO  accumulator memory size, bytes */
#define TPU_REG_CLOCK_MHZ	0x018	/* RO  modelled clock */
#define TPU_REG_NUM_QUEUES	0x01c	/* RO  command queues */
#define TPU_REG_NUM_CTX		0x020	/* RO  entries of the context table */

#define TPU_REG_CONTROL		0x040	/* RW  TPU_CONTROL_* */
#define TPU_REG_STATUS		0x044	/* RO  TPU_STATUS_* */
#define TPU_REG_RESET		0x048	/* WO  write TPU_RESET_MAGIC: global reset */
#define TPU_REG_RUN_QUEUE	0x04c	/* RO  TPU_RUN_*: the running job (spec 1.5, RUN_INFO) */
#define TPU_REG_IRQ_STATUS	0x050	/* RW1C TPU_IRQ_* */
#define TPU_REG_IRQ_MASK	0x054	/* RW  TPU_IRQ_*, 1 = delivered */

#define TPU_REG_CTX_TABLE	0x060	/* RW64 physical address of the context table, 4 KiB aligned */
#define TPU_REG_TLB_INVAL	0x068	/* WO  context id to invalidate, TPU_TLB_INVAL_ALL for all */
#define TPU_REG_TLB_INVAL_DONE	0x06c	/* RO  invalidations completed (spec 1.3, TPU_CAP_TLB_DONE) */

#define TPU_REG_ERR_CODE	0x080	/* RO  TPU_ERR_* of the last failed job */
#define TPU_REG_ERR_QUEUE	0x084	/* RO  queue of the last failed job */
#define TPU_REG_ERR_ADDR	0x088	/* RO64 fault address of the last failed job */
#define TPU_REG_RUN_SEQNO	0x090	/* RO64 seqno of the running job, 0 if none (spec 1.5) */

/* Performance counters, RO64, cleared by global reset. */
#define TPU_REG_CNT_CYCLES	0x100	/* modelled cycles spent on jobs */
#define TPU_REG_CNT_MXU_BUSY	0x108	/* cycles the systolic array was computing */
#define TPU_REG_CNT_MACS	0x110	/* multiply-accumulates performed */
#define TPU_REG_CNT_DMA_RD	0x118	/* bytes read from host memory by programs */
#define TPU_REG_CNT_DMA_WR	0x120	/* bytes written to host memory by programs */
#define TPU_REG_CNT_JOBS_DONE	0x128
#define TPU_REG_CNT_JOBS_FAILED	0x130
#define TPU_REG_CNT_MMU_FAULTS	0x138
#define TPU_REG_CNT_MACS_INT8	0x140	/* MACS split by data type */
#define TPU_REG_CNT_MACS_BF16	0x148
#define TPU_REG_CNT_MACS_FP32	0x150
#define TPU_REG_CNT_STALL	0x158	/* cycles instructions waited for a dependency or unit */
#define TPU_REG_CNT_TLB_MISSES	0x160	/* translations that walked the page tables */
#define TPU_REG_CNT_LINK_CYCLES	0x168	/* spec 2.0: cycles SEND and RECV kept link units busy */
#define TPU_REG_CNT_LINK_TX	0x170	/* spec 2.0: bytes SENDs put on the links */
#define TPU_REG_CNT_LINK_RX	0x178	/* spec 2.0: bytes RECVs took from the links */

/*
 * Inter-chip interconnect (spec 2.0, TPU_CAP_ICI; docs/hardware.md section 10). All RO; 0 on a
 * card that is not on a fabric.
 */
#define TPU_REG_ICI_INFO	0x180	/* TPU_ICI_INFO_*: ports and topology */
#define TPU_REG_ICI_COORD	0x184	/* this card's coordinate: x | y << 8 */
#define TPU_REG_ICI_DIMS	0x188	/* the fabric's size: dim x | dim y << 8 (ring: y = 1) */
#define TPU_REG_ICI_LINK_GBPS	0x18c	/* each link direction's bandwidth, Gbit/s */
#define TPU_REG_ICI_HOP_NS	0x190	/* latency of one hop, ns */
#define TPU_REG_ICI_CREDITS	0x194	/* packets a port's receive buffer holds */
#define TPU_REG_ICI_Y_LINK_GBPS	0x198	/* spec 2.4: the y links' (ports 2, 3) bandwidth */
#define TPU_REG_ICI_Y_HOP_NS	0x19c	/* spec 2.4: the y links' hop latency (ring: the x's) */

/* Per-port register blocks (port p < TPU_ICI_MAX_PORTS), all RO. */
#define TPU_REG_PORT_BASE	0x200
#define TPU_REG_PORT_STRIDE	0x40
#define TPU_REG_PORT(p, r)	(TPU_REG_PORT_BASE + (p) * TPU_REG_PORT_STRIDE + (r))

#define TPU_PREG_STATUS		0x00	/* TPU_PORT_* */
#define TPU_PREG_PEER		0x04	/* the peer card's coordinate: x | y << 8 */
#define TPU_PREG_TX_BYTES	0x08	/* RO64 payload bytes sent */
#define TPU_PREG_RX_BYTES	0x10	/* RO64 payload bytes received (taken by RECVs) */
#define TPU_PREG_TX_PACKETS	0x18	/* RO64 packets sent */
#define TPU_PREG_RX_PACKETS	0x20	/* RO64 packets received (taken by RECVs or dropped) */
#define TPU_PREG_ERRORS		0x28	/* RO64 link errors: jobs that ended with a TPU_ERR_LINK_* */
#define TPU_PREG_RX_QUEUED	0x30	/* packets waiting in the receive buffer (credits in use) */

/* Per-queue register blocks. */
#define TPU_REG_QUEUE_BASE	0x400
#define TPU_REG_QUEUE_STRIDE	0x40
#define TPU_REG_QUEUE(q, r)	(TPU_REG_QUEUE_BASE + (q) * TPU_REG_QUEUE_STRIDE + (r))

#define TPU_QREG_RING_BASE	0x00	/* RW64 physical address of the ring, 4 KiB aligned */
#define TPU_QREG_RING_SIZE	0x08	/* RW  entries, power of two in [2, TPU_RING_MAX_ENTRIES] */
#define TPU_QREG_RING_HEAD	0x0c	/* RO  index of the next entry the device fetches */
#define TPU_QREG_RING_TAIL	0x10	/* RW  doorbell: index one past the last valid entry */
#define TPU_QREG_COMPL_BASE	0x18	/* RW64 physical address of RING_SIZE completion records */
#define TPU_QREG_CONTROL	0x20	/* RW  TPU_QCTRL_* */
#define TPU_QREG_STATUS		0x24	/* RO  TPU_QSTAT_* */
#define TPU_QREG_DONE_SEQ	0x28	/* RO64 seqno of the last retired job (done or failed) */
#define TPU_QREG_PRIORITY	0x30	/* RW  0 (lowest) .. TPU_QUEUE_MAX_PRIORITY; higher served first */
#define TPU_QREG_COMPL_SIZE	0x34	/* RW  bytes a completion record takes: 64, or 128 (spec 2.4) */

/*
 * TEST ONLY, not part of the card's specification: registers that exist only on a QEMU card
 * started with x-test-hold=on (docs/hardware.md, "Test-only registers"); on any other card
 * they are undefined offsets (read 0, writes ignored). The TEST_HOLD_PRESENT bit tells them apart.
 */
#define TPU_REG_TEST_HOLD	0xf00	/* RW  TPU_TEST_HOLD_*: hold a started job at an instruction */
#define TPU_REG_TEST_HELD	0xf04	/* RO  TPU_TEST_HELD_*: the job held now */

#define TPU_TEST_HOLD_ARM	(1u << 31)	/* the next job reaching instruction PC is held */
#define TPU_TEST_HOLD_PRESENT	(1u << 30)	/* RO, always set: the registers exist */
#define TPU_TEST_HOLD_RELEASE	(1u << 29)	/* WO: let the held job go (the arm unchanged) */
#define TPU_TEST_HOLD_PC_MASK	0xffffu		/* the instruction index (program_size / 32 max) */
#define TPU_TEST_HELD_HELD	(1u << 31)	/* a job is held, before instruction PC */
#define TPU_TEST_HELD_PC_MASK	0xffffu

#define TPU_ID_MAGIC		0x54505530u	/* "TPU0" */
#define TPU_SPEC_VERSION	0x00020004u	/* 2.4 */
#define TPU_RESET_MAGIC		0x52535421u	/* "RST!" */
#define TPU_TLB_INVAL_ALL	0xffffffffu

#define TPU_CAP_INT8		(1u << 0)	/* int8 x int8 -> int32 matmul */
#define TPU_CAP_BF16		(1u << 1)	/* bf16 x bf16 -> fp32 matmul */
#define TPU_CAP_FP32		(1u << 2)	/* fp32 x fp32 -> fp32 matmul (native mode) */
#define TPU_CAP_VPU		(1u << 3)	/* ACTIVATE, VECTOR, REDUCE, POOL, TRANSPOSE */
#define TPU_CAP_TLB_DONE	(1u << 4)	/* TLB_INVAL_DONE reports completed invalidations (spec 1.3) */
#define TPU_CAP_VPU_TRAIN	(1u << 5)	/* spec 1.4: LOG..RECIP, VECTOR DIV..EQ, TPU_F_VEC_B_COL */
#define TPU_CAP_RUN_INFO	(1u << 6)	/* spec 1.5: RUN_QUEUE and RUN_SEQNO name the running job */
#define TPU_CAP_ICI		(1u << 7)	/* spec 2.0: the interconnect registers, SEND and RECV */
#define TPU_CAP_ACT_ERF		(1u << 8)	/* spec 2.3: ACTIVATE ERF */
#define TPU_CAP_COMPL_LINK	(1u << 9)	/* spec 2.4: COMPL_SIZE, 128-byte records with link stats */

/* ICI_INFO (spec 2.0) */
#define TPU_ICI_INFO_PORTS_MASK	0xfu		/* bits 3..0: ports wired (0: not on a fabric) */
#define TPU_ICI_INFO_TOPO_SHIFT	4		/* bits 7..4: enum tpu_ici_topology */
enum tpu_ici_topology {
	TPU_ICI_TOPO_NONE = 0,
	TPU_ICI_TOPO_RING = 1,		/* ports 0 +x, 1 -x */
	TPU_ICI_TOPO_TORUS2D = 2,	/* ports 0 +x, 1 -x, 2 +y, 3 -y */
};
#define TPU_ICI_MAX_PORTS	8	/* port numbers a SEND or RECV may name */
#define TPU_ICI_MAX_DIM		64	/* cards along one axis */
#define TPU_ICI_PACKET_BYTES	4096	/* payload of a packet: one credit */
#define TPU_ICI_MAX_BYTES	(1u << 28)	/* largest SEND or RECV: 256 MiB */

/* PORT_STATUS (spec 2.0) */
#define TPU_PORT_UP		(1u << 0)	/* a peer card is wired to the port */
#define TPU_PORT_ERROR		(1u << 1)	/* a job ended with a link error on it since reset */
#define TPU_PORT_PEER_PORT_SHIFT 8		/* bits 15..8: the peer's port of this link */

/* RUN_QUEUE (spec 1.5) */
#define TPU_RUN_RUNNING		(1u << 31)	/* a job is executing */
#define TPU_RUN_QUEUE_MASK	0x7u		/* its queue (0 when none runs) */

/* bf16 MATMUL sums k in blocks of this many from the tile's first k (spec 1.3, Numerics) */
#define TPU_BF16_BLOCK_K	32

#define TPU_CONTROL_ENABLE	(1u << 0)	/* process command queues */

#define TPU_STATUS_READY	(1u << 0)	/* reset complete, registers usable */
#define TPU_STATUS_BUSY		(1u << 1)	/* a job is executing */

#define TPU_IRQ_DONE		(1u << 0)
#define TPU_IRQ_ERROR		(1u << 1)

#define TPU_QCTRL_ENABLE	(1u << 0)	/* fetch entries between HEAD and TAIL */
#define TPU_QCTRL_RESET		(1u << 1)	/* WO: abort the queue's job, HEAD = TAIL = 0, clear ERROR */

#define TPU_QSTAT_ACTIVE	(1u << 0)	/* enabled and configured */
#define TPU_QSTAT_ERROR		(1u << 1)	/* bad ring configuration; cleared by re-enable */

#define TPU_RING_MAX_ENTRIES	4096
#define TPU_QUEUE_MAX_PRIORITY	3

/* ---- command ring entry (64 bytes) ---------------------------------------------------- */

#define TPU_RING_OP_RUN		1	/* execute a program */

struct tpu_ring_entry {
	__u32 opcode;		/* TPU_RING_OP_* */
	__u32 ctx_id;		/* context whose page tables translate the program's addresses */
	__u64 seqno;		/* echoed in the completion record and DONE_SEQ */
	__u64 program_addr;	/* device virtual address of the first instruction */
	__u32 program_size;	/* bytes, a multiple of sizeof(struct tpu_insn) */
	__u32 flags;		/* must be 0 */
	__u64 reserved[4];	/* must be 0 */
};

/* ---- completion record (64 bytes), written at COMPL_BASE + slot * 64 ------------------ */

#define TPU_COMPL_VALID		(1u << 0)

struct tpu_completion {
	__u64 seqno;
	__u32 status;		/* TPU_ERR_NONE or the TPU_ERR_* that ended the job */
	__u32 error_pc;		/* index of the failing instruction */
	__u64 fault_addr;	/* device VA (MMU fault) or offset that was out of range */
	__u64 cycles;		/* modelled cycles of the job */
	__u64 mxu_busy_cycles;
	__u64 macs;
	__u32 flags;		/* TPU_COMPL_VALID */
	__u32 reserved0;
	__u64 stall_cycles;	/* cycles instructions waited for a dependency or a busy unit */
};

/*
 * Spec 2.4: with COMPL_SIZE = 128 a record is struct tpu_completion followed by this half,
 * the job's own link statistics (the LINK counters' share of the job).
 */
#define TPU_COMPL_SIZE		64
#define TPU_COMPL_SIZE_LINK	128

struct tpu_completion_link {
	__u64 link_cycles;	/* cycles SEND and RECV kept link units busy */
	__u64 link_tx_bytes;	/* bytes SENDs put on links */
	__u64 link_rx_bytes;	/* bytes RECVs took from links */
	__u64 reserved[5];	/* written 0 */
};

/* Job status codes: completion status and TPU_REG_ERR_CODE. */
#define TPU_ERR_NONE		0
#define TPU_ERR_BAD_OPCODE	1	/* unknown instruction opcode */
#define TPU_ERR_BAD_OPERAND	2	/* bad dtype, flags, reserved bits, zero or oversized shape */
#define TPU_ERR_UB_RANGE	3	/* unified buffer access out of range */
#define TPU_ERR_ACC_RANGE	4	/* accumulator access out of range */
#define TPU_ERR_MMU_FAULT	5	/* unmapped device VA or permission denied */
#define TPU_ERR_BUS		6	/* host memory access failed at a physical address */
#define TPU_ERR_BAD_CTX		7	/* context id out of range or context not valid */
#define TPU_ERR_PROGRAM		8	/* program size zero, misaligned or over the limit */
#define TPU_ERR_RING_ENTRY	9	/* bad ring entry opcode, flags or reserved fields */
#define TPU_ERR_NO_WEIGHTS	10	/* MATMUL without matching loaded weights */
#define TPU_ERR_ABORTED		11	/* stopped by a reset */
#define TPU_ERR_LINK_DOWN	12	/* spec 2.0: no link on the port, or it went down */
#define TPU_ERR_LINK_MISMATCH	13	/* spec 2.0: the message waiting has another tag or length */
#define TPU_ERR_LINK_PARTIAL	14	/* spec 2.0: the sender cut the message short */
#define TPU_ERR_COUNT		15

#define TPU_PROGRAM_MAX_BYTES	(1u << 20)

/* ---- device MMU ------------------------------------------------------------------------ */

/*
 * CTX_TABLE points at NUM_CTX 16-byte entries; entry i describes context i. A valid entry holds
 * the physical address of a 3-level page-table root. Device virtual addresses are 39 bits:
 * bits 38..30 index level 0, 29..21 level 1, 20..12 level 2 (the leaf), 11..0 the page offset.
 * Every table is one 4 KiB page of 512 little-endian 64-bit entries.
 */
struct tpu_ctx_entry {
	__u64 pt_root;		/* TPU_PTE_VALID | physical address of the level-0 table */
	__u64 reserved;		/* must be 0 */
};

#define TPU_PAGE_SHIFT		12
#define TPU_PAGE_SIZE		(1ull << TPU_PAGE_SHIFT)
#define TPU_PT_LEVELS		3
#define TPU_PT_ENTRIES		512
#define TPU_VA_BITS		39
#define TPU_PT_INDEX(va, level)	(((va) >> (TPU_PAGE_SHIFT + 9 * (TPU_PT_LEVELS - 1 - (level)))) & 511)

#define TPU_PTE_VALID		(1ull << 0)
#define TPU_PTE_READ		(1ull << 1)	/* leaf: device may read */
#define TPU_PTE_WRITE		(1ull << 2)	/* leaf: device may write */
#define TPU_PTE_ADDR_MASK	0x000ffffffffff000ull

/* ---- instructions (32 bytes each) ------------------------------------------------------ */

enum tpu_opcode {
	TPU_OP_NOP = 0,
	TPU_OP_HALT = 1,	/* end of program */
	TPU_OP_DMA_IN = 2,	/* host memory -> unified buffer */
	TPU_OP_DMA_OUT = 3,	/* unified buffer or accumulators -> host memory */
	TPU_OP_LOAD_W = 4,	/* unified buffer -> weight tile of the systolic array */
	TPU_OP_MATMUL = 5,	/* unified buffer activations x weights -> accumulators */
	TPU_OP_ACTIVATE = 6,	/* accumulators -> bias, scale, function, convert -> unified buffer */
	TPU_OP_VECTOR = 7,	/* elementwise a op b on the unified buffer */
	TPU_OP_REDUCE = 8,	/* row reductions (sum, max) on the unified buffer */
	TPU_OP_POOL = 9,	/* max / average pooling over HWC images in the unified buffer */
	TPU_OP_TRANSPOSE = 10,	/* rows x cols -> cols x rows in the unified buffer */
	TPU_OP_SYNC = 11,	/* wait until every earlier instruction has finished */
	TPU_OP_TIMESTAMP = 12,	/* write the modelled cycle count to host memory */
	TPU_OP_SEND = 13,	/* spec 2.0: unified buffer or host memory -> a link port */
	TPU_OP_RECV = 14,	/* spec 2.0: a link port -> (reduce into) unified buffer or host */
};

enum tpu_dtype {
	TPU_DT_INT8 = 0,
	TPU_DT_BF16 = 1,
	TPU_DT_INT32 = 2,
	TPU_DT_FP32 = 3,
};

/* DMA_OUT: read the accumulators instead of the unified buffer. */
#define TPU_F_SRC_ACC		(1u << 0)
/* MATMUL: add into the accumulators instead of overwriting them. */
#define TPU_F_ACCUMULATE	(1u << 0)
/* LOAD_W: the tile comes from host memory (struct tpu_insn_dma layout, local_* zero). */
#define TPU_F_W_HOST		(1u << 0)
/* LOAD_W: the source holds the tile transposed: N rows of K elements, element (n, k) = W[k][n]. */
#define TPU_F_W_TRANSPOSE	(1u << 1)

/* ACTIVATE flags: bits 3..0 the function, then modifiers. */
#define TPU_ACT_FUNC_MASK	0xfu
enum tpu_act_func {
	TPU_ACT_NONE = 0,
	TPU_ACT_RELU = 1,
	TPU_ACT_RELU6 = 2,
	TPU_ACT_GELU = 3,	/* tanh approximation */
	TPU_ACT_SIGMOID = 4,
	TPU_ACT_TANH = 5,
	TPU_ACT_EXP = 6,
	TPU_ACT_LOG = 7,	/* spec 1.4 */
	TPU_ACT_SQRT = 8,	/* spec 1.4 */
	TPU_ACT_RSQRT = 9,	/* spec 1.4 */
	TPU_ACT_RECIP = 10,	/* spec 1.4 */
	TPU_ACT_ERF = 11,	/* spec 2.3 (TPU_CAP_ACT_ERF): the error function */
};
#define TPU_F_ACT_BIAS		(1u << 4)	/* add the fp32 vector at bias_addr (cols elements) */
#define TPU_F_ACT_SRC_INT32	(1u << 5)	/* the accumulators hold int32 (else fp32) */

/* VECTOR / REDUCE / POOL flags: bits 3..0 the operation. */
#define TPU_VPU_OP_MASK		0xfu
enum tpu_vector_op {
	TPU_VOP_ADD = 0,
	TPU_VOP_SUB = 1,
	TPU_VOP_MUL = 2,
	TPU_VOP_MAX = 3,
	TPU_VOP_MIN = 4,
	TPU_VOP_DIV = 5,	/* spec 1.4: a / b */
	TPU_VOP_GATE = 6,	/* spec 1.4: a > 0 ? b : 0 (the ReLU gradient) */
	TPU_VOP_GT = 7,		/* spec 1.4: a > b ? 1 : 0 */
	TPU_VOP_EQ = 8,		/* spec 1.4: a == b ? 1 : 0 */
};
/* VECTOR (spec 1.4): b[r][c] is b's element (r, 0): one value per row, b_stride apart. */
#define TPU_F_VEC_B_COL		(1u << 4)
enum tpu_reduce_op {
	TPU_ROP_SUM = 0,
	TPU_ROP_MAX = 1,
};
enum tpu_pool_op {
	TPU_POOL_MAX = 0,
	TPU_POOL_AVG = 1,
};
/* Work limits of the vector unit's instructions: docs/hardware.md section 6. */
#define TPU_POOL_MAX_WINDOW	16	/* largest POOL win_h and win_w */

/*
 * DMA_IN / DMA_OUT: move rows x cols elements of dtype. Host rows are host_stride bytes apart
 * (device VA), local rows local_stride bytes apart (unified buffer, or accumulators for
 * DMA_OUT with TPU_F_SRC_ACC, where dtype must be INT32 or FP32).
 */
struct tpu_insn_dma {
	__u8 opcode;
	__u8 dtype;
	__u16 flags;
	__u16 rows;
	__u16 cols;
	__u64 host_addr;
	__u32 host_stride;
	__u32 local_addr;
	__u32 local_stride;
	__u32 reserved;		/* must be 0 */
};

/*
 * LOAD_W: load a rows(K) x cols(N) weight tile (K <= MXU rows, N <= MXU cols) from the unified
 * buffer, row k at src_addr + k * src_stride (acc_*, row_group, group_stride zero), or with
 * TPU_F_W_HOST from host memory in the tpu_insn_dma layout. TPU_F_W_TRANSPOSE: see above.
 * MATMUL: stream rows(M) x cols(K) activations from the unified buffer through the loaded
 * K x N tile (dtype and K must match LOAD_W); result row m, column n goes to the accumulator
 * element at acc_addr + m * acc_stride + 4 * n (int32 for int8, fp32 for bf16 and fp32).
 * Activation row m is read at src_addr + (m / G) * group_stride + (m % G) * src_stride with
 * G = row_group, or G = rows when row_group is 0: one MATMUL per kernel tap of a convolution
 * walks the output pixels of an HWC image (G = output width).
 */
struct tpu_insn_mxu {
	__u8 opcode;
	__u8 dtype;
	__u16 flags;
	__u16 rows;
	__u16 cols;
	__u32 src_addr;
	__u32 src_stride;
	__u32 acc_addr;
	__u32 acc_stride;
	__u16 row_group;
	__u16 reserved;		/* must be 0 */
	__u32 group_stride;
};

/*
 * ACTIVATE: for rows x cols accumulator elements at acc_addr (rows acc_stride bytes apart):
 * x = acc (converted to fp32 if TPU_F_ACT_SRC_INT32); x = x + bias[n] if TPU_F_ACT_BIAS;
 * x = x * scale; x = function(x); convert x to dtype and store it in the unified buffer at
 * dst_addr + m * dst_stride + n * size(dtype). docs/hardware.md defines every step exactly.
 */
struct tpu_insn_act {
	__u8 opcode;
	__u8 dtype;		/* output type */
	__u16 flags;		/* tpu_act_func | TPU_F_ACT_* */
	__u16 rows;
	__u16 cols;
	__u32 acc_addr;
	__u32 acc_stride;
	__u32 dst_addr;
	__u32 dst_stride;
	__u32 bias_addr;	/* unified buffer, fp32[cols]; 0 without TPU_F_ACT_BIAS */
	__u32 scale;		/* IEEE binary32 bits */
};

/*
 * VECTOR: dst[r][c] = a[r][c] op b[r][c] over rows x cols elements of dtype; b_stride 0
 * broadcasts b's first row. REDUCE: dst[r] = op over c of a[r][c], dst elements dst_stride
 * bytes apart (b_addr, b_stride zero). TRANSPOSE: dst[c][r] = a[r][c] (b_* zero).
 */
struct tpu_insn_vec {
	__u8 opcode;
	__u8 dtype;
	__u16 flags;		/* tpu_vector_op / tpu_reduce_op */
	__u16 rows;
	__u16 cols;
	__u32 a_addr;
	__u32 a_stride;
	__u32 b_addr;
	__u32 b_stride;
	__u32 dst_addr;
	__u32 dst_stride;
};

/*
 * POOL: output pixel (oy, ox) of an HWC image, rows(OH) x cols(OW) x channels, is the max or
 * average over the win_h x win_w window of input pixels (oy * stride_h + i, ox * stride_w + j).
 * Input pixel (y, x) channel c is at src_addr + y * src_row_stride + (x * channels + c) * size,
 * output likewise with dst_addr and dst_row_stride.
 */
struct tpu_insn_pool {
	__u8 opcode;
	__u8 dtype;
	__u16 flags;		/* tpu_pool_op */
	__u16 rows;
	__u16 cols;
	__u16 channels;
	__u8 win_h;
	__u8 win_w;
	__u8 stride_h;
	__u8 stride_w;
	__u16 reserved;		/* must be 0 */
	__u32 src_addr;
	__u32 src_row_stride;
	__u32 dst_addr;
	__u32 dst_row_stride;
};

/*
 * SEND / RECV (spec 2.0): one message of len bytes over the link on port. SEND reads it from
 * the unified buffer at addr, or with TPU_F_LINK_HOST from host memory at device VA addr (needs
 * READ). RECV takes the next message that arrived on the port, whose tag and len must be the
 * RECV's, and stores it at addr (UB, or host with TPU_F_LINK_HOST, needs READ and WRITE when
 * it reduces), or with a reduce op (flags bits 3..0) combines it with what is there:
 * dst[i] = dst[i] op msg[i], elements of dtype. docs/hardware.md section 10.
 */
struct tpu_insn_link {
	__u8 opcode;
	__u8 dtype;		/* RECV with a reduce op: BF16, INT32 or FP32; else 0 */
	__u16 flags;		/* RECV: tpu_link_reduce in bits 3..0, _SKIP_STALE; TPU_F_LINK_HOST */
	__u8 port;		/* < TPU_ICI_MAX_PORTS */
	__u8 reserved0;		/* must be 0 */
	__u16 reserved1;	/* must be 0 */
	__u32 tag;		/* the message's tag, matched by RECV */
	__u32 len;		/* bytes, 1..TPU_ICI_MAX_BYTES */
	__u64 addr;		/* UB offset, or device VA with TPU_F_LINK_HOST */
	__u64 reserved2;	/* must be 0 */
};

#define TPU_LINK_REDUCE_MASK	0xfu
enum tpu_link_reduce {
	TPU_LINK_COPY = 0,	/* dst = msg */
	TPU_LINK_SUM = 1,	/* dst = dst + msg */
	TPU_LINK_MAX = 2,	/* dst = max(dst, msg), VECTOR MAX's rule */
	TPU_LINK_MIN = 3,	/* dst = min(dst, msg), VECTOR MIN's rule */
};
/* SEND / RECV: addr is a device VA in host memory, not a unified-buffer offset. */
#define TPU_F_LINK_HOST		(1u << 4)
/*
 * RECV (spec 2.2): a message waiting on the port whose tag is not the RECV's (one a failed job
 * left behind) is dropped instead of failing LINK_MISMATCH; the RECV takes the first one with its
 * tag.
 */
#define TPU_F_LINK_SKIP_STALE	(1u << 5)

/*
 * TIMESTAMP: once every earlier instruction has finished, write struct tpu_timestamp to
 * host_addr (device VA, 8-byte aligned, needs WRITE permission).
 */
struct tpu_insn_ts {
	__u8 opcode;
	__u8 dtype;		/* must be 0 */
	__u16 flags;		/* must be 0 */
	__u32 tag;		/* copied to the record */
	__u64 host_addr;
	__u64 reserved[2];	/* must be 0 */
};

struct tpu_timestamp {
	__u64 cycle;		/* modelled cycles since the job started */
	__u32 tag;
	__u32 pc;		/* index of the TIMESTAMP instruction */
};

union tpu_insn {
	struct {
		__u8 opcode;
		__u8 dtype;
		__u16 flags;
	} hdr;
	struct tpu_insn_dma dma;
	struct tpu_insn_mxu mxu;
	struct tpu_insn_act act;
	struct tpu_insn_vec vec;
	struct tpu_insn_pool pool;
	struct tpu_insn_ts ts;
	struct tpu_insn_link link;
	__u64 raw[4];
};

#define TPU_INSN_SIZE		32

#ifdef __cplusplus
static_assert(sizeof(struct tpu_ring_entry) == 64, "ring entry is 64 bytes");
static_assert(sizeof(struct tpu_completion) == 64, "completion record is 64 bytes");
static_assert(sizeof(struct tpu_completion_link) == 64, "its link half is 64 bytes");
static_assert(sizeof(struct tpu_ctx_entry) == 16, "context entry is 16 bytes");
static_assert(sizeof(union tpu_insn) == TPU_INSN_SIZE, "instructions are 32 bytes");
static_assert(sizeof(struct tpu_insn_pool) == TPU_INSN_SIZE, "POOL is 32 bytes");
static_assert(sizeof(struct tpu_insn_act) == TPU_INSN_SIZE, "ACTIVATE is 32 bytes");
static_assert(sizeof(struct tpu_insn_link) == TPU_INSN_SIZE, "SEND and RECV are 32 bytes");
#else
_Static_assert(sizeof(struct tpu_ring_entry) == 64, "ring entry is 64 bytes");
_Static_assert(sizeof(struct tpu_completion) == 64, "completion record is 64 bytes");
_Static_assert(sizeof(struct tpu_completion_link) == 64, "its link half is 64 bytes");
_Static_assert(sizeof(struct tpu_ctx_entry) == 16, "context entry is 16 bytes");
_Static_assert(sizeof(union tpu_insn) == TPU_INSN_SIZE, "instructions are 32 bytes");
_Static_assert(sizeof(struct tpu_insn_pool) == TPU_INSN_SIZE, "POOL is 32 bytes");
_Static_assert(sizeof(struct tpu_insn_act) == TPU_INSN_SIZE, "ACTIVATE is 32 bytes");
_Static_assert(sizeof(struct tpu_insn_link) == TPU_INSN_SIZE, "SEND and RECV are 32 bytes");
#endif

#endif /* TPU_HW_H */
