// SPDX-License-Identifier: MIT
// cards.hpp - the TPU cards of this machine as sysfs shows them (the tpu driver's "tpu"
// attribute directory on each bound PCI device, and "ici" and "ici_port<p>" on a card of an
// inter-chip fabric: docs/driver-observability.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tpusmi {

// One port of a card on an inter-chip fabric: its link and the traffic over it.
struct Port {
    unsigned index = 0; // 0 +x, 1 -x, 2 +y, 3 -y
    bool up = false;    // a card at the other end
    bool error = false; // a job ended with a link error on it since the card's reset
    std::string peer;   // the neighbour's coordinate
    std::uint64_t peer_port = 0;
    std::uint64_t tx_bytes = 0, rx_bytes = 0, tx_packets = 0, rx_packets = 0, errors = 0;
    std::uint64_t rx_queued = 0; // packets waiting in its receive buffer
};

// A card's place on an inter-chip fabric (spec 2.0).
struct Interconnect {
    std::string topology; // ring or torus2d
    std::string dims;     // N or XxY
    std::string coord;    // x or x:y
    std::uint64_t link_gbps = 0, hop_ns = 0, credits = 0;
    std::uint64_t link_cycles = 0, link_tx_bytes = 0, link_rx_bytes = 0;
    std::vector<Port> ports;
};

struct Card {
    std::string pci;          // PCI address, e.g. 0000:00:04.0
    std::string dev_path;     // /dev/accel/accelN
    int accel_minor = -1;     // N
    int numa_node = -1;       // -1: none
    std::string device_id;    // 0x7470
    std::string spec_version; // 1.3
    std::string caps;         // int8 bf16 fp32 vpu tlb_done
    std::uint64_t mxu_rows = 0, mxu_cols = 0, ub_bytes = 0, acc_bytes = 0, clock_mhz = 0;
    std::uint64_t contexts = 0, card_queues = 0, queues = 0, ring_entries = 0;
    std::uint64_t jobs_in_ring = 0, jobs_in_flight = 0, open_files = 0, resets = 0;
    std::uint64_t pinned_bytes = 0, pinned_limit_bytes = 0;
    std::uint64_t busy_ns = 0;
    std::map<std::string, std::uint64_t> counters; // counter_<name> without the prefix
    std::optional<Interconnect> ici;               // none: the card is on no fabric
};

// What the machine has: TPU PCI functions, whether tpu.ko is loaded, and the bound cards.
struct Inventory {
    std::vector<std::string> pci_functions; // every TPU PCI function, bound or not
    bool driver_loaded = false;
    std::string driver_version; // /sys/module/tpu/version
    std::vector<Card> cards;    // cards bound to tpu.ko, by accel minor
};

// Reads the inventory under @sysfs (normally /sys). Throws std::runtime_error when an attribute
// of a bound card cannot be read (the card went away while it was read).
Inventory read_inventory(const std::string &sysfs = "/sys");

} // namespace tpusmi
