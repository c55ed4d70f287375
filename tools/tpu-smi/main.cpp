// SPDX-License-Identifier: MIT
// tpu-smi - the TPU cards of this machine and the processes using them, like nvidia-smi:
// identity, utilisation, memory in use, counters, per-process memory, utilisation over the
// sampling window (two fdinfo samples, like nvidia-smi pmon) and busy time, read from sysfs and
// /proc (it opens no card). Exit status: 0 report printed; 1 bad usage or a read
// error; 2 no TPU card on the PCI bus; 3 TPU card(s) but the tpu driver is not loaded;
// 4 the driver is loaded but no card is bound to it.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <thread>
#include <vector>

#include "cards.hpp"
#include "clients.hpp"
#include "report.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Utilisation of each card of @now: its busy time's growth since @before over the window.
std::vector<double> utilization(const tpusmi::Inventory &before, const tpusmi::Inventory &now,
                                double window_ms) {
    std::vector<double> util;
    for (const auto &card : now.cards) {
        double percent = 0;
        for (const auto &old : before.cards)
            if (old.pci == card.pci && card.busy_ns >= old.busy_ns && window_ms > 0)
                percent = std::min(100.0, (card.busy_ns - old.busy_ns) / (window_ms * 1e4));
        util.push_back(percent);
    }
    return util;
}

// Utilisation of each client of @now: its busy time's growth since @before over the window. A
// client that opened its file during the window counts from 0.
std::vector<double> client_utilization(const std::vector<tpusmi::Client> &before,
                                       const std::vector<tpusmi::Client> &now, double window_ms) {
    std::vector<double> util;
    for (const auto &client : now) {
        std::uint64_t start = 0;
        for (const auto &old : before)
            if (old.pci == client.pci && old.client_id == client.client_id)
                start = std::min(old.busy_ns, client.busy_ns);
        util.push_back(window_ms > 0 ? std::min(100.0, (client.busy_ns - start) / (window_ms * 1e4))
                                     : 0.0);
    }
    return util;
}

// Why there is nothing to report, or 0.
int missing(const tpusmi::Inventory &inv) {
    if (inv.pci_functions.empty()) {
        std::fprintf(stderr, "tpu-smi: no TPU card found on the PCI bus\n");
        return 2;
    }
    if (!inv.driver_loaded) {
        std::fprintf(stderr,
                     "tpu-smi: %zu TPU card(s) found but the tpu driver is not loaded "
                     "(insmod driver/tpu.ko)\n",
                     inv.pci_functions.size());
        return 3;
    }
    if (inv.cards.empty()) {
        std::fprintf(stderr, "tpu-smi: the tpu driver is loaded but no card is bound to it\n");
        return 4;
    }
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"tpu-smi: TPU cards, their utilisation and memory, and the processes using "
                 "them"};
    bool json = false;
    double loop_s = 0;
    unsigned sample_ms = 200;
    app.add_flag("--json", json, "print one JSON document per report");
    app.add_option("-l,--loop", loop_s, "repeat every SECONDS until interrupted")
        ->check(CLI::PositiveNumber);
    app.add_option("--sample-ms", sample_ms, "window of the first report's utilisation")
        ->check(CLI::Range(1u, 60000u));
    CLI11_PARSE(app, argc, argv);

    try {
        tpusmi::Inventory before = tpusmi::read_inventory();
        if (int rc = missing(before))
            return rc;
        std::vector<tpusmi::Client> clients_before = tpusmi::read_clients();
        auto since = Clock::now();
        std::this_thread::sleep_for(std::chrono::milliseconds(sample_ms));
        for (;;) {
            tpusmi::Snapshot snap;
            snap.inventory = tpusmi::read_inventory();
            if (int rc = missing(snap.inventory))
                return rc;
            const auto at = Clock::now();
            snap.window_ms = std::chrono::duration<double, std::milli>(at - since).count();
            snap.utilization = utilization(before, snap.inventory, snap.window_ms);
            snap.clients = tpusmi::read_clients();
            snap.client_utilization =
                client_utilization(clients_before, snap.clients, snap.window_ms);
            if (json)
                std::printf("%s\n", tpusmi::to_json(snap).dump(2).c_str());
            else
                tpusmi::print_table(snap);
            std::fflush(stdout);
            if (loop_s <= 0)
                return 0;
            before = std::move(snap.inventory);
            clients_before = std::move(snap.clients);
            since = at;
            std::this_thread::sleep_for(std::chrono::duration<double>(loop_s));
            if (!json)
                std::printf("\n");
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "tpu-smi: %s\n", e.what());
        return 1;
    }
}
