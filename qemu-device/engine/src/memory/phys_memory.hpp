// SPDX-License-Identifier: MIT
// PhysMemory: the host physical memory as the engine sees it, a thin wrapper around the
// tpu_phys_rw_fn callback given to tpu_engine_create(). Every host access goes through here.
#pragma once

#include <bit>
#include <cstdint>

#include "tpu_engine.h"

namespace tpu::engine {

// Page tables, context entries and instructions are little-endian and read with memcpy.
static_assert(std::endian::native == std::endian::little,
              "the engine assumes a little-endian host");

class PhysMemory {
  public:
    PhysMemory(tpu_phys_rw_fn rw, void *opaque) : rw_(rw), opaque_(opaque) {}

    bool read(uint64_t addr, void *buf, uint64_t len) const {
        return rw_(opaque_, addr, buf, len, false) == 0;
    }
    bool write(uint64_t addr, const void *buf, uint64_t len) const {
        // The callback's buffer is not const because it serves both directions; it does not
        // modify it when writing.
        return rw_(opaque_, addr, const_cast<void *>(buf), len, true) == 0;
    }

  private:
    tpu_phys_rw_fn rw_;
    void *opaque_;
};

} // namespace tpu::engine
