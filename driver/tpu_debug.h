/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debug messages by category: the "debug" module parameter is a bitmask of TPU_DBG_*
 * (e.g. debug=0x3 for IOCTL and JOB); a message of a category whose bit is set goes to the
 * kernel log at KERN_DEBUG, prefixed with the category.
 */
#ifndef TPU_DEBUG_H
#define TPU_DEBUG_H

#include <drm/drm_device.h>
#include <drm/drm_print.h>
#include <linux/bits.h>

#define TPU_DBG_IOCTL	BIT(0)	/* ioctl arguments refused */
#define TPU_DBG_JOB	BIT(1)	/* job submission and waiting */
#define TPU_DBG_MEM	BIT(2)	/* buffer objects, device address spaces, pinned memory */
#define TPU_DBG_SYNC	BIT(3)	/* syncobjs and fences of SUBMIT */
#define TPU_DBG_IRQ	BIT(4)	/* errors the card reports by interrupt */
#define TPU_DBG_LIMITS	BIT(5)	/* refusals by the per-user, per-file and per-device limits */

extern unsigned int tpu_debug_mask;

#define tpu_dbg(drm, cat, fmt, ...)							\
	do {										\
		if (unlikely(tpu_debug_mask & TPU_DBG_##cat))				\
			drm_dev_printk((drm)->dev, KERN_DEBUG, "[" #cat "] " fmt,	\
				       ##__VA_ARGS__);					\
	} while (0)

#endif /* TPU_DEBUG_H */
