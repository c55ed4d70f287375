// SPDX-License-Identifier: MIT
// lr_schedule_test.cpp - the trainers' learning-rate schedules: constant stays, cosine starts at
// the base rate, halves at mid-run, falls monotonically to near zero at the last step, holds past
// the end; bad names and empty runs are refused.
#include <tpu_model/lr_schedule.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>

using tpu_model::LrSchedule;
using tpu_model::LrScheduleKind;

TEST_CASE("lr schedule: constant is the base rate at every step", "[workloads]") {
    const LrSchedule s(LrScheduleKind::Constant, 0.01f, 100);
    CHECK(s.at(0) == 0.01f);
    CHECK(s.at(99) == 0.01f);
    CHECK(s.at(1000) == 0.01f);
}

TEST_CASE("lr schedule: cosine decays from the base to near zero", "[workloads]") {
    const LrSchedule s(LrScheduleKind::Cosine, 0.002f, 1000);
    CHECK(s.at(0) == 0.002f);
    CHECK(s.at(500) == Approx(0.001f).epsilon(1e-6));
    float last = s.at(0);
    for (std::uint64_t t = 1; t < 1000; ++t) {
        const float lr = s.at(t);
        REQUIRE(lr <= last);
        REQUIRE(lr > 0.0f);
        last = lr;
    }
    CHECK(s.at(999) < 0.002f * 1e-4f);
    CHECK(s.at(5000) == s.at(999));
}

TEST_CASE("lr schedule: names and sizes are checked", "[workloads]") {
    CHECK(tpu_model::parse_lr_schedule("cosine") == LrScheduleKind::Cosine);
    CHECK(tpu_model::parse_lr_schedule("constant") == LrScheduleKind::Constant);
    CHECK_THROWS_WITH(tpu_model::parse_lr_schedule("step"),
                      Catch::Contains("not one of constant, cosine"));
    CHECK_THROWS_AS(LrSchedule(LrScheduleKind::Cosine, 0.1f, 0), std::invalid_argument);
}
