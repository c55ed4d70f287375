/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sysfs attributes of the card on its PCI device (the "tpu" directory).
 */
#ifndef TPU_SYSFS_H
#define TPU_SYSFS_H

#include <linux/sysfs.h>

extern const struct attribute_group *tpu_sysfs_groups[];

#endif /* TPU_SYSFS_H */
