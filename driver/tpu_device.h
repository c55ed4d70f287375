/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Card identification, global reset, start/stop and interrupts; a wedged card and the memory
 * kept (quarantined) while the card may still reach it.
 */
#ifndef TPU_DEVICE_H
#define TPU_DEVICE_H

#include <linux/types.h>

struct tpu_deferred;
struct tpu_device;

int tpu_device_identify(struct tpu_device *tdev);
int tpu_device_reset(struct tpu_device *tdev);
u64 tpu_device_counter(struct tpu_device *tdev, u32 reg);
void tpu_device_counters(struct tpu_device *tdev, u64 *values);
void tpu_device_start(struct tpu_device *tdev);
void tpu_device_stop(struct tpu_device *tdev);
void tpu_device_wedge(struct tpu_device *tdev, const char *why);
bool tpu_device_wedged(struct tpu_device *tdev);
bool tpu_device_quarantine(struct tpu_device *tdev, struct tpu_deferred *deferred);
void tpu_device_release_quarantine(struct tpu_device *tdev);
unsigned int tpu_device_quarantined(struct tpu_device *tdev);
int tpu_irq_init(struct tpu_device *tdev);
void tpu_irq_fini(struct tpu_device *tdev);

#endif /* TPU_DEVICE_H */
