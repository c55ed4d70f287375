// SPDX-License-Identifier: MIT
// device_test.cpp - on a machine without the card (the build host), opening a device fails
// with a message that says what to do, through the C++ and the C API alike.
#include <tpurt/device.hpp>
#include <tpurt/error.hpp>
#include <tpurt/tpurt.h>

#include <catch2/catch.hpp>

#include <string>

TEST_CASE("no card: Device::open explains how to get one", "[device]") {
    if (!tpurt::Device::list().empty()) {
        WARN("a TPU is present on this machine: nothing to check");
        return;
    }
    try {
        tpurt::Device::open(0);
        FAIL("Device::open succeeded without a card");
    } catch (const tpurt::Error &error) {
        CHECK(error.code() == tpurt::ErrorCode::NoDevice);
        const std::string message = error.what();
        CHECK(message.find("no TPU found") != std::string::npos);
        CHECK(message.find("tpu.ko") != std::string::npos);
    }
}

TEST_CASE("no card: the C API returns TPURT_E_NO_DEVICE and a message", "[device][c-api]") {
    if (tpurt_device_count() > 0) {
        WARN("a TPU is present on this machine: nothing to check");
        return;
    }
    CHECK(tpurt_device_count() == 0);
    tpurt_device *dev = nullptr;
    CHECK(tpurt_open(0, &dev) == TPURT_E_NO_DEVICE);
    CHECK(dev == nullptr);
    CHECK(std::string(tpurt_last_error()).find("no TPU found") != std::string::npos);
}
