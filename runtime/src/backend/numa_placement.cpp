// SPDX-License-Identifier: MIT
// numa_placement.cpp - the thread memory-policy scope that puts BO pages on the card's node.
#include "backend/numa_placement.hpp"

#include <numa.h>
#include <numaif.h>

namespace tpurt::detail {

bool numa_placement_useful() {
    static const bool useful = numa_available() >= 0 && numa_max_node() > 0;
    return useful;
}

PreferredNodeScope::PreferredNodeScope(int node) {
    if (node < 0 || !numa_placement_useful())
        return;
    struct bitmask *saved = numa_allocate_nodemask();
    if (get_mempolicy(&saved_mode_, saved->maskp, saved->size + 1, nullptr, 0) != 0) {
        numa_free_nodemask(saved);
        return; // placement is an optimisation: without the old policy, leave it alone
    }
    struct bitmask *preferred = numa_allocate_nodemask();
    numa_bitmask_setbit(preferred, static_cast<unsigned>(node));
    if (set_mempolicy(MPOL_PREFERRED, preferred->maskp, preferred->size + 1) == 0)
        saved_nodes_ = saved;
    else
        numa_free_nodemask(saved);
    numa_free_nodemask(preferred);
}

PreferredNodeScope::~PreferredNodeScope() {
    if (!saved_nodes_)
        return;
    set_mempolicy(saved_mode_, saved_nodes_->maskp, saved_nodes_->size + 1);
    numa_free_nodemask(saved_nodes_);
}

} // namespace tpurt::detail
