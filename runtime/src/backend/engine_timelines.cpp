// SPDX-License-Identifier: MIT
// engine_timelines.cpp - the in-process card's timeline fences: a counter per timeline that
// advances over consecutive signalled points (a point signals after every earlier one, as a
// syncobj timeline's), points imported from other timelines, and waits on a condition
// variable.
#include "backend/engine_backend.hpp"

#include "tpurt/error.hpp"

#include <algorithm>
#include <chrono>
#include <climits>

namespace tpurt::detail {

namespace {

[[noreturn]] void no_timeline(std::uint32_t timeline) {
    throw Error(ErrorCode::InvalidArgument, "timeline " + std::to_string(timeline) +
                                                " of the in-process engine does not exist");
}

} // namespace

std::uint32_t EngineBackend::create_timeline() {
    std::lock_guard lock(mutex_);
    const std::uint32_t timeline = next_timeline_++;
    timelines_[timeline] = {};
    return timeline;
}

void EngineBackend::destroy_timeline(std::uint32_t timeline) noexcept {
    std::lock_guard lock(mutex_);
    timelines_.erase(timeline);
    std::erase_if(imports_, [&](const Import &import) {
        return import.from.timeline == timeline || import.to.timeline == timeline;
    });
}

bool EngineBackend::reached(const TimelinePoint &point) const {
    const auto it = timelines_.find(point.timeline);
    if (it == timelines_.end())
        no_timeline(point.timeline);
    return it->second.value >= point.point;
}

std::uint64_t EngineBackend::timeline_value(std::uint32_t timeline) const {
    std::lock_guard lock(mutex_);
    const auto it = timelines_.find(timeline);
    if (it == timelines_.end())
        no_timeline(timeline);
    return it->second.value;
}

bool EngineBackend::wait_timeline(std::uint32_t timeline, std::uint64_t point,
                                  std::int64_t deadline_ns) const {
    std::unique_lock lock(mutex_);
    const auto done = [&] { return reached({timeline, point}); };
    if (deadline_ns == INT64_MAX) {
        signalled_.wait(lock, done);
        return true;
    }
    // steady_clock is CLOCK_MONOTONIC, the deadline's clock.
    const std::chrono::steady_clock::time_point deadline{std::chrono::nanoseconds(deadline_ns)};
    return signalled_.wait_until(lock, deadline, done);
}

void EngineBackend::signal_locked(std::uint32_t timeline, std::uint64_t point) {
    const auto it = timelines_.find(timeline);
    if (it == timelines_.end())
        no_timeline(timeline);
    Timeline &t = it->second;
    if (point <= t.value)
        return;
    t.ahead.insert(point);
    while (!t.ahead.empty() && *t.ahead.begin() == t.value + 1) {
        t.value++;
        t.ahead.erase(t.ahead.begin());
    }
    signalled_.notify_all();
    // Imported points whose source has now signalled signal in turn.
    for (;;) {
        const auto ready = std::find_if(imports_.begin(), imports_.end(),
                                        [&](const Import &import) { return reached(import.from); });
        if (ready == imports_.end())
            return;
        const TimelinePoint to = ready->to;
        imports_.erase(ready);
        signal_locked(to.timeline, to.point);
    }
}

void EngineBackend::signal_timeline(std::uint32_t timeline, std::uint64_t point) {
    std::lock_guard lock(mutex_);
    signal_locked(timeline, point);
}

void EngineBackend::import_point(std::uint32_t timeline, std::uint64_t point,
                                 const TimelinePoint &from) {
    std::lock_guard lock(mutex_);
    if (!timelines_.contains(timeline))
        no_timeline(timeline);
    if (reached(from))
        signal_locked(timeline, point);
    else
        imports_.push_back({from, {timeline, point}});
}

} // namespace tpurt::detail
