// SPDX-License-Identifier: MIT
// executable_cache.cpp - compile once per key (see executable_cache.hpp).
#include "exec/executable_cache.hpp"

namespace tpurt::detail {

std::string limits_text(const ArrayLimits &l) {
    return " card " + std::to_string(l.mxu_rows) + "x" + std::to_string(l.mxu_cols) + " ub " +
           std::to_string(l.ub_bytes) + " acc " + std::to_string(l.acc_bytes);
}

std::string conv_shape_text(const Conv2dShape &s) {
    return std::to_string(s.batch) + "x" + std::to_string(s.height) + "x" +
           std::to_string(s.width) + "x" + std::to_string(s.channels) + " k" +
           std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + " f" +
           std::to_string(s.filters) + " stride " + std::to_string(s.stride_h) + "," +
           std::to_string(s.stride_w) + " pad " + std::to_string(s.pad_h) + "," +
           std::to_string(s.pad_w);
}

std::shared_ptr<const Executable> ExecutableCache::get(const std::string &key,
                                                       const std::function<Executable()> &compile) {
    // Compiled under the lock, so a key is compiled once even when threads miss it together.
    std::lock_guard lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end())
        return it->second;
    auto exe = std::make_shared<const Executable>(compile());
    ++compilations_;
    entries_.emplace(key, exe);
    order_.push_back(key);
    if (order_.size() > max_entries) {
        entries_.erase(order_.front());
        order_.pop_front();
    }
    return exe;
}

std::size_t ExecutableCache::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

std::uint64_t ExecutableCache::compilations() const {
    std::lock_guard lock(mutex_);
    return compilations_;
}

} // namespace tpurt::detail
