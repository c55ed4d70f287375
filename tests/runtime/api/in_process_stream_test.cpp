// SPDX-License-Identifier: MIT
// in_process_stream_test.cpp - tpurt::Stream and tpurt::Event on the in-process card: streams
// ordered by events with host copies and exact results, a failing job reported once at the
// next synchronize with its op's name (the work queued behind it still runs), operands kept
// alive while queued and queued ops profiled with the card's cycles, the priorities, threads
// sharing one device (one job at a time on its engine).
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <tpu_hw.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::Tensor;

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

TEST_CASE("in process: streams ordered by events give exact results", "[in-process][stream]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    constexpr std::uint32_t M = 64, K = 96, N = 80;
    const auto a = tpurt::random_bf16(M * K, 1), b = tpurt::random_bf16(K * N, 2);
    std::vector<float> product(M * N);
    tpurt::reference_matmul(a, b, product, M, K, N);

    tpurt::Stream s0(dev), s1(dev), s2(dev);
    Tensor ta = Tensor::empty(dev, DType::Bf16, {M, K}),
           tb = Tensor::empty(dev, DType::Bf16, {K, N});
    Tensor tc = Tensor::empty(dev, DType::Fp32, {M, N});
    s0.copy_from_host(ta, a.data(), a.size() * 2);
    s0.copy_from_host(tb, b.data(), b.size() * 2);
    tpurt::matmul(s0, ta, tb, tc);
    const tpurt::Event product_done = s0.record();

    constexpr int steps = 40;
    const std::vector<std::int32_t> x0 = iota_values(4096, -2000), step = iota_values(4096, 7);
    Tensor x[2] = {Tensor::from_host<std::int32_t>(dev, x0, {64, 64}),
                   Tensor::empty(dev, DType::Int32, {64, 64})};
    const Tensor tstep = Tensor::from_host<std::int32_t>(dev, step, {64, 64});
    for (int i = 0; i < steps; ++i)
        tpurt::add(s2, x[i % 2], tstep, x[(i + 1) % 2]);
    const tpurt::Event sum_done = s2.record();

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
    CHECK(s0.idle());
    CHECK(s1.idle());
}

TEST_CASE("in process: a failing job is reported at synchronize with its op's name",
          "[in-process][stream][faults]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    tpurt::Stream stream(dev);
    tpurt::Program broken = tpurt::ProgramBuilder().nop().halt().finish();
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
        CHECK(error.error_pc() == 0);
        CHECK(error.op() == "broken op");
    }
    stream.synchronize(); // reported once
    CHECK(out.to_vector<std::int32_t>()[255] == 512);
}

TEST_CASE("in process: queued ops keep their operands and are profiled with the card's cycles",
          "[in-process][stream]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
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
        CHECK(op.device == 0);
    }
    tpurt::profiler::clear();
}

TEST_CASE("in process: streams of every priority run and other priorities are refused",
          "[in-process][stream]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    const std::vector<float> a_values{1, 2, 3, 4}, b_values{10, 20, 30, 40};
    const Tensor a = Tensor::from_host<float>(dev, a_values, {1, 4});
    const Tensor b = Tensor::from_host<float>(dev, b_values, {1, 4});
    for (int priority = 0; priority <= 3; priority++) {
        tpurt::Stream stream(dev, tpurt::StreamOptions{.priority = priority});
        Tensor out = Tensor::empty(dev, DType::Fp32, {1, 4});
        tpurt::add(stream, a, b, out);
        stream.synchronize();
        CHECK(out.to_vector<float>() == std::vector<float>{11, 22, 33, 44});
    }
    for (int priority : {-1, 4})
        CHECK_THROWS_AS(tpurt::Stream(dev, tpurt::StreamOptions{.priority = priority}),
                        tpurt::Error);
    // Events of one device's streams only.
    tpurt::Device other = tpurt::Device::open_in_process();
    tpurt::Stream mine(dev), theirs(other);
    tpurt::add(theirs, Tensor::from_host<float>(other, a_values, {1, 4}),
               Tensor::from_host<float>(other, b_values, {1, 4}),
               Tensor::empty(other, DType::Fp32, {1, 4}));
    CHECK_THROWS_AS(mine.wait(theirs.record()), tpurt::Error);
}

TEST_CASE("in process: threads share one device, each with its own stream and one shared",
          "[in-process][stream][threads]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    constexpr int threads = 4, steps = 25;
    constexpr std::uint32_t M = 96, K = 200, N = 72;
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
                Tensor doubled = Tensor::empty(dev, DType::Int32, {2048});
                shared.wait(own.record());
                tpurt::add(shared, x[steps % 2], x[steps % 2], doubled);
                shared.record().wait();
                const auto sum = x[steps % 2].to_vector<std::int32_t>();
                const auto twice = doubled.to_vector<std::int32_t>();
                for (std::size_t i = 0; i < x0.size(); ++i) {
                    bad += sum[i] != x0[i] + steps * step[i];
                    bad += twice[i] != 2 * sum[i];
                }
                // Blocking matmuls too, each thread its own operands.
                const auto a = tpurt::random_int8(M * K, 10 + t),
                           b = tpurt::random_int8(K * N, 20 + t);
                std::vector<std::int32_t> want(M * N), got(M * N);
                tpurt::reference_matmul(a, b, want, M, K, N);
                for (int i = 0; i < 5; ++i) {
                    tpurt::matmul(dev, a, b, got, M, K, N);
                    bad += got != want;
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
