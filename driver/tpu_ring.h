/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command rings of the card's queues: writing jobs, retiring completions, queue reset and
 * recovery after a reset.
 */
#ifndef TPU_RING_H
#define TPU_RING_H

#include <linux/types.h>

struct tpu_device;
struct tpu_job;
struct tpu_ring;

int tpu_ring_init(struct tpu_device *tdev);
void tpu_ring_start(struct tpu_ring *ring);
void tpu_ring_push(struct tpu_ring *ring, struct tpu_job *job);
void tpu_ring_retire(struct tpu_ring *ring);
void tpu_ring_cancel(struct tpu_device *tdev, int error);
int tpu_ring_reset(struct tpu_ring *ring);
int tpu_ring_enable(struct tpu_ring *ring);
void tpu_ring_recover(struct tpu_ring *ring, struct tpu_job *hung, u64 cancel_seqno,
		      bool cancel_oldest, bool card_ok);

#endif /* TPU_RING_H */
