// SPDX-License-Identifier: MIT
// report.hpp - tpu-smi's report of the cards and their processes, as a table or as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "cards.hpp"
#include "clients.hpp"

namespace tpusmi {

// One snapshot: the inventory, the clients, and each card's and each client's busy share of the
// sampling window.
struct Snapshot {
    Inventory inventory;
    std::vector<Client> clients;
    std::vector<double> utilization;        // percent, per card of inventory.cards
    std::vector<double> client_utilization; // percent, per client of clients
    double window_ms = 0;
};

nlohmann::json to_json(const Snapshot &snap);
void print_table(const Snapshot &snap);

} // namespace tpusmi
