// SPDX-License-Identifier: MIT
// The dependency and unit scheduling of the cycle model.
#include "executor/timeline.hpp"

#include <algorithm>

namespace tpu::engine {

bool Timeline::conflict(const Step &a, const Step &b) {
    for (unsigned i = 0; i < a.span_count; i++) {
        const Span &x = a.spans[i];
        for (unsigned j = 0; j < b.span_count; j++) {
            const Span &y = b.spans[j];
            if (x.space == y.space && (x.write || y.write) && x.begin < y.end && y.begin < x.end)
                return true;
        }
    }
    return false;
}

uint64_t Timeline::start_of(const Step &step) const {
    uint64_t start = next_issue_;
    if (step.barrier)
        start = std::max(start, end_);
    for (unsigned u = 0; u < kUnits; u++)
        if (step.units & (1u << u))
            start = std::max(start, unit_free_[u]);
    for (const InFlight &f : in_flight_)
        if (conflict(step, f.step))
            start = std::max(start, f.finish);
    return start;
}

uint64_t Timeline::schedule(const Step &step) {
    const uint64_t start = start_of(step);
    const uint64_t finish = start + step.cost;
    stall_ += start - next_issue_;
    for (unsigned u = 0; u < kUnits; u++)
        if (step.units & (1u << u))
            unit_free_[u] = finish;
    end_ = std::max(end_, finish);
    next_issue_ = start + 1;

    // Whatever finishes by the next issue cycle can no longer delay anything.
    std::erase_if(in_flight_, [&](const InFlight &f) { return f.finish <= next_issue_; });
    if (finish > next_issue_)
        in_flight_.push_back(InFlight{step, finish});
    return start;
}

} // namespace tpu::engine
