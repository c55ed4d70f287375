// SPDX-License-Identifier: MIT
// report_test.cpp - the progress line (on a terminal and in a log, with a fake clock) and the
// learning-curve CSV.
#include <tpu_report/curve_log.hpp>
#include <tpu_report/progress.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace {

std::size_t count(const std::string &s, const std::string &what) {
    std::size_t n = 0;
    for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
        ++n;
    return n;
}

} // namespace

TEST_CASE("durations read as m:ss or h:mm:ss") {
    CHECK(tpu_report::format_duration(0) == "0:00");
    CHECK(tpu_report::format_duration(61.4) == "1:01");
    CHECK(tpu_report::format_duration(3725) == "1:02:05");
}

TEST_CASE("in a log, the progress line is written at every tenth, then once at the end") {
    double now = 100.0;
    std::ostringstream out;
    tpu_report::Progress p("epoch 1/2", 1000, out, false, [&] { return now; });
    for (std::size_t done = 10; done <= 1000; done += 10) {
        now += 0.01; // 1,000 samples per second
        p.update(done, 0.5, 0.75);
    }
    p.finish(0.25, 0.875);
    const std::string s = out.str();
    CHECK(count(s, "\n") == 10); // 10%..90% and the final line
    CHECK(count(s, "\r") == 0);
    CHECK(s.find("epoch 1/2 [##.....") == 0);
    CHECK(s.find(" 50% loss 0.5000 acc  75.0%     1000 samples/s ETA 0:01") != std::string::npos);
    CHECK(s.find("100% loss 0.2500 acc  87.5%     1000 samples/s in 0:01\n") != std::string::npos);
}

TEST_CASE("on a terminal, the progress line redraws in place at most ten times a second") {
    double now = 0.0;
    std::ostringstream out;
    tpu_report::Progress p("eval", 100, out, true, [&] { return now; });
    for (std::size_t done = 1; done <= 100; ++done) {
        now += 0.01;
        p.update(done, 1.0, 0.5);
    }
    p.finish(1.0, 0.5);
    const std::string s = out.str();
    CHECK(count(s, "\r") == 11); // one draw per 0.1 s over 1 s, and the final one
    CHECK(count(s, "\n") == 1);
    CHECK(s.back() == '\n');
}

TEST_CASE("learning curves: a header, one row per epoch, appended on resume") {
    char templ[] = "/tmp/tpu-curves-XXXXXX";
    const int fd = mkstemp(templ);
    REQUIRE(fd >= 0);
    close(fd);
    {
        tpu_report::CurveLog log(templ);
        log.add({1, 0.9, 0.7, 0.8, 0.72, 10.0, 6000});
    }
    {
        tpu_report::CurveLog log(templ, true);
        log.add({2, 0.5, 0.8, 0.6, 0.81, 20.0, 6000});
    }
    std::ifstream in(templ);
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str() ==
          "epoch,train_loss,train_accuracy,test_loss,test_accuracy,seconds,samples_per_second\n"
          "1,0.9,0.7,0.8,0.72,10,6000\n2,0.5,0.8,0.6,0.81,20,6000\n");
    std::remove(templ);
    CHECK_THROWS_WITH(tpu_report::CurveLog("/nonexistent-dir/curves.csv"),
                      Catch::StartsWith("/nonexistent-dir/curves.csv: cannot write"));
}
