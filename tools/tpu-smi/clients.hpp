// SPDX-License-Identifier: MIT
// clients.hpp - the processes using TPU cards, from /proc/<pid>/fdinfo (DRM usage stats that
// tpu.ko prints: drm-engine-mxu, drm-cycles-mxu, drm-total-memory, drm-resident-memory, and on
// a card on a fabric drm-cycles-ici, tpu-ici-tx-bytes, tpu-ici-rx-bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tpusmi {

// One open file of a card (a DRM client); file descriptors sharing it count once.
struct Client {
    int pid = 0;
    std::string command; // /proc/<pid>/comm
    std::string pci;     // drm-pdev: the card
    std::uint64_t client_id = 0;
    std::uint64_t busy_ns = 0;
    std::uint64_t cycles = 0;
    std::uint64_t memory_bytes = 0;   // drm-total-memory
    std::uint64_t resident_bytes = 0; // drm-resident-memory
    std::uint64_t link_cycles = 0;    // drm-cycles-ici
    std::uint64_t link_tx_bytes = 0;  // tpu-ici-tx-bytes
    std::uint64_t link_rx_bytes = 0;  // tpu-ici-rx-bytes
};

// The fdinfo lines of one file, parsed; false if it is not a file of the tpu driver.
bool parse_fdinfo(const std::string &text, Client &client);

// Every client of the tpu driver under @proc (normally /proc). Processes that exit or close
// their files while they are read are skipped; others' processes need the privilege to read
// their fdinfo (root), else they are missed.
std::vector<Client> read_clients(const std::string &proc = "/proc");

} // namespace tpusmi
