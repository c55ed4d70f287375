// SPDX-License-Identifier: MIT
// comm_state.hpp - internal: what a tpurt::Communicator shares: its ring and torus shape, the
// algorithm it is held to, its ranks in this
// process (each with its device, ports, cached executables and scratch buffer), and its
// failure (the first error, which aborts the other local ranks' jobs).
#pragma once

#include "collectives/ring_program.hpp"
#include "tpurt/collectives.hpp"
#include "tpurt/executable.hpp"

#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tpurt::detail {

// Auto's smallest buffer for more than one lane (collectives.hpp, "Algorithms").
constexpr std::uint64_t kMultiLaneBytes = 4096;

// One rank this process drives.
struct LocalRank {
    Device device;
    std::uint32_t rank = 0;
    std::uint32_t position = 0; // on the ring
    RingPorts ports;
    std::mutex mutex; // one collective of the rank at a time (its executables and scratch)
    std::map<std::string, std::shared_ptr<const Executable>> executables;
    std::shared_ptr<Buffer> scratch; // reduce-scatter's working copy of its input
};

// Whether `algorithm` runs on the torus's axes (CommState::torus_shape) rather than the ring.
inline bool on_torus(CollectiveAlgorithm algorithm) {
    return algorithm == CollectiveAlgorithm::Torus2d ||
           algorithm == CollectiveAlgorithm::Hierarchical;
}

struct CommState {
    std::uint32_t nranks = 0;
    std::uint32_t tag_base = 0; // from the id
    CommOptions options;        // algorithm: the one forced (options or environment), or Auto
    std::vector<std::uint32_t> positions; // ring position of each rank
    std::vector<std::uint32_t> rank_at;   // rank at each ring position
    CommShape ring_shape;                 // axis 0 the ring
    CommShape torus_shape;                // x and y, if the ranks span a whole torus
    bool slow_y = false;                  // its y links are slower than its x links
    bool bidirectional = false;           // ring neighbours are joined by a link direction each way
    std::vector<std::uint32_t> local_ranks; // ranks of `locals`, in order
    std::vector<std::unique_ptr<LocalRank>> locals;

    mutable std::mutex mutex;
    std::exception_ptr error; // the first failure

    // Records the failure (the first one kept) and aborts the local ranks' running jobs, which
    // empties their cards' receive buffers (in process; tpu.ko has no such call).
    void fail(std::exception_ptr why);
    // Throws the failure, if any.
    void check() const;
    // The algorithm of an all-reduce, reduce-scatter or all-gather of `bytes` (collectives.hpp).
    CollectiveAlgorithm algorithm(std::uint64_t bytes) const;
    const CommShape &shape(CollectiveAlgorithm algorithm) const {
        return on_torus(algorithm) ? torus_shape : ring_shape;
    }
};

} // namespace tpurt::detail
