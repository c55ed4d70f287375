/* SPDX-License-Identifier: MIT */
/*
 * tpurt.h - the runtime's C API, for C programs and foreign-function interfaces: cards (list,
 * open, properties, counters), buffers and tensors, streams and events, executables compiled
 * once per shape, the main ops on tensors (blocking, or queued on a stream), and exact int8,
 * bf16 and fp32 matmuls on host arrays.
 *
 * Conventions:
 * - Every call returning int returns TPURT_OK (0) or a negative TPURT_E_* code (a few return a
 *   count or a flag >= 0); tpurt_last_error() then says what went wrong and what to do. The
 *   message is per thread.
 * - Argument and result structs are versioned: their first field, struct_size, must be set by
 *   the caller to sizeof(the struct) as its header declared it. The library accepts any size
 *   from the struct's first version up (fields it does not know must then be zero) and fills
 *   only the bytes the caller's struct has, so binaries built against older or newer headers
 *   keep working. A struct_size below the first version's is refused (TPURT_E_INVALID).
 * - Objects (device, buffer, tensor, stream, event, executable) are opaque handles released by
 *   their tpurt_*_destroy / tpurt_close call; NULL is accepted there and does nothing. A tensor,
 *   buffer or stream keeps its device alive, so they may be released in any order.
 * - Ops take a stream: NULL runs the op and waits for it; a stream queues it and returns at
 *   once (errors of the card's jobs are then returned by tpurt_stream_synchronize() or
 *   tpurt_event_wait(), naming the op). Tensors used by a queued op stay alive until it ends,
 *   even if destroyed before. Host memory given to a queued copy must stay valid until it ran.
 * - Threads: every call may be made from several threads at once on one device. A stream may
 *   be used from several threads (its work is queued in the order of the calls); a tensor's
 *   contents must not be written by the host while an op uses them.
 */
#ifndef TPURT_H
#define TPURT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this API: TPURT_API_VERSION of the header, tpurt_api_version() of the library. */
#define TPURT_API_VERSION 6
uint32_t tpurt_api_version(void);

enum tpurt_status {
    TPURT_OK = 0,
    TPURT_E_NO_DEVICE = -1,     /* no TPU device node */
    TPURT_E_DEVICE_ACCESS = -2, /* a node exists but cannot be opened */
    TPURT_E_SYSTEM = -3,        /* an ioctl or mmap failed */
    TPURT_E_INVALID = -4,       /* bad argument: null pointer, bad struct_size, wrong shape */
    TPURT_E_UNSUPPORTED = -5,   /* the card cannot run the request */
    TPURT_E_JOB_FAILED = -6,    /* the card ended a job with an error */
    TPURT_E_TIMEOUT = -7,       /* a job did not end in time (it may still end later) */
    TPURT_E_NO_MEMORY = -8,
    TPURT_E_INTERNAL = -9,
};

/* Element types (the card's TPU_DT_* values). */
enum tpurt_dtype { TPURT_INT8 = 0, TPURT_BF16 = 1, TPURT_INT32 = 2, TPURT_FP32 = 3 };
/* ACTIVATE's functions (TPU_ACT_*). */
enum tpurt_activation {
    TPURT_ACT_NONE = 0,
    TPURT_ACT_RELU = 1,
    TPURT_ACT_RELU6 = 2,
    TPURT_ACT_GELU = 3,
    TPURT_ACT_SIGMOID = 4,
    TPURT_ACT_TANH = 5,
    TPURT_ACT_EXP = 6,
    TPURT_ACT_LOG = 7,
    TPURT_ACT_SQRT = 8,
    TPURT_ACT_RSQRT = 9,
    TPURT_ACT_RECIP = 10,
    TPURT_ACT_ERF = 11, /* cards of spec 2.3 and later */
};
/* VECTOR's elementwise ops (TPU_VOP_*) and REDUCE's reductions (TPU_ROP_*). */
enum tpurt_vector_op { TPURT_ADD = 0, TPURT_SUB = 1, TPURT_MUL = 2, TPURT_MAX = 3, TPURT_MIN = 4 };
enum tpurt_reduce_op { TPURT_REDUCE_SUM = 0, TPURT_REDUCE_MAX = 1 };

/* Waits without a limit of their own take TPURT_WAIT_DEFAULT (60 s) as timeout_ns. */
#define TPURT_WAIT_DEFAULT INT64_C(-1)

typedef struct tpurt_device tpurt_device;
typedef struct tpurt_buffer tpurt_buffer;
typedef struct tpurt_tensor tpurt_tensor;
typedef struct tpurt_stream tpurt_stream;
typedef struct tpurt_event tpurt_event;
typedef struct tpurt_executable tpurt_executable;

/* ---- Devices ---- */

struct tpurt_device_info {
    uint32_t struct_size;  /* in: sizeof(struct tpurt_device_info) */
    int32_t numa_node;     /* -1 if unknown */
    char path[64];         /* e.g. /dev/accel/accel0 */
    char pci_slot[32];     /* e.g. 0000:00:03.0, empty if unknown */
    uint32_t spec_version; /* major << 16 | minor */
    uint32_t caps;         /* TPU_CAP_* */
    uint32_t clock_mhz;
    uint32_t mxu_rows;
    uint32_t mxu_cols;
    uint32_t ub_bytes;
    uint32_t acc_bytes;
    uint32_t minor; /* N of /dev/accel/accelN */
};

struct tpurt_counters {
    uint32_t struct_size; /* in: sizeof(struct tpurt_counters) */
    uint32_t pad;
    uint64_t cycles;      /* modelled cycles of all jobs since the driver's probe */
    uint64_t macs;        /* multiply-accumulates */
    uint64_t jobs_done;   /* jobs ended without error */
    uint64_t jobs_failed; /* jobs ended with an error */
};

/* Number of TPU cards (>= 0) or a negative TPURT_E_* code. */
int tpurt_device_count(void);
/* Properties of the index-th card without opening it for work (index < tpurt_device_count()). */
int tpurt_device_list_info(unsigned index, struct tpurt_device_info *info);
/* Opens the index-th card into *out; close it with tpurt_close(). */
int tpurt_open(unsigned index, tpurt_device **out);
void tpurt_close(tpurt_device *dev);
/* Properties of an open card. */
int tpurt_get_info(const tpurt_device *dev, struct tpurt_device_info *info);
/* The card's cumulative performance counters. */
int tpurt_get_counters(const tpurt_device *dev, struct tpurt_counters *counters);

/* ---- Buffers: memory mapped into the process and into the card's address space ---- */

/* A buffer of at least `bytes` (> 0), zeroed. */
int tpurt_buffer_create(tpurt_device *dev, size_t bytes, tpurt_buffer **out);
void tpurt_buffer_destroy(tpurt_buffer *buffer);
/* The host mapping (NULL for a NULL buffer), its size in bytes and its card address. */
void *tpurt_buffer_data(tpurt_buffer *buffer);
size_t tpurt_buffer_size(const tpurt_buffer *buffer);
uint64_t tpurt_buffer_device_addr(const tpurt_buffer *buffer);

/* ---- Tensors: densely packed, row-major, in a buffer of their own ---- */

#define TPURT_MAX_RANK 8
struct tpurt_tensor_desc {
    uint32_t struct_size; /* in: sizeof(struct tpurt_tensor_desc) */
    uint32_t dtype;       /* enum tpurt_dtype */
    uint32_t rank;        /* 1..TPURT_MAX_RANK */
    uint32_t pad;         /* must be zero */
    uint64_t shape[TPURT_MAX_RANK];
};

/* A new tensor of `desc` (contents zero). */
int tpurt_tensor_create(tpurt_device *dev, const struct tpurt_tensor_desc *desc,
                        tpurt_tensor **out);
void tpurt_tensor_destroy(tpurt_tensor *tensor);
/* Its dtype, rank and shape. */
int tpurt_tensor_describe(const tpurt_tensor *tensor, struct tpurt_tensor_desc *desc);
/* Host <-> tensor copies of exactly all its elements (bytes = elements x element size). With a
 * stream they are queued in its order; NULL copies at once. */
int tpurt_tensor_write(tpurt_stream *stream, tpurt_tensor *tensor, const void *data, size_t bytes);
int tpurt_tensor_read(tpurt_stream *stream, const tpurt_tensor *tensor, void *data, size_t bytes);

/* ---- Streams and events ---- */

struct tpurt_stream_options {
    uint32_t struct_size; /* in: sizeof(struct tpurt_stream_options) */
    int32_t priority;     /* 0 (low, default) .. 3 (high): SUBMIT's priority, mapped by the
                             driver onto the card's queues; above 0 takes CAP_SYS_NICE
                             (EACCES otherwise) */
};

/* A new in-order stream on `dev`; options may be NULL (defaults). */
int tpurt_stream_create(tpurt_device *dev, const struct tpurt_stream_options *options,
                        tpurt_stream **out);
/* Waits for the stream's work (errors ignored) and releases it. */
void tpurt_stream_destroy(tpurt_stream *stream);
/* Waits up to timeout_ns for everything queued so far; returns the first error of the
 * stream's work since the last report (TPURT_E_JOB_FAILED naming the op) or TPURT_E_TIMEOUT. */
int tpurt_stream_synchronize(tpurt_stream *stream, int64_t timeout_ns);
/* Makes the stream's later work wait for `event` on the card; the host does not wait. */
int tpurt_stream_wait_event(tpurt_stream *stream, const tpurt_event *event);

/* A new event at the stream's current end. */
int tpurt_event_record(tpurt_stream *stream, tpurt_event **out);
void tpurt_event_destroy(tpurt_event *event);
/* 1 if the work before the event has ended, 0 if not, or a negative TPURT_E_* code. */
int tpurt_event_query(const tpurt_event *event);
/* Waits up to timeout_ns for the event; errors as tpurt_stream_synchronize(). */
int tpurt_event_wait(const tpurt_event *event, int64_t timeout_ns);

/* ---- Capture and replay (API version 6; tpurt/graph.hpp) ---- */

typedef struct tpurt_graph tpurt_graph;
/* Until tpurt_stream_end_capture(), ops queued on the stream are recorded, not run; host
 * copies (tpurt_tensor_write / _read), collectives and event waits on it are refused. */
int tpurt_stream_begin_capture(tpurt_stream *stream);
/* The recorded ops joined into as few jobs as the card's 1 MiB programs allow, as a graph named
 * `name` (NULL: "graph"); TPURT_E_INVALID if nothing was recorded. */
int tpurt_stream_end_capture(tpurt_stream *stream, const char *name, tpurt_graph **out);
void tpurt_graph_destroy(tpurt_graph *graph);
/* Jobs one replay submits, and jobs the recorded ops submit one by one (either may be NULL). */
int tpurt_graph_jobs(const tpurt_graph *graph, size_t *jobs, size_t *eager_jobs);
/* Declares `slot`, a tensor the recorded ops read, as the parameter `name`; set_parameter keeps
 * `bytes` (the slot's size) that the next replay writes into it first, in stream order. */
int tpurt_graph_add_parameter(tpurt_graph *graph, const char *name, const tpurt_tensor *slot);
int tpurt_graph_set_parameter(tpurt_graph *graph, const char *name, const void *data,
                              size_t bytes);
/* Queues the recorded ops on `stream` (of the device they were recorded on); errors of its jobs
 * come from tpurt_stream_synchronize() naming the graph. A released tensor's buffer, another
 * device: TPURT_E_INVALID, nothing queued. */
int tpurt_graph_replay(tpurt_graph *graph, tpurt_stream *stream);

/* ---- Executables: an op compiled once for a shape, launched on any tensors of it ---- */

/* out[m x n] = activation(scale x (a[m x k] x w[k x n] + bias[n])) with a, w of `dtype` (int8,
 * bf16, fp32), out of out_dtype. With activation NONE, scale 1, no bias and out_dtype the
 * accumulator type (int32 for int8, else fp32) it is a plain matmul. */
struct tpurt_dense_desc {
    uint32_t struct_size; /* in: sizeof(struct tpurt_dense_desc) */
    uint32_t dtype;       /* enum tpurt_dtype of a and w */
    uint32_t out_dtype;   /* enum tpurt_dtype of out */
    uint32_t activation;  /* enum tpurt_activation */
    uint32_t m, k, n;
    uint32_t has_bias; /* 0 or 1: a fp32 bias[n] is the fourth argument */
    float scale;
    uint32_t pad; /* must be zero */
};

/* Compiles (or fetches from the device's cache) the executable of `desc`. */
int tpurt_executable_compile_dense(tpurt_device *dev, const struct tpurt_dense_desc *desc,
                                   tpurt_executable **out);
void tpurt_executable_destroy(tpurt_executable *exe);
/* Number of arguments, and of jobs per launch. */
int tpurt_executable_arg_count(const tpurt_executable *exe);
int tpurt_executable_job_count(const tpurt_executable *exe);
/* Launches it with args[i] (densely packed tensors: a, w, out[, bias]) as argument i: on the
 * stream, or with a NULL stream on `dev` waiting for it. */
int tpurt_executable_launch(tpurt_device *dev, tpurt_stream *stream, const tpurt_executable *exe,
                            tpurt_tensor *const *args, uint32_t arg_count);

/* ---- Ops on tensors (tensor_ops.hpp); stream NULL: run and wait ---- */

/* c = a x b: int8 -> int32, bf16 or fp32 -> fp32. */
int tpurt_op_matmul(tpurt_device *dev, tpurt_stream *stream, const tpurt_tensor *a,
                    const tpurt_tensor *b, tpurt_tensor *c);
/* out = activation(scale x (a x w + bias)); bias may be NULL. */
int tpurt_op_dense(tpurt_device *dev, tpurt_stream *stream, const tpurt_tensor *a,
                   const tpurt_tensor *w, const tpurt_tensor *bias, tpurt_tensor *out,
                   uint32_t activation, float scale);
/* out = a op b elementwise (b of a's shape, or one row broadcast). */
int tpurt_op_elementwise(tpurt_device *dev, tpurt_stream *stream, uint32_t op,
                         const tpurt_tensor *a, const tpurt_tensor *b, tpurt_tensor *out);
/* out = f(scale x a), converted to out's dtype (any tpurt_activation; a function the card lacks,
 * such as ERF before spec 2.3, fails TPURT_E_UNSUPPORTED). */
int tpurt_op_unary(tpurt_device *dev, tpurt_stream *stream, uint32_t activation,
                   const tpurt_tensor *a, tpurt_tensor *out, float scale);
/* out = sum or max over a's last dimension. */
int tpurt_op_reduce_rows(tpurt_device *dev, tpurt_stream *stream, uint32_t op,
                         const tpurt_tensor *a, tpurt_tensor *out);
/* out = a transposed (matrices). */
int tpurt_op_transpose(tpurt_device *dev, tpurt_stream *stream, const tpurt_tensor *a,
                       tpurt_tensor *out);

/* ---- Matmuls on host arrays (copied in and out), blocking ---- */

/* c[m x n] = a[m x k] x b[k x n], row-major, exact (see tpurt/reference.hpp). */
int tpurt_matmul_int8(tpurt_device *dev, const int8_t *a, const int8_t *b, int32_t *c, uint32_t m,
                      uint32_t k, uint32_t n);
/* a and b hold bf16 bit patterns (the top 16 bits of a binary32). */
int tpurt_matmul_bf16(tpurt_device *dev, const uint16_t *a, const uint16_t *b, float *c, uint32_t m,
                      uint32_t k, uint32_t n);
/* The card's native fp32 matmul: one fma chain per element in ascending k, exact against
 * tpurt/reference_fp32.hpp. */
int tpurt_matmul_fp32(tpurt_device *dev, const float *a, const float *b, float *c, uint32_t m,
                      uint32_t k, uint32_t n);

/* Message of the last failed call on this thread ("" if none); valid until the next call. */
const char *tpurt_last_error(void);

/* ---- Every registered op by name (tpurt/ops/op_registry.hpp); stream NULL: run and wait ---- */

/* An attribute by name, its value as text: "op" = "add", "activation" = "relu", "scale" =
 * "0.5" (any strtof number, "0x1p-3" exactly), window sizes and strides as integers. */
struct tpurt_op_attr {
    const char *name;
    const char *value;
};

/* Number of registered ops. */
int tpurt_op_count(void);
/* Name of op `index` (0 .. tpurt_op_count() - 1), NULL beyond. */
const char *tpurt_op_name(int index);
/* Its tensors in order (optional ones marked "?", passed as NULL when absent) and attribute
 * names, e.g. "dense(a, w, out, bias?; activation, scale)"; NULL beyond. */
const char *tpurt_op_signature(int index);
/* Op `op` on tensors[0 .. tensor_count) with attrs[0 .. attr_count) (each at most once; the
 * others keep their defaults): run and waited for with a NULL stream, else queued. Refused
 * with TPURT_E_INVALID and a message for an unknown op, a wrong tensor count, a NULL tensor
 * the op does not take as optional, an unknown attribute or a value it cannot parse, and
 * whatever the op's own checks refuse. */
int tpurt_op_launch(tpurt_device *dev, tpurt_stream *stream, const char *op,
                    tpurt_tensor *const *tensors, uint32_t tensor_count,
                    const struct tpurt_op_attr *attrs, uint32_t attr_count);

/* ---- The card's engine run in this process (host builds; link the tpurt_engine library) ---- */

/* What tpurt_open_in_process() runs; the fields as the QEMU card's properties. */
struct tpurt_in_process_config {
    uint32_t struct_size; /* in: sizeof(struct tpurt_in_process_config) */
    uint32_t mxu_rows;
    uint32_t mxu_cols;
    uint32_t ub_bytes;
    uint32_t acc_bytes;
    uint32_t clock_mhz;
    uint32_t threads;        /* the engine's worker threads, 0: one per host CPU */
    uint32_t cycle_accurate; /* 0: the fast functional mode */
};

/* Opens the engine library in the process as a device (jobs run when submitted, with the
 * driver's statuses and statistics); config NULL: the QEMU card's defaults (128 x 128, 8 MiB
 * unified buffer, 4 MiB accumulators, 700 MHz). Close it with tpurt_close(). */
int tpurt_open_in_process(const struct tpurt_in_process_config *config, tpurt_device **out);

/* ---- Collectives over the inter-chip interconnect (API version 4, 5; <tpurt/collectives.hpp>) */

typedef struct tpurt_comm tpurt_comm;

/* A communicator's name: made once, handed to every rank of tpurt_comm_init_rank(). */
struct tpurt_comm_id {
    uint8_t bytes[16];
};
enum tpurt_comm_op { TPURT_COMM_SUM = 0, TPURT_COMM_MAX = 1, TPURT_COMM_MIN = 2 };

int tpurt_comm_id_make(struct tpurt_comm_id *out);
/* One process driving every card: rank i on devices[i] (the ring follows the links). A
 * collective not ended after timeout_ms (0: 30 s) fails. Release with tpurt_comm_destroy(). */
int tpurt_comm_init_all(tpurt_device *const *devices, uint32_t count, uint32_t timeout_ms,
                        tpurt_comm **out);
/* Rank `rank` of `nranks` (every card of the fabric; the rank is the card's place on the
 * fabric's ring) on `dev`, the other ranks in other processes with the same id. */
int tpurt_comm_init_rank(tpurt_device *dev, uint32_t nranks, const struct tpurt_comm_id *id,
                         uint32_t rank, uint32_t timeout_ms, tpurt_comm **out);
void tpurt_comm_destroy(tpurt_comm *comm);
/* The ranks this process drives: init_all's count, init_rank's one. */
int tpurt_comm_local_ranks(const tpurt_comm *comm, uint32_t *out);
/* The collectives queue each local rank's part on streams[i] with send[i], recv[i] (arrays of
 * tpurt_comm_local_ranks() entries); errors of the parts come from tpurt_stream_synchronize().
 * all_reduce: recv = op over the ranks of send (n elements; fp32, bf16, int32; send may be
 * recv). reduce_scatter: recv (n) = op of block `rank` of every send (n x nranks).
 * all_gather: block k of recv (n x nranks) = rank k's send (n). broadcast: recv = root's send. */
int tpurt_comm_all_reduce(tpurt_comm *comm, tpurt_stream *const *streams,
                          tpurt_tensor *const *send, tpurt_tensor *const *recv, uint32_t op);
int tpurt_comm_reduce_scatter(tpurt_comm *comm, tpurt_stream *const *streams,
                              tpurt_tensor *const *send, tpurt_tensor *const *recv, uint32_t op);
int tpurt_comm_all_gather(tpurt_comm *comm, tpurt_stream *const *streams,
                          tpurt_tensor *const *send, tpurt_tensor *const *recv);
int tpurt_comm_broadcast(tpurt_comm *comm, tpurt_stream *const *streams,
                         tpurt_tensor *const *send, tpurt_tensor *const *recv, uint32_t root);
/* TPURT_OK, or the status of the first error a collective of the communicator ended with (its
 * message in tpurt_last_error()); never blocks. */
int tpurt_comm_async_error(const tpurt_comm *comm);
/* Fails the communicator: its running collectives end, later ones fail; make a new one. */
int tpurt_comm_abort(tpurt_comm *comm);
/* API version 5. all_to_all: block k of recv[i] (n x nranks, blocks of n) = block `rank` of rank
 * k's send (n x nranks). send_recv: local rank i sends send[i] to rank send_to[i] and receives
 * recv[i] from rank recv_from[i], both neighbours of it on the ring (TPURT_COMM_NONE: none, and
 * that tensor may be NULL, not both of a rank's); any dtype, the receiver's tensor as large as
 * what is sent. */
#define TPURT_COMM_NONE 0xffffffffu
int tpurt_comm_all_to_all(tpurt_comm *comm, tpurt_stream *const *streams,
                          tpurt_tensor *const *send, tpurt_tensor *const *recv);
int tpurt_comm_send_recv(tpurt_comm *comm, tpurt_stream *const *streams,
                         tpurt_tensor *const *send, tpurt_tensor *const *recv,
                         const uint32_t *send_to, const uint32_t *recv_from);

/* In-process cards on one fabric (host builds, tpurt_engine): dim_x x dim_y cards (torus 0: a
 * ring of dim_x), each as tpurt_open_in_process(config); devices[i] at x = i % dim_x,
 * y = i / dim_x. out holds count = dim_x x dim_y entries. */
struct tpurt_fabric_config {
    uint32_t struct_size; /* in: sizeof(struct tpurt_fabric_config) */
    uint32_t torus;
    uint32_t dim_x;
    uint32_t dim_y;
    uint32_t link_gbps; /* 0: 400 */
    uint32_t hop_ns;
    uint32_t credits; /* 0: 256 */
    /* A torus's y links (spec 2.4), e.g. slower links between servers; 0: as the x links.
     * Absent from callers built before them (struct_size). */
    uint32_t y_link_gbps;
    uint32_t y_hop_ns;
};
int tpurt_open_in_process_fabric(const struct tpurt_fabric_config *fabric,
                                 const struct tpurt_in_process_config *config,
                                 tpurt_device **out, uint32_t count);
/* Takes the link on `port` of an in-process card on a fabric down (up = 0) or up. */
int tpurt_in_process_set_link(tpurt_device *dev, uint32_t port, int up);

#ifdef __cplusplus
}
#endif

#endif /* TPURT_H */
