// SPDX-License-Identifier: MIT
// runtime_helpers.cpp - the shared device and the refusal check of the guest runtime tests.
#include "runtime_helpers.hpp"

#include <tpurt/error.hpp>

#include <catch2/catch.hpp>

namespace guest_test {

tpurt::Device &device() {
    static tpurt::Device dev = tpurt::Device::open(0);
    return dev;
}

void require_refused(const std::function<void()> &call, const std::string &expected) {
    try {
        call();
        FAIL("accepted; expected a refusal mentioning \"" + expected + "\"");
    } catch (const tpurt::Error &error) {
        INFO(error.what());
        CHECK(error.code() == tpurt::ErrorCode::InvalidArgument);
        CHECK(std::string(error.what()).find(expected) != std::string::npos);
    }
}

} // namespace guest_test
