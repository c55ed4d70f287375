// SPDX-License-Identifier: MIT
// cards.cpp - reads the TPU cards from sysfs: PCI functions with the card's vendor and device
// id, the tpu driver's bound devices and their attributes, and their inter-chip links.
#include "cards.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "tpu_hw.h"

namespace fs = std::filesystem;

namespace tpusmi {
namespace {

std::optional<std::string> read_line(const fs::path &path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line))
        return std::nullopt;
    return line;
}

std::string attr(const fs::path &dir, const std::string &name) {
    auto value = read_line(dir / name);
    if (!value)
        throw std::runtime_error("cannot read " + (dir / name).string());
    return *value;
}

std::uint64_t number(const fs::path &dir, const std::string &name) {
    const std::string text = attr(dir, name);
    try {
        return std::stoull(text, nullptr, 0);
    } catch (const std::exception &) {
        throw std::runtime_error((dir / name).string() + ": not a number: " + text);
    }
}

bool is_tpu_function(const fs::path &dev) {
    auto vendor = read_line(dev / "vendor"), device = read_line(dev / "device");
    return vendor && device && std::stoul(*vendor, nullptr, 0) == TPU_PCI_VENDOR_ID &&
           std::stoul(*device, nullptr, 0) == TPU_PCI_DEVICE_ID;
}

// The card's fabric, if it is on one: ici/ and its ici_port<p>/ directories.
std::optional<Interconnect> read_interconnect(const fs::path &dev) {
    const fs::path i = dev / "ici";
    std::error_code ec;
    if (!fs::exists(i, ec))
        return std::nullopt;
    Interconnect ici;
    ici.topology = attr(i, "topology");
    ici.dims = attr(i, "dims");
    ici.coord = attr(i, "coord");
    ici.link_gbps = number(i, "link_gbps");
    ici.hop_ns = number(i, "hop_ns");
    ici.credits = number(i, "credits");
    ici.link_cycles = number(i, "link_cycles");
    ici.link_tx_bytes = number(i, "link_tx_bytes");
    ici.link_rx_bytes = number(i, "link_rx_bytes");
    const std::uint64_t ports = number(i, "ports");
    for (unsigned p = 0; p < ports; p++) {
        const fs::path d = dev / ("ici_port" + std::to_string(p));
        Port port;
        port.index = p;
        port.up = attr(d, "state") == "up";
        port.error = number(d, "error") != 0;
        port.peer = attr(d, "peer");
        port.peer_port = number(d, "peer_port");
        port.tx_bytes = number(d, "tx_bytes");
        port.rx_bytes = number(d, "rx_bytes");
        port.tx_packets = number(d, "tx_packets");
        port.rx_packets = number(d, "rx_packets");
        port.errors = number(d, "errors");
        port.rx_queued = number(d, "rx_queued");
        ici.ports.push_back(port);
    }
    return ici;
}

Card read_card(const fs::path &dev) {
    const fs::path t = dev / "tpu";
    Card c;
    c.pci = dev.filename().string();
    c.accel_minor = static_cast<int>(number(t, "accel_minor"));
    c.dev_path = "/dev/accel/accel" + std::to_string(c.accel_minor);
    c.numa_node = std::stoi(attr(t, "numa_node"));
    c.device_id = attr(t, "device_id");
    c.spec_version = attr(t, "spec_version");
    c.caps = attr(t, "caps");
    c.mxu_rows = number(t, "mxu_rows");
    c.mxu_cols = number(t, "mxu_cols");
    c.ub_bytes = number(t, "ub_bytes");
    c.acc_bytes = number(t, "acc_bytes");
    c.clock_mhz = number(t, "clock_mhz");
    c.contexts = number(t, "contexts");
    c.card_queues = number(t, "card_queues");
    c.queues = number(t, "queues");
    c.ring_entries = number(t, "ring_entries");
    c.jobs_in_ring = number(t, "jobs_in_ring");
    c.jobs_in_flight = number(t, "jobs_in_flight");
    c.open_files = number(t, "open_files");
    c.resets = number(t, "resets");
    c.pinned_bytes = number(t, "pinned_bytes");
    c.pinned_limit_bytes = number(t, "pinned_limit_bytes");
    c.busy_ns = number(t, "busy_ns");
    for (const auto &entry : fs::directory_iterator(t)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("counter_", 0) == 0)
            c.counters[name.substr(8)] = number(t, name);
    }
    c.ici = read_interconnect(dev);
    return c;
}

} // namespace

Inventory read_inventory(const std::string &sysfs) {
    Inventory inv;
    const fs::path devices = fs::path(sysfs) / "bus/pci/devices";
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(devices, ec))
        if (is_tpu_function(entry.path()))
            inv.pci_functions.push_back(entry.path().filename().string());
    std::sort(inv.pci_functions.begin(), inv.pci_functions.end());

    const fs::path module = fs::path(sysfs) / "module/tpu";
    const fs::path driver = fs::path(sysfs) / "bus/pci/drivers/tpu";
    inv.driver_loaded = fs::exists(driver, ec);
    if (!inv.driver_loaded)
        return inv;
    inv.driver_version = read_line(module / "version").value_or("?");
    for (const auto &pci : inv.pci_functions) {
        const fs::path dev = devices / pci;
        // Bound to tpu.ko: its driver link points at the tpu driver and it has our attributes.
        if (fs::equivalent(dev / "driver", driver, ec) && fs::exists(dev / "tpu", ec))
            inv.cards.push_back(read_card(dev));
    }
    std::sort(inv.cards.begin(), inv.cards.end(),
              [](const Card &a, const Card &b) { return a.accel_minor < b.accel_minor; });
    return inv;
}

} // namespace tpusmi
