// SPDX-License-Identifier: MIT
// Host memory running out during a job (issue 24, item 18): the buffers fast mode makes on first
// use (deferred MATMULs' copies, their lists) are allocated while a job runs, and a bad_alloc
// must end that job with a status, not escape tpu_engine_run() into QEMU (which would abort).
// Its own binary: it replaces the global operator new, which refuses every allocation while
// armed, as a process at its memory limit would.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "tpu_test/card.hpp"

namespace {

std::atomic<bool> g_refuse{false};
std::atomic<uint64_t> g_refused{0};

void *allocate(std::size_t size, std::size_t align) {
    if (g_refuse.load(std::memory_order_relaxed)) {
        g_refused.fetch_add(1, std::memory_order_relaxed);
        throw std::bad_alloc();
    }
    void *p = align > alignof(std::max_align_t)
                  ? std::aligned_alloc(align, (size + align - 1) / align * align)
                  : std::malloc(size ? size : 1);
    if (!p)
        throw std::bad_alloc();
    return p;
}

} // namespace

void *operator new(std::size_t size) {
    return allocate(size, 0);
}
void *operator new[](std::size_t size) {
    return allocate(size, 0);
}
void *operator new(std::size_t size, std::align_val_t align) {
    return allocate(size, std::size_t(align));
}
void *operator new[](std::size_t size, std::align_val_t align) {
    return allocate(size, std::size_t(align));
}
void operator delete(void *p) noexcept {
    std::free(p);
}
void operator delete[](void *p) noexcept {
    std::free(p);
}
void operator delete(void *p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void *p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void *p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void *p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete(void *p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}

using namespace tpu::test;

namespace {

constexpr uint64_t kIn = 0x100000;  // A (16 x 16 int8), then W (16 x 16 int8)
constexpr uint64_t kOut = 0x200000; // C (16 x 16 int32)

// C = A x W as two column blocks of eight, each a LOAD_W from the UB and a MATMUL into its own
// accumulators: MATMULs fast mode defers, copying their weights into buffers made on first use.
Program two_column_blocks() {
    Program p{dma_in(TPU_DT_INT8, 1, 512, kIn, 512, 0, 512)};
    for (uint32_t block = 0; block < 2; block++) {
        p.push_back(load_w(TPU_DT_INT8, 16, 8, 256 + 8 * block, 16));
        p.push_back(matmul(TPU_DT_INT8, 16, 16, 0, 16, 32 * block, 64, 0));
    }
    p.push_back(dma_out_acc(TPU_DT_INT32, 16, 16, kOut, 64, 0, 64));
    p.push_back(halt());
    return p;
}

} // namespace

TEST_CASE("a job that cannot allocate fails with a status and the engine goes on", "[alloc]") {
    HostMemory mem(64ull << 20);
    tpu_engine_config cfg = Card::default_config();
    cfg.mxu_rows = 16;
    cfg.mxu_cols = 16;
    cfg.ub_bytes = 64 * 1024;
    cfg.acc_bytes = 16 * 1024;
    cfg.threads = 1;
    Card card(mem, cfg);
    AddressSpace space = card.address_space(1);
    space.map(kIn, 512, kRead);
    space.map(kOut, 1024, kWrite);
    std::vector<int8_t> in(512);
    for (size_t i = 0; i < in.size(); i++)
        in[i] = int8_t(i % 7 - 3);
    space.write_vector(kIn, in);
    const Program program = two_column_blocks();
    const uint64_t bytes = program.size() * sizeof(tpu_insn);
    space.map(Card::kProgramVa, bytes, kRead);
    space.write(Card::kProgramVa, program.data(), bytes);

    tpu_job_result refused{};
    g_refuse = true;
    tpu_engine_run(card.engine(), 1, Card::kProgramVa, uint32_t(bytes), &refused);
    g_refuse = false;
    REQUIRE(g_refused.load() > 0); // the job did try to allocate
    CHECK(refused.status == TPU_ERR_ABORTED);

    tpu_engine_reset(card.engine());
    const tpu_job_result ok = card.run(1, Card::kProgramVa, uint32_t(bytes));
    REQUIRE(ok.status == TPU_ERR_NONE);
    const std::vector<int32_t> c = space.read_vector<int32_t>(kOut, 256);
    for (uint32_t r = 0; r < 16; r++)
        for (uint32_t col = 0; col < 16; col++) {
            int32_t want = 0;
            for (uint32_t k = 0; k < 16; k++)
                want += int32_t(in[r * 16 + k]) * int32_t(in[256 + k * 16 + col]);
            CHECK(c[r * 16 + col] == want);
        }
}
