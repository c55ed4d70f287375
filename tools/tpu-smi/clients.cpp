// SPDX-License-Identifier: MIT
// clients.cpp - finds the open files of /dev/accel/accel* in /proc/<pid>/fd and reads their
// usage from /proc/<pid>/fdinfo/<fd>.
#include "clients.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace fs = std::filesystem;

namespace tpusmi {
namespace {

// "4 KiB" -> 4096; the units drm_show_memory_stats() prints.
std::uint64_t parse_size(const std::string &value) {
    std::istringstream in(value);
    std::uint64_t n = 0;
    std::string unit;
    in >> n >> unit;
    if (unit == "KiB")
        return n << 10;
    if (unit == "MiB")
        return n << 20;
    if (unit == "GiB")
        return n << 30;
    return n;
}

std::uint64_t parse_number(const std::string &value) {
    std::istringstream in(value);
    std::uint64_t n = 0;
    in >> n;
    return n;
}

} // namespace

bool parse_fdinfo(const std::string &text, Client &client) {
    std::istringstream in(text);
    std::string line;
    bool ours = false;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        const std::string key = line.substr(0, colon);
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        if (key == "drm-driver")
            ours = value == "tpu";
        else if (key == "drm-client-id")
            client.client_id = parse_number(value);
        else if (key == "drm-pdev")
            client.pci = value;
        else if (key == "drm-engine-mxu")
            client.busy_ns = parse_number(value);
        else if (key == "drm-cycles-mxu")
            client.cycles = parse_number(value);
        else if (key == "drm-total-memory")
            client.memory_bytes = parse_size(value);
        else if (key == "drm-resident-memory")
            client.resident_bytes = parse_size(value);
        else if (key == "drm-cycles-ici")
            client.link_cycles = parse_number(value);
        else if (key == "tpu-ici-tx-bytes")
            client.link_tx_bytes = parse_number(value);
        else if (key == "tpu-ici-rx-bytes")
            client.link_rx_bytes = parse_number(value);
    }
    return ours;
}

std::vector<Client> read_clients(const std::string &proc) {
    std::vector<Client> clients;
    std::set<std::pair<std::string, std::uint64_t>> seen; // (card, client id)
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(proc, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const int pid = std::stoi(name);
        std::error_code fd_ec;
        for (const auto &fd : fs::directory_iterator(entry.path() / "fd", fd_ec)) {
            std::error_code link_ec;
            const auto target = fs::read_symlink(fd.path(), link_ec);
            if (link_ec || target.string().rfind("/dev/accel/accel", 0) != 0)
                continue;
            std::ifstream in(entry.path() / "fdinfo" / fd.path().filename());
            std::stringstream text;
            text << in.rdbuf();
            Client client;
            client.pid = pid;
            if (!in || !parse_fdinfo(text.str(), client))
                continue;
            if (!seen.insert({client.pci, client.client_id}).second)
                continue;
            std::ifstream comm(entry.path() / "comm");
            std::getline(comm, client.command);
            clients.push_back(client);
        }
    }
    return clients;
}

} // namespace tpusmi
