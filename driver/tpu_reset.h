/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hung jobs and resets: the schedulers' timeout handler, queue and card reset.
 */
#ifndef TPU_RESET_H
#define TPU_RESET_H

#include <drm/gpu_scheduler.h>

struct tpu_device;
struct tpu_job;

enum drm_gpu_sched_stat tpu_reset_timedout(struct drm_sched_job *sched_job);
int tpu_job_reset(struct tpu_device *tdev);
void tpu_job_count_hang(struct tpu_job *hung);

#endif /* TPU_RESET_H */
