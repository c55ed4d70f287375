// SPDX-License-Identifier: MIT
// test_streams.cpp - guest test of tpurt::Stream and tpurt::Event on the card: streams that
// overlap, ordered through events only (no synchronize), with exact results; a stream waiting
// for another's event while the host goes on; host waits that time out (the busy job held on the
// card by its test-only hold, QEMU's x-test-hold, however fast the host); a failing job reported
// at the next synchronize with its op's name; operands released by the caller while their op
// is queued; per-op profile records of queued ops; threads sharing one device with streams.
#include "guest_programs.hpp"
#include "runtime_helpers.hpp"
#include "uapi_helpers.hpp"

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <tpu_hw.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::Tensor;

// A launch of one program without operands, named `name`.
tpurt::OpLaunch program_launch(const std::string &name, tpurt::Program program) {
    std::vector<tpurt::Program> programs;
    programs.push_back(std::move(program));
    return {.executable = std::make_shared<const tpurt::Executable>(
                tpurt::Executable::link(name, {}, std::move(programs))),
            .bases = {},
            .buffers = {}};
}

std::vector<std::int32_t> iota_values(std::size_t n, std::int32_t from) {
    std::vector<std::int32_t> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = from + static_cast<std::int32_t>(i);
    return v;
}

} // namespace

TEST_CASE("overlapping streams ordered by events give exact results", "[streams]") {
    tpurt::Device &dev = guest_test::device();
    constexpr std::uint32_t M = 64, K = 96, N = 80;
    const auto a = tpurt::random_bf16(M * K, 1), b = tpurt::random_bf16(K * N, 2);
    std::vector<float> product(M * N);
    tpurt::reference_matmul(a, b, product, M, K, N);

    tpurt::Stream s0(dev), s1(dev), s2(dev);
    // s0: copy the operands in, multiply.
    Tensor ta = Tensor::empty(dev, DType::Bf16, {M, K}),
           tb = Tensor::empty(dev, DType::Bf16, {K, N});
    Tensor tc = Tensor::empty(dev, DType::Fp32, {M, N});
    s0.copy_from_host(ta, a.data(), a.size() * 2);
    s0.copy_from_host(tb, b.data(), b.size() * 2);
    tpurt::matmul(s0, ta, tb, tc);
    const tpurt::Event product_done = s0.record();

    // s2 meanwhile: 40 dependent int32 additions, x <- x + step, ping-ponging two tensors.
    constexpr int steps = 40;
    const std::vector<std::int32_t> x0 = iota_values(4096, -2000), step = iota_values(4096, 7);
    Tensor x[2] = {Tensor::from_host<std::int32_t>(dev, x0, {64, 64}),
                   Tensor::empty(dev, DType::Int32, {64, 64})};
    const Tensor tstep = Tensor::from_host<std::int32_t>(dev, step, {64, 64});
    for (int i = 0; i < steps; ++i)
        tpurt::add(s2, x[i % 2], tstep, x[(i + 1) % 2]);
    const tpurt::Event sum_done = s2.record();

    // s1: waits for both on the card, then c + c and copies both results out.
    s1.wait(product_done);
    s1.wait(sum_done);
    Tensor twice = Tensor::empty(dev, DType::Fp32, {M, N});
    tpurt::add(s1, tc, tc, twice);
    std::vector<float> twice_out(M * N);
    std::vector<std::int32_t> sum_out(4096);
    s1.copy_to_host(twice, twice_out.data(), twice_out.size() * 4);
    s1.copy_to_host(x[steps % 2], sum_out.data(), sum_out.size() * 4);
    const tpurt::Event all_done = s1.record();
    all_done.wait();
    CHECK(all_done.query());
    CHECK(product_done.query());
    CHECK(sum_done.query());

    for (std::size_t i = 0; i < product.size(); ++i)
        REQUIRE(twice_out[i] == product[i] + product[i]);
    for (std::size_t i = 0; i < x0.size(); ++i)
        REQUIRE(sum_out[i] == x0[i] + steps * step[i]);
}

TEST_CASE("a stream waits for another's event on the card, the host goes on", "[streams]") {
    tpurt::Device &dev = guest_test::device();
    tpurt::Stream busy(dev), after(dev);
    uapi::CardHold hold(guest::kHangAt); // the busy job stays on the card until released
    busy.enqueue(program_launch("busy", guest::busy_program(40)));
    const tpurt::Event busy_done = busy.record();
    after.wait(busy_done); // returns at once
    const std::vector<std::int32_t> v = iota_values(1024, 5);
    const Tensor a = Tensor::from_host<std::int32_t>(dev, v, {1024});
    const Tensor out = Tensor::empty(dev, DType::Int32, {1024});
    tpurt::add(after, a, a, out);
    const tpurt::Event after_done = after.record();
    // `after`'s work does not end before the event it waits for.
    REQUIRE(hold.wait_held());
    CHECK(!busy_done.query());
    CHECK(!after_done.query());
    hold.release();
    after_done.wait();
    CHECK(busy_done.query());
    const auto result = out.to_vector<std::int32_t>();
    for (std::size_t i = 0; i < v.size(); ++i)
        REQUIRE(result[i] == 2 * v[i]);
    // An event recorded on an empty stream has happened; so has a default one.
    tpurt::Stream empty(dev);
    CHECK(empty.record().query());
    CHECK(tpurt::Event().query());
    empty.wait(empty.record());
    empty.synchronize();
}

TEST_CASE("host waits time out while the card is busy and succeed later", "[streams]") {
    tpurt::Device &dev = guest_test::device();
    tpurt::Stream stream(dev);
    uapi::CardHold hold(guest::kHangAt); // the busy job stays on the card until released
    stream.enqueue(program_launch("busy", guest::busy_program(40)));
    const tpurt::Event done = stream.record();
    REQUIRE(hold.wait_held());
    const auto timed_out = [](const std::function<void()> &wait) {
        try {
            wait();
        } catch (const tpurt::Error &error) {
            return error.code() == tpurt::ErrorCode::Timeout;
        }
        return false;
    };
    CHECK(timed_out([&] { stream.synchronize(std::chrono::nanoseconds(0)); }));
    CHECK(timed_out([&] { done.wait(std::chrono::microseconds(1)); }));
    CHECK(!stream.idle());
    hold.release();
    done.wait();
    CHECK(done.query());
    CHECK(stream.idle());
}

TEST_CASE("a failing job is reported at synchronize with its op's name", "[streams]") {
    tpurt::Device &dev = guest_test::device();
    tpurt::Stream stream(dev);
    tpurt::Program broken = guest::halt_program();
    broken.insns[0].hdr.opcode = 0x7f;
    const std::vector<std::int32_t> v = iota_values(256, 1);
    const Tensor a = Tensor::from_host<std::int32_t>(dev, v, {256});
    const Tensor out = Tensor::empty(dev, DType::Int32, {256});
    stream.enqueue(program_launch("broken op", broken));
    tpurt::add(stream, a, a, out); // queued behind it, still runs
    try {
        stream.synchronize();
        FAIL("no error reported");
    } catch (const tpurt::JobError &error) {
        CHECK(error.status() == TPU_ERR_BAD_OPCODE);
        CHECK(error.op() == "broken op");
        CHECK(std::string(error.what()).find("broken op") == 0);
    }
    stream.synchronize(); // reported once
    CHECK(out.to_vector<std::int32_t>()[255] == 512);

    // Operand errors are thrown when the op is queued.
    const Tensor wrong = Tensor::empty(dev, DType::Int32, {128});
    guest_test::require_refused([&] { tpurt::add(stream, a, wrong, out); }, "elementwise op");
}

TEST_CASE("queued ops keep their operands alive and are profiled when they end", "[streams]") {
    tpurt::Device &dev = guest_test::device();
    tpurt::profiler::clear();
    tpurt::profiler::start();
    tpurt::Stream stream(dev);
    const std::vector<std::int32_t> v = iota_values(8192, -100);
    Tensor out = Tensor::empty(dev, DType::Int32, {8192});
    for (int i = 0; i < 5; ++i) {
        const Tensor a = Tensor::from_host<std::int32_t>(dev, v, {8192});
        tpurt::add(stream, a, a, out); // `a` goes out of scope with the op queued
    }
    stream.synchronize();
    tpurt::profiler::stop();
    const auto result = out.to_vector<std::int32_t>();
    for (std::size_t i = 0; i < v.size(); ++i)
        REQUIRE(result[i] == 2 * v[i]);
    const tpurt::Profile profile = tpurt::profiler::snapshot();
    REQUIRE(profile.ops.size() == 5);
    for (const tpurt::OpRecord &op : profile.ops) {
        CHECK(op.jobs >= 1);
        CHECK(op.cycles > 0);
        CHECK(op.wall_us > 0);
    }
    tpurt::profiler::clear();
}

TEST_CASE("streams of every priority run in order; other priorities are refused", "[streams]") {
    tpurt::Device &dev = guest_test::device();
    const std::vector<float> a_values{1, 2, 3, 4}, b_values{10, 20, 30, 40};
    tpurt::Tensor a = tpurt::Tensor::from_host<float>(dev, a_values, {1, 4});
    tpurt::Tensor b = tpurt::Tensor::from_host<float>(dev, b_values, {1, 4});
    for (int priority = 0; priority <= 3; priority++) {
        tpurt::Stream stream(dev, tpurt::StreamOptions{.priority = priority});
        tpurt::Tensor out = tpurt::Tensor::empty(dev, tpurt::DType::Fp32, {1, 4});
        tpurt::add(stream, a, b, out);
        stream.synchronize();
        CHECK(out.to_vector<float>() == std::vector<float>{11, 22, 33, 44});
    }
    for (int priority : {-1, 4})
        CHECK_THROWS_AS(tpurt::Stream(dev, tpurt::StreamOptions{.priority = priority}),
                        tpurt::Error);
}

TEST_CASE("threads share one device, each with its own stream and one shared", "[streams]") {
    tpurt::Device &dev = guest_test::device();
    constexpr int threads = 4, steps = 25;
    tpurt::Stream shared(dev);
    std::atomic<int> bad{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            try {
                tpurt::Stream own(dev);
                const std::vector<std::int32_t> x0 = iota_values(2048, t * 1000);
                const std::vector<std::int32_t> step = iota_values(2048, t + 1);
                Tensor x[2] = {Tensor::from_host<std::int32_t>(dev, x0, {2048}),
                               Tensor::empty(dev, DType::Int32, {2048})};
                const Tensor ts = Tensor::from_host<std::int32_t>(dev, step, {2048});
                for (int i = 0; i < steps; ++i)
                    tpurt::add(own, x[i % 2], ts, x[(i + 1) % 2]);
                // One op on the shared stream too, ordered after this thread's chain.
                Tensor doubled = Tensor::empty(dev, DType::Int32, {2048});
                shared.wait(own.record());
                tpurt::add(shared, x[steps % 2], x[steps % 2], doubled);
                const tpurt::Event done = shared.record();
                done.wait();
                const auto sum = x[steps % 2].to_vector<std::int32_t>();
                const auto twice = doubled.to_vector<std::int32_t>();
                for (std::size_t i = 0; i < x0.size(); ++i) {
                    bad += sum[i] != x0[i] + steps * step[i];
                    bad += twice[i] != 2 * sum[i];
                }
            } catch (const tpurt::Error &error) {
                UNSCOPED_INFO("thread " << t << ": " << error.what());
                bad += 1000;
            }
        });
    for (std::thread &thread : pool)
        thread.join();
    CHECK(bad == 0);
    shared.synchronize();
}
