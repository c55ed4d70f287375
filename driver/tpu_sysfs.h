/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sysfs attributes of the card on its PCI device (the "tpu" directory, and "ici" and
 * "ici_port<p>" on a fabric).
 */
#ifndef TPU_SYSFS_H
#define TPU_SYSFS_H

#include <linux/sysfs.h>

extern const struct attribute_group *tpu_sysfs_groups[];

/* tpu_sysfs_ici.c: the card's place on an inter-chip fabric (spec 2.0). */
extern const struct attribute_group tpu_ici_sysfs_group;
extern const struct attribute_group tpu_ici_port0_group;
extern const struct attribute_group tpu_ici_port1_group;
extern const struct attribute_group tpu_ici_port2_group;
extern const struct attribute_group tpu_ici_port3_group;

#endif /* TPU_SYSFS_H */
