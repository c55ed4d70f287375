/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debugfs files of the device.
 */
#ifndef TPU_DEBUGFS_H
#define TPU_DEBUGFS_H

struct tpu_device;

void tpu_debugfs_init(struct tpu_device *tdev);

#endif /* TPU_DEBUGFS_H */
