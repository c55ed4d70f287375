// SPDX-License-Identifier: MIT
// card_recovery.cpp - the trainer's count of the card failures it recovered from.
#include "card_recovery.hpp"

#include <tpurt/error.hpp>

#include <cstdio>

namespace tpu_train {

bool RecoveryBudget::failed(const std::exception &e, const RunPosition &failed_at,
                            const RunPosition &back_to) {
    if (!tpurt::is_retryable(e) || ++in_a_row_ > max_in_a_row_)
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
