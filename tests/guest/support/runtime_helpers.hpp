// SPDX-License-Identifier: MIT
// runtime_helpers.hpp - what the guest tests of libtpurt share: the one device they all use
// (/dev/accel/accel0, opened on first use) and the check that a call is refused with a message.
#pragma once

#include <tpurt/device.hpp>

#include <functional>
#include <string>

namespace guest_test {

// The card every test case of a binary shares, opened once.
tpurt::Device &device();

// Checks that `call` throws tpurt::Error with ErrorCode::InvalidArgument and a message that
// contains `expected`.
void require_refused(const std::function<void()> &call, const std::string &expected);

} // namespace guest_test
