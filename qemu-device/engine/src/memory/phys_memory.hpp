// SPDX-License-Identifier: MIT
// PhysMemory: the host physical memory as the engine sees it, a thin wrapper around the
// tpu_phys_rw_fn callback given to tpu_engine_create() and the optional map / unmap callbacks
// (tpu_engine_set_phys_map()). Every host access goes through here.
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

    void set_map(tpu_phys_map_fn map, tpu_phys_unmap_fn unmap) {
        map_ = map && unmap ? map : nullptr;
        unmap_ = map && unmap ? unmap : nullptr;
    }
    bool can_map() const { return map_ != nullptr; }
    // A host pointer to [addr, addr + len) (one page at most), or nullptr: no map callback, or
    // it could not map them. Every pointer goes back through unmap() with the same len.
    uint8_t *map(uint64_t addr, uint64_t len, bool is_write) const {
        return map_ ? static_cast<uint8_t *>(map_(opaque_, addr, len, is_write)) : nullptr;
    }
    void unmap(uint8_t *ptr, uint64_t len, bool is_write) const {
        unmap_(opaque_, ptr, len, is_write);
    }

  private:
    tpu_phys_rw_fn rw_;
    void *opaque_;
    tpu_phys_map_fn map_ = nullptr;
    tpu_phys_unmap_fn unmap_ = nullptr;
};

} // namespace tpu::engine
