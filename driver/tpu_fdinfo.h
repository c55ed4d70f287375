/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-file usage statistics in /proc/<pid>/fdinfo/<fd> (drm-usage-stats).
 */
#ifndef TPU_FDINFO_H
#define TPU_FDINFO_H

struct drm_file;
struct drm_printer;
struct tpu_job;
struct tpu_job_result;

void tpu_fdinfo_job_end(struct tpu_job *job, const struct tpu_job_result *res);
void tpu_fdinfo_show(struct drm_printer *p, struct drm_file *file);

#endif /* TPU_FDINFO_H */
