/* SPDX-License-Identifier: MIT */
/*
 * tpurt.h - the runtime's C API, for C programs and foreign-function interfaces: open a card,
 * read its properties, run exact int8, bf16 and fp32 matmuls on host arrays. Every call returns
 * TPURT_OK (0) or a negative TPURT_E_* code; tpurt_last_error() then says what went wrong and
 * what to do about it.
 */
#ifndef TPURT_H
#define TPURT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tpurt_status {
    TPURT_OK = 0,
    TPURT_E_NO_DEVICE = -1,     /* no TPU device node */
    TPURT_E_DEVICE_ACCESS = -2, /* a node exists but cannot be opened */
    TPURT_E_SYSTEM = -3,        /* an ioctl or mmap failed */
    TPURT_E_INVALID = -4,       /* bad argument: null pointer, zero or oversized shape */
    TPURT_E_UNSUPPORTED = -5,   /* the card cannot run the request */
    TPURT_E_JOB_FAILED = -6,    /* the card ended a job with an error */
    TPURT_E_TIMEOUT = -7,       /* a job did not end in time */
    TPURT_E_NO_MEMORY = -8,
    TPURT_E_INTERNAL = -9,
};

typedef struct tpurt_device tpurt_device;

struct tpurt_device_info {
    char path[64];         /* e.g. /dev/accel/accel0 */
    char pci_slot[32];     /* e.g. 0000:00:03.0, empty if unknown */
    int32_t numa_node;     /* -1 if unknown */
    uint32_t spec_version; /* major << 16 | minor */
    uint32_t caps;         /* TPU_CAP_* */
    uint32_t clock_mhz;
    uint32_t mxu_rows;
    uint32_t mxu_cols;
    uint32_t ub_bytes;
    uint32_t acc_bytes;
};

/* Number of TPU cards (>= 0) or a negative TPURT_E_* code. */
int tpurt_device_count(void);
/* Opens the index-th card into *out; close it with tpurt_close(). */
int tpurt_open(unsigned index, tpurt_device **out);
void tpurt_close(tpurt_device *dev);
int tpurt_get_info(const tpurt_device *dev, struct tpurt_device_info *info);

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

#ifdef __cplusplus
}
#endif

#endif /* TPURT_H */
