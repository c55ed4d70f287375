/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Queue 0's command ring: writing jobs, retiring completions, recovery after a reset.
 */
#ifndef TPU_RING_H
#define TPU_RING_H

struct tpu_device;
struct tpu_job;

int tpu_ring_init(struct tpu_device *tdev);
void tpu_ring_start(struct tpu_device *tdev);
void tpu_ring_push(struct tpu_device *tdev, struct tpu_job *job);
void tpu_ring_retire(struct tpu_device *tdev);
void tpu_ring_cancel(struct tpu_device *tdev, int error);
void tpu_ring_recover(struct tpu_device *tdev, struct tpu_job *hung, bool card_ok);

#endif /* TPU_RING_H */
