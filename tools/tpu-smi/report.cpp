// SPDX-License-Identifier: MIT
// report.cpp - formats a snapshot: nvidia-smi-like text (a block per card with its interconnect
// links, then the processes) or one JSON document (the schema is in tools/tpu-smi/README.md).
#include "report.hpp"

#include <cstdio>
#include <string>

namespace tpusmi {
namespace {

std::string size_text(std::uint64_t bytes) {
    char text[32];
    if (bytes >= (std::uint64_t{1} << 30))
        std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
    else if (bytes >= (1u << 20))
        std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    else
        std::snprintf(text, sizeof(text), "%llu KiB", static_cast<unsigned long long>(bytes >> 10));
    return text;
}

unsigned long long ull(std::uint64_t v) {
    return static_cast<unsigned long long>(v);
}

double client_util(const Snapshot &snap, std::size_t i) {
    return i < snap.client_utilization.size() ? snap.client_utilization[i] : 0.0;
}

const char *port_name(unsigned port) {
    static const char *const names[] = {"+x", "-x", "+y", "-y"};
    return port < 4 ? names[port] : "?";
}

// The card's place on its fabric and a line per port: the link, its neighbour, its traffic.
void print_interconnect(const Interconnect &ici) {
    std::printf("  interconnect %s %s at %s, %llu Gbit/s a link direction, %llu ns a hop; "
                "jobs sent %s, received %s over the links\n",
                ici.topology.c_str(), ici.dims.c_str(), ici.coord.c_str(), ull(ici.link_gbps),
                ull(ici.hop_ns), size_text(ici.link_tx_bytes).c_str(),
                size_text(ici.link_rx_bytes).c_str());
    for (const Port &p : ici.ports)
        std::printf("    port %u %-2s %-4s to %-5s port %llu  tx %10s %8llu packets  rx %10s "
                    "%8llu packets  %llu errors%s\n",
                    p.index, port_name(p.index), p.up ? "up" : "down", p.peer.c_str(),
                    ull(p.peer_port), size_text(p.tx_bytes).c_str(), ull(p.tx_packets),
                    size_text(p.rx_bytes).c_str(), ull(p.rx_packets), ull(p.errors),
                    p.error ? " (a job ended with a link error)" : "");
}

} // namespace

nlohmann::json to_json(const Snapshot &snap) {
    const Inventory &inv = snap.inventory;
    nlohmann::json doc;
    doc["driver_loaded"] = inv.driver_loaded;
    doc["driver_version"] = inv.driver_version;
    doc["pci_functions"] = inv.pci_functions;
    doc["sample_window_ms"] = snap.window_ms;
    doc["cards"] = nlohmann::json::array();
    for (std::size_t i = 0; i < inv.cards.size(); i++) {
        const Card &c = inv.cards[i];
        nlohmann::json card = {
            {"index", i},
            {"device", c.dev_path},
            {"pci", c.pci},
            {"numa_node", c.numa_node},
            {"driver", "tpu"},
            {"device_id", c.device_id},
            {"spec_version", c.spec_version},
            {"caps", c.caps},
            {"array", {{"rows", c.mxu_rows}, {"cols", c.mxu_cols}}},
            {"clock_mhz", c.clock_mhz},
            {"memory",
             {{"unified_buffer_bytes", c.ub_bytes},
              {"accumulator_bytes", c.acc_bytes},
              {"pinned_bytes", c.pinned_bytes},
              {"pinned_limit_bytes", c.pinned_limit_bytes}}},
            {"utilization_percent", snap.utilization[i]},
            {"busy_ns", c.busy_ns},
            {"contexts", c.contexts},
            {"queues",
             {{"card", c.card_queues},
              {"used", c.queues},
              {"ring_entries", c.ring_entries},
              {"jobs_in_ring", c.jobs_in_ring}}},
            {"jobs_in_flight", c.jobs_in_flight},
            {"open_files", c.open_files},
            {"resets", c.resets},
            {"counters", c.counters},
        };
        card["interconnect"] = nullptr;
        if (c.ici) {
            const Interconnect &ici = *c.ici;
            nlohmann::json ports = nlohmann::json::array();
            for (const Port &p : ici.ports)
                ports.push_back({{"port", p.index},
                                 {"name", port_name(p.index)},
                                 {"state", p.up ? "up" : "down"},
                                 {"error", p.error},
                                 {"peer", p.peer},
                                 {"peer_port", p.peer_port},
                                 {"tx_bytes", p.tx_bytes},
                                 {"rx_bytes", p.rx_bytes},
                                 {"tx_packets", p.tx_packets},
                                 {"rx_packets", p.rx_packets},
                                 {"errors", p.errors},
                                 {"rx_queued", p.rx_queued}});
            card["interconnect"] = {{"topology", ici.topology},
                                    {"dims", ici.dims},
                                    {"coord", ici.coord},
                                    {"link_gbps", ici.link_gbps},
                                    {"hop_ns", ici.hop_ns},
                                    {"credits", ici.credits},
                                    {"link_cycles", ici.link_cycles},
                                    {"link_tx_bytes", ici.link_tx_bytes},
                                    {"link_rx_bytes", ici.link_rx_bytes},
                                    {"ports", ports}};
        }
        card["processes"] = nlohmann::json::array();
        for (std::size_t j = 0; j < snap.clients.size(); j++) {
            const Client &p = snap.clients[j];
            if (p.pci == c.pci)
                card["processes"].push_back({{"pid", p.pid},
                                             {"command", p.command},
                                             {"client_id", p.client_id},
                                             {"memory_bytes", p.memory_bytes},
                                             {"resident_bytes", p.resident_bytes},
                                             {"utilization_percent", client_util(snap, j)},
                                             {"busy_ns", p.busy_ns},
                                             {"cycles", p.cycles},
                                             {"link_cycles", p.link_cycles},
                                             {"link_tx_bytes", p.link_tx_bytes},
                                             {"link_rx_bytes", p.link_rx_bytes}});
        }
        doc["cards"].push_back(card);
    }
    return doc;
}

void print_table(const Snapshot &snap) {
    const Inventory &inv = snap.inventory;
    std::printf("tpu-smi: %zu card(s), driver tpu %s\n", inv.cards.size(),
                inv.driver_version.c_str());
    for (std::size_t i = 0; i < inv.cards.size(); i++) {
        const Card &c = inv.cards[i];
        const std::string numa = c.numa_node >= 0 ? std::to_string(c.numa_node) : "none";
        std::printf("\nTPU %zu  %s  PCI %s  NUMA %s  spec %s  id %s\n", i, c.dev_path.c_str(),
                    c.pci.c_str(), numa.c_str(), c.spec_version.c_str(), c.device_id.c_str());
        std::printf("  array %llux%llu at %llu MHz (%s), UB %s, ACC %s\n", ull(c.mxu_rows),
                    ull(c.mxu_cols), ull(c.clock_mhz), c.caps.c_str(),
                    size_text(c.ub_bytes).c_str(), size_text(c.acc_bytes).c_str());
        std::printf("  utilisation %5.1f %% (%.0f ms window), memory %s / %s pinned\n",
                    snap.utilization[i], snap.window_ms, size_text(c.pinned_bytes).c_str(),
                    size_text(c.pinned_limit_bytes).c_str());
        std::printf("  queues %llu of %llu, ring %llu entries, %llu jobs in ring, %llu in flight, "
                    "%llu open files, %llu resets\n",
                    ull(c.queues), ull(c.card_queues), ull(c.ring_entries), ull(c.jobs_in_ring),
                    ull(c.jobs_in_flight), ull(c.open_files), ull(c.resets));
        auto counter = [&](const char *name) {
            auto it = c.counters.find(name);
            return it == c.counters.end() ? 0ull : ull(it->second);
        };
        std::printf("  counters: %llu jobs done, %llu failed, %llu cycles (%llu MXU busy), "
                    "%llu MACs, %llu MMU faults\n",
                    counter("jobs_done"), counter("jobs_failed"), counter("cycles"),
                    counter("mxu_busy_cycles"), counter("macs"), counter("mmu_faults"));
        if (c.ici)
            print_interconnect(*c.ici);
    }
    std::printf("\n%-4s %8s  %-16s %12s %6s %14s %14s %12s %12s\n", "TPU", "PID", "COMMAND",
                "MEMORY", "UTIL %", "BUSY ms", "CYCLES", "LINK TX", "LINK RX");
    bool any = false;
    for (std::size_t i = 0; i < inv.cards.size(); i++)
        for (std::size_t j = 0; j < snap.clients.size(); j++) {
            const Client &p = snap.clients[j];
            if (p.pci == inv.cards[i].pci) {
                any = true;
                std::printf("%-4zu %8d  %-16s %12s %6.1f %14.3f %14llu %12s %12s\n", i, p.pid,
                            p.command.c_str(), size_text(p.memory_bytes).c_str(),
                            client_util(snap, j), static_cast<double>(p.busy_ns) / 1e6,
                            ull(p.cycles), size_text(p.link_tx_bytes).c_str(),
                            size_text(p.link_rx_bytes).c_str());
            }
        }
    if (!any)
        std::printf("no processes using a card\n");
}

} // namespace tpusmi
