// SPDX-License-Identifier: MIT
// card_recovery.cpp - which errors are the card's failures, and the trainer's count of them.
#include "card_recovery.hpp"

#include <drm/tpu_accel.h>
#include <tpu_hw.h>
#include <tpurt/error.hpp>

#include <cerrno>
#include <cstdio>

namespace tpu_train {

bool is_card_failure(const std::exception &e) {
    if (const auto *job = dynamic_cast<const tpurt::JobError *>(&e)) {
        const std::uint32_t s = job->status();
        return s == DRM_TPU_JOB_TIMEOUT || s == DRM_TPU_JOB_CANCELED || s == TPU_ERR_ABORTED;
    }
    if (const auto *err = dynamic_cast<const tpurt::Error *>(&e))
        return err->code() == tpurt::ErrorCode::SystemCall && err->sys_errno() == ECANCELED;
    return false;
}

bool RecoveryBudget::failed(const std::exception &e, const RunPosition &failed_at,
                            const RunPosition &back_to) {
    if (!is_card_failure(e) || ++in_a_row_ > max_in_a_row_)
        return false;
    ++recovered_;
    std::printf("\ncard failure in epoch %zu at step %llu (%s): replaying from step %llu (epoch "
                "%zu, batch %zu) on the device opened again\n",
                failed_at.epoch + 1, static_cast<unsigned long long>(failed_at.step), e.what(),
                static_cast<unsigned long long>(back_to.step), back_to.epoch + 1, back_to.batch);
    std::fflush(stdout);
    return true;
}

} // namespace tpu_train
