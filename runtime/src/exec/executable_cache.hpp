// SPDX-License-Identifier: MIT
// executable_cache.hpp - internal: a device's compiled executables by key (the op, its dtypes,
// shape, strides, epilogue and the card's geometry, spelled out in a string), so an op of a
// shape seen before is launched without compiling. Holds at most max_entries; beyond that the
// oldest entry is dropped (executables in use stay alive through their shared_ptr).
#pragma once

#include "tpurt/device_info.hpp"
#include "tpurt/executable.hpp"
#include "tpurt/ops/conv2d.hpp"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace tpurt::detail {

// The parts of a key every op spells the same way: the card's geometry (" card 128x128 ub ...
// acc ...") and a convolution's shape ("NxHxWxC kKHxKW fF stride a,b pad c,d").
std::string limits_key(const ArrayLimits &l);
std::string conv_shape_key(const Conv2dShape &s);

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
