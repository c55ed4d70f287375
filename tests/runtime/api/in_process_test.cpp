// SPDX-License-Identifier: MIT
// in_process_test.cpp - libtpurt's device, buffer, tensor, job and executable code run on the
// card's engine in the process (Device::open_in_process()): the card's properties from the
// engine's configuration, buffers the card reads and writes at their device addresses, a
// bf16 matmul and an fp32 convolution on tensors bit for bit against the golden models, an
// executable compiled once and relaunched on other buffers, the counters, and jobs the card
// ends with an MMU fault or a bad instruction reported as JobError with the driver's fields.
#include <tpurt/codegen/op_executables.hpp>
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/golden/reference.hpp>
#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <tpu_hw.h>

#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::Tensor;

// A program that copies `bytes` (a multiple of 64) from `from` to `to` through the UB.
tpurt::Program copy_program(std::uint64_t from, std::uint64_t to, std::uint32_t bytes) {
    const tpurt::DmaTransfer in{.type = DType::Int8,
                                .host_addr = from,
                                .host_stride = 64,
                                .local_addr = 0,
                                .local_stride = 64,
                                .rows = bytes / 64,
                                .cols = 64};
    tpurt::DmaTransfer out = in;
    out.host_addr = to;
    return tpurt::ProgramBuilder().dma_in(in).dma_out(out).halt().finish();
}

} // namespace

TEST_CASE("in process: the card's properties come from the engine's configuration",
          "[in-process][device]") {
    const tpurt::Device dev = tpurt::Device::open_in_process(
        {.mxu_rows = 64, .mxu_cols = 32, .ub_bytes = 1u << 20, .acc_bytes = 1u << 19});
    const tpurt::DeviceInfo &info = dev.info();
    CHECK(info.limits.mxu_rows == 64);
    CHECK(info.limits.mxu_cols == 32);
    CHECK(info.limits.ub_bytes == 1u << 20);
    CHECK(info.limits.acc_bytes == 1u << 19);
    CHECK(info.clock_mhz == 700);
    CHECK(info.spec_version == TPU_SPEC_VERSION);
    CHECK(info.device_id == TPU_PCI_DEVICE_ID);
    CHECK(info.supports(DType::Int8));
    CHECK(info.supports(DType::Bf16));
    CHECK(info.supports(DType::Fp32));
    CHECK(info.has_vector_unit());
    CHECK((info.caps & TPU_CAP_VPU_TRAIN) != 0);
    CHECK(dev.fd() == -1);

    try {
        tpurt::Device::open_in_process({.mxu_rows = 0});
        FAIL("an engine without an array was created");
    } catch (const tpurt::Error &error) {
        CHECK(error.code() == tpurt::ErrorCode::InvalidArgument);
        CHECK(std::string(error.what()).find("in-process engine") == 0);
    }
}

TEST_CASE("in process: jobs read and write buffers at their device addresses",
          "[in-process][device]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    std::vector<std::uint8_t> bytes(3 * 4096);
    for (std::size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
    const tpurt::Buffer from = dev.allocate_copy(bytes.data(), bytes.size());
    tpurt::Buffer to = dev.allocate(bytes.size());
    CHECK(from.size() == bytes.size());
    CHECK(from.device_addr() >= dev.info().va_start);
    CHECK(to.device_addr() >= from.device_addr() + from.size());
    CHECK(to.as<std::uint8_t>()[0] == 0); // fresh buffers are zeroed
    const std::array<const tpurt::Buffer *, 2> buffers{&from, &to};
    const tpurt::DeviceCounters before = dev.counters();
    tpurt::Job job = dev.submit(copy_program(from.device_addr(), to.device_addr(),
                                             static_cast<std::uint32_t>(bytes.size())),
                                buffers);
    const tpurt::JobStats stats = job.wait();
    CHECK(stats.cycles > 0);
    CHECK(std::memcmp(to.data(), bytes.data(), bytes.size()) == 0);
    const tpurt::DeviceCounters after = dev.counters();
    CHECK(after.jobs_done == before.jobs_done + 1);
    CHECK(after.cycles == before.cycles + stats.cycles);
    // A job is waited for once, as the driver keeps its record once.
    CHECK_THROWS_AS(job.wait(), tpurt::Error);
}

TEST_CASE("in process: a faulting job and a bad instruction end with the card's status",
          "[in-process][faults]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    const tpurt::Buffer buf = dev.allocate(4096);
    const std::array<const tpurt::Buffer *, 1> buffers{&buf};
    const std::uint64_t failed = dev.counters().jobs_failed;

    // Into the unmapped page after the buffer, at instruction 0 (DMA_IN).
    const std::uint64_t beyond = buf.device_addr() + buf.size();
    try {
        dev.submit(copy_program(beyond - 64, buf.device_addr(), 128), buffers).wait();
        FAIL("a DMA beyond the buffer did not fault");
    } catch (const tpurt::JobError &error) {
        CHECK(error.status() == TPU_ERR_MMU_FAULT);
        CHECK(error.fault_addr() == beyond);
        CHECK(error.error_pc() == 0);
    }
    tpurt::Program broken = tpurt::ProgramBuilder().nop().nop().halt().finish();
    broken.insns[1].hdr.opcode = 0x7f;
    try {
        dev.submit(broken, buffers).wait();
        FAIL("an unknown opcode ran");
    } catch (const tpurt::JobError &error) {
        CHECK(error.status() == TPU_ERR_BAD_OPCODE);
        CHECK(error.error_pc() == 1);
    }
    CHECK(dev.counters().jobs_failed == failed + 2);
    // The card goes on.
    dev.submit(tpurt::ProgramBuilder().halt().finish(), buffers).wait();
}

TEST_CASE("in process: a bf16 matmul and an fp32 convolution on tensors equal the golden models",
          "[in-process][tensor]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    constexpr std::uint32_t M = 150, K = 260, N = 130;
    const auto a = tpurt::random_bf16(std::size_t{M} * K, 1);
    const auto b = tpurt::random_bf16(std::size_t{K} * N, 2);
    std::vector<float> product(std::size_t{M} * N);
    tpurt::reference_matmul(a, b, product, M, K, N);
    const Tensor ta = Tensor::from_host<tpurt::Bf16>(dev, a, {M, K});
    const Tensor tb = Tensor::from_host<tpurt::Bf16>(dev, b, {K, N});
    Tensor tc = Tensor::empty(dev, DType::Fp32, {M, N + 8});
    Tensor c = tc.slice(1, 0, N); // a strided view
    const tpurt::MatmulStats stats = tpurt::matmul(dev, ta, tb, c);
    CHECK(stats.macs >= std::uint64_t{M} * K * N);
    const std::vector<float> got = c.to_vector<float>();
    REQUIRE(got.size() == product.size());
    CHECK(std::memcmp(got.data(), product.data(), got.size() * 4) == 0);

    const tpurt::Conv2dShape shape{.batch = 2,
                                   .height = 12,
                                   .width = 10,
                                   .channels = 5,
                                   .kernel_h = 3,
                                   .kernel_w = 3,
                                   .filters = 7,
                                   .stride_h = 2,
                                   .stride_w = 1,
                                   .pad_h = 1,
                                   .pad_w = 1};
    const auto input = tpurt::random_fp32(shape.input_elements(), 3);
    const auto weights = tpurt::random_fp32(shape.weight_elements(), 4);
    std::vector<float> want(shape.output_elements());
    tpurt::reference_conv2d(input, weights, want, shape);
    const Tensor tin = Tensor::from_host<float>(
        dev, input, {shape.batch, shape.height, shape.width, shape.channels});
    const Tensor tw = Tensor::from_host<float>(
        dev, weights, {shape.kernel_h, shape.kernel_w, shape.channels, shape.filters});
    Tensor tout = Tensor::empty(
        dev, DType::Fp32, {shape.batch, shape.out_height(), shape.out_width(), shape.filters});
    tpurt::conv2d(dev, tin, tw, tout, {.stride_h = 2, .stride_w = 1, .pad_h = 1, .pad_w = 1});
    const std::vector<float> conv = tout.to_vector<float>();
    CHECK(std::memcmp(conv.data(), want.data(), want.size() * 4) == 0);
}

TEST_CASE("in process: an executable is compiled once and relaunched on other buffers",
          "[in-process][executable]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    constexpr std::uint32_t m = 70, k = 90, n = 40;
    const std::uint64_t before = dev.runtime_stats().compilations;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const auto a = tpurt::random_int8(std::size_t{m} * k, seed);
        const auto b = tpurt::random_int8(std::size_t{k} * n, seed + 10);
        const tpurt::Buffer a_buf = dev.allocate_copy(a.data(), a.size());
        const tpurt::Buffer b_buf = dev.allocate_copy(b.data(), b.size());
        tpurt::Buffer c_buf = dev.allocate(std::size_t{m} * n * 4);
        tpurt::matmul(dev, a_buf, b_buf, c_buf, m, k, n, DType::Int8);
        std::vector<std::int32_t> ref(std::size_t{m} * n);
        tpurt::reference_matmul(a, b, ref, m, k, n);
        CHECK(std::memcmp(c_buf.data(), ref.data(), ref.size() * 4) == 0);
    }
    CHECK(dev.runtime_stats().compilations == before + 1);
    // After the first call no buffer object is made per launch.
    const tpurt::RuntimeStats warm = dev.runtime_stats();
    const auto a = tpurt::random_fp32(std::size_t{m} * k, 5);
    const auto b = tpurt::random_fp32(std::size_t{k} * n, 6);
    std::vector<float> c(std::size_t{m} * n);
    tpurt::matmul(dev, a, b, c, m, k, n);
    const tpurt::RuntimeStats first = dev.runtime_stats();
    CHECK(first.compilations == warm.compilations + 1);
    for (int i = 0; i < 5; ++i)
        tpurt::matmul(dev, a, b, c, m, k, n);
    CHECK(dev.runtime_stats().program_buffers_created == first.program_buffers_created);
    CHECK(dev.runtime_stats().staging_buffers_created == first.staging_buffers_created);
    CHECK(dev.runtime_stats().compilations == first.compilations);
}
