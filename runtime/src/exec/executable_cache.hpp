// SPDX-License-Identifier: MIT
// executable_cache.hpp - internal: a device's compiled executables by key (the kernel's name,
// its problem's fields and the card's geometry: cache_key()), so an op of a
// shape seen before is launched without compiling. Holds at most max_entries; beyond that the
// oldest entry is dropped (executables in use stay alive through their shared_ptr).
#pragma once

#include "tpurt/codegen/problem_key.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/executable.hpp"
#include "tpurt/ops/conv2d.hpp"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace tpurt::detail {

// The key of an executable: its kernel's name, every field of its problem (an aggregate,
// problem_key.hpp) and the card's limits, so no field can be left out.
template <class Problem>
std::string cache_key(std::string_view name, const Problem &problem, const ArrayLimits &limits) {
    return std::string(name) + key::of(problem) + key::of(limits);
}

// The card's geometry (" card 128x128 ub ... acc ...") and a convolution's shape ("NxHxWxC
// kKHxKW fF stride a,b pad c,d") as text, in the convolution gradients' profile names.
std::string limits_text(const ArrayLimits &l);
std::string conv_shape_text(const Conv2dShape &s);

class ExecutableCache {
  public:
    static constexpr std::size_t max_entries = 1024;

    // The executable cached under `key`, or compile() cached under it. Compilations run one at
    // a time, so each key is compiled once however many threads ask for it.
    std::shared_ptr<const Executable> get(const std::string &key,
                                          const std::function<Executable()> &compile);
    std::size_t size() const;
    std::uint64_t compilations() const;

  private:
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<const Executable>> entries_;
    std::deque<std::string> order_; // oldest first
    std::uint64_t compilations_ = 0;
};

} // namespace tpurt::detail
