// SPDX-License-Identifier: MIT
// numa_placement.hpp - internal: places the host pages of buffer objects on the card's NUMA
// node. A BO's pages are shmem pages the kernel allocates under the creating thread's memory
// policy, so the runtime makes the card's node the preferred node of the calling thread while
// it creates and maps a BO, and restores the thread's previous policy afterwards. There is no
// separate staging memory to place: host spans are copied straight into the mapped BOs.
#pragma once

struct bitmask; // libnuma's node set

namespace tpurt::detail {

// True if libnuma works here and the machine has more than one node (placement matters).
bool numa_placement_useful();

class PreferredNodeScope {
  public:
    // Prefers `node` for this thread's allocations; does nothing for node < 0 or when
    // placement is not useful.
    explicit PreferredNodeScope(int node);
    ~PreferredNodeScope();
    PreferredNodeScope(const PreferredNodeScope &) = delete;
    PreferredNodeScope &operator=(const PreferredNodeScope &) = delete;

  private:
    ::bitmask *saved_nodes_ = nullptr;
    int saved_mode_ = 0;
};

} // namespace tpurt::detail
