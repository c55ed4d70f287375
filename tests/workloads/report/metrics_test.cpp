// SPDX-License-Identifier: MIT
// metrics_test.cpp - confusion matrix and per-class metrics on a hand-worked example.
#include <tpu_eval/metrics.hpp>

#include <catch2/catch.hpp>

#include <sstream>

TEST_CASE("precision, recall and F1 from a hand-worked confusion matrix") {
    // truth a: 3 predicted a, 1 predicted b; truth b: 2 b; truth c: 1 a, 1 b, 2 c
    tpu_eval::ConfusionMatrix m({"a", "b", "c"});
    for (auto [t, p] : std::vector<std::pair<int, int>>{
             {0, 0}, {0, 0}, {0, 0}, {0, 1}, {1, 1}, {1, 1}, {2, 0}, {2, 1}, {2, 2}, {2, 2}})
        m.add(std::uint8_t(t), std::uint8_t(p));
    CHECK(m.total() == 10);
    CHECK(m.accuracy() == Approx(0.7));
    // a: TP 3, predicted a 4, truly a 4
    CHECK(m.metrics(0).precision == Approx(0.75));
    CHECK(m.metrics(0).recall == Approx(0.75));
    // b: TP 2, predicted b 4, truly b 2 -> P 0.5, R 1, F1 2/3
    CHECK(m.metrics(1).precision == Approx(0.5));
    CHECK(m.metrics(1).recall == Approx(1.0));
    CHECK(m.metrics(1).f1 == Approx(2.0 / 3.0));
    // c: TP 2, predicted c 2, truly c 4 -> P 1, R 0.5
    CHECK(m.metrics(2).precision == Approx(1.0));
    CHECK(m.metrics(2).recall == Approx(0.5));
    CHECK(m.metrics(2).support == 4);
    CHECK(m.macro_average().recall == Approx((0.75 + 1.0 + 0.5) / 3));
    std::ostringstream out;
    m.print(out);
    CHECK(out.str().find("accuracy 0.7000 (10 samples)") != std::string::npos);
    CHECK_THROWS_AS(m.add(3, 0), std::out_of_range);
}

TEST_CASE("predictions from logits take the largest score") {
    tpu_eval::ConfusionMatrix m({"x", "y"});
    const float logits[] = {0.1f, 2.0f, 3.0f, -1.0f};
    const std::uint8_t truth[] = {1, 1};
    m.add_logits(logits, truth, 2);
    CHECK(m.count(1, 1) == 1);
    CHECK(m.count(1, 0) == 1);
    CHECK(m.metrics(0).precision == 0.0); // nothing of class x was right
}
