/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debugfs files of the device, and the test hooks (holds, failure injection) some of them arm.
 */
#ifndef TPU_DEBUGFS_H
#define TPU_DEBUGFS_H

#include <linux/types.h>

#include "tpu_drv.h"

void tpu_debugfs_init(struct tpu_device *tdev);

#ifdef TPU_TEST_HOOKS
void tpu_hold_until(struct tpu_device *tdev, enum tpu_hold_point point,
		    bool (*released)(void *arg), void *arg);
bool tpu_inject(struct tpu_device *tdev, enum tpu_inject_point point);
void tpu_inject_delay(struct tpu_device *tdev, enum tpu_inject_point point);
#else
static inline void tpu_hold_until(struct tpu_device *tdev, enum tpu_hold_point point,
				  bool (*released)(void *arg), void *arg)
{
}

static inline bool tpu_inject(struct tpu_device *tdev, enum tpu_inject_point point)
{
	return false;
}

static inline void tpu_inject_delay(struct tpu_device *tdev, enum tpu_inject_point point)
{
}
#endif

/* Hold at @point, if its hook is armed, until the device is unplugged. */
static inline void tpu_hold(struct tpu_device *tdev, enum tpu_hold_point point)
{
	tpu_hold_until(tdev, point, NULL, NULL);
}

#endif /* TPU_DEBUGFS_H */
