// SPDX-License-Identifier: MIT
// EngineDma: the card's host <-> unified-buffer DMA through its MMU, timed on the engine's public
// C API (tpu_engine.h) against memcpy on the same host. A buffer of `bytes` is mapped page by page
// (physically scattered, as the driver maps a buffer object) in a device address space; one job
// moves it into the unified buffer (DMA_IN), another out of it (DMA_OUT), in chunks of at most the
// unified buffer's size, rows of one page.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tpu_test/address_space.hpp"
#include "tpu_test/card.hpp"
#include "tpu_test/host_memory.hpp"
#include "tpu_test/program.hpp"

namespace tpu::bench {

class EngineDma {
  public:
    // bytes: a multiple of 4 KiB; threads: the engine's worker threads.
    EngineDma(uint64_t bytes, uint32_t threads);

    // Seconds of one job that moves the buffer host -> unified buffer / unified buffer -> host.
    double run_in() { return run(in_); }
    double run_out() { return run(out_); }
    // Seconds of memcpy moving the same bytes in the same chunks between two host buffers.
    double run_memcpy();

    // Runs one job that moves every chunk in and back out (a job starts with an empty unified
    // buffer, so the timed jobs cannot be checked this way) and compares the destination with
    // the source.
    bool round_trip_exact();

    uint64_t bytes() const { return bytes_; }

  private:
    static constexpr uint64_t kSrcVa = 0x100000000ull;
    static constexpr uint64_t kDstVa = 0x300000000ull;
    static constexpr uint64_t kInProgramVa = 0x7e0000000ull;
    static constexpr uint64_t kOutProgramVa = 0x7e8000000ull;
    static constexpr uint64_t kBothProgramVa = 0x7f0000000ull;

    struct Job {
        uint64_t va;
        uint32_t bytes;
    };
    Job place(uint64_t va, const tpu::test::Program &p);
    double run(const Job &job);

    uint64_t bytes_;
    uint64_t chunk_;
    std::unique_ptr<tpu::test::HostMemory> mem_;
    std::unique_ptr<tpu::test::Card> card_;
    std::unique_ptr<tpu::test::AddressSpace> space_;
    Job in_{}, out_{}, both_{};
    std::vector<uint8_t> source_, host_src_, host_dst_;
};

} // namespace tpu::bench
