// SPDX-License-Identifier: MIT
// test_cards - four cards in one guest (run-in-vm.sh --cards 4, root only): each is its own
// /dev/accel/accelN and PCI function, matmuls run on all four at once and are exact, cards 2 and
// 0 are unbound (the others keep working) and bound again, and all four work again; tpu-smi
// --json names a background process running jobs with its utilisation over the sampling window
// (a percentage), its cumulative busy time and memory.
#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "smi_command.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr unsigned kCards = 4;

void write_text(const std::string &path, const std::string &text) {
    std::ofstream out(path);
    out << text;
    out.flush();
    if (!out)
        throw std::runtime_error("cannot write " + text + " to " + path);
}

// A matmul on `device` with inputs seeded by `seed` is exact.
bool matmul_exact(tpurt::Device &device, std::uint64_t seed) {
    const std::uint32_t m = 45, k = 131, n = 67;
    const auto a = tpurt::random_int8(std::size_t{m} * k, seed);
    const auto b = tpurt::random_int8(std::size_t{k} * n, seed + 1);
    std::vector<std::int32_t> got(std::size_t{m} * n), want(got.size());
    tpurt::matmul(device, a, b, got, m, k, n);
    tpurt::reference_matmul(a, b, want, m, k, n);
    return got == want;
}

// Runs `rounds` matmuls on every listed card at once, one thread per card; true if all exact.
bool all_cards_exact(unsigned rounds) {
    const auto cards = tpurt::Device::list();
    std::vector<char> exact(cards.size(), 0);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < cards.size(); i++)
        threads.emplace_back([&, i] {
            tpurt::Device device = tpurt::Device::open_path(cards[i].path);
            bool ok = true;
            for (unsigned r = 0; r < rounds; r++)
                ok = matmul_exact(device, 100 * i + r) && ok;
            exact[i] = ok;
        });
    for (auto &t : threads)
        t.join();
    for (std::size_t i = 0; i < cards.size(); i++) {
        INFO(cards[i].path);
        CHECK(exact[i]);
    }
    return std::all_of(exact.begin(), exact.end(), [](char ok) { return ok; });
}

std::set<std::string> pci_slots() {
    std::set<std::string> slots;
    for (const auto &info : tpurt::Device::list())
        slots.insert(info.pci_slot);
    return slots;
}

} // namespace

TEST_CASE("four cards work concurrently, unbind and rebind in any order", "[cards]") {
    const auto cards = tpurt::Device::list();
    REQUIRE(cards.size() == kCards);
    const std::set<std::string> slots = pci_slots();
    CHECK(slots.size() == kCards);
    for (unsigned i = 0; i < kCards; i++)
        CHECK(cards[i].path == "/dev/accel/accel" + std::to_string(i));
    CHECK(all_cards_exact(3));

    const std::string card2 = cards[2].pci_slot, card0 = cards[0].pci_slot;
    write_text("/sys/bus/pci/devices/" + card2 + "/driver/unbind", card2);
    write_text("/sys/bus/pci/devices/" + card0 + "/driver/unbind", card0);
    CHECK(tpurt::Device::list().size() == kCards - 2);
    CHECK(pci_slots().count(card2) == 0);
    CHECK(pci_slots().count(card0) == 0);
    CHECK(all_cards_exact(2));

    write_text("/sys/bus/pci/drivers/tpu/bind", card2);
    write_text("/sys/bus/pci/drivers/tpu/bind", card0);
    CHECK(tpurt::Device::list().size() == kCards);
    CHECK(pci_slots() == slots);
    CHECK(all_cards_exact(2));
}

TEST_CASE("tpu-smi --json shows the four cards and a process running jobs", "[cards][smi]") {
    int ready[2], stop[2];
    REQUIRE(pipe(ready) == 0);
    REQUIRE(pipe(stop) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // Matmuls on card 1 until the parent closes `stop`; one byte on `ready` after the first.
        close(ready[0]);
        close(stop[1]);
        int rc = 0;
        try {
            tpurt::Device device = tpurt::Device::open(1);
            bool ok = matmul_exact(device, 7);
            if (write(ready[1], ok ? "y" : "n", 1) != 1)
                _exit(3);
            pollfd done{stop[0], POLLIN, 0};
            while (ok && poll(&done, 1, 0) == 0)
                ok = matmul_exact(device, 8);
            rc = ok ? 0 : 1;
        } catch (const std::exception &e) {
            std::fprintf(stderr, "child: %s\n", e.what());
            rc = 2;
        }
        _exit(rc);
    }
    close(ready[1]);
    close(stop[0]);
    char first = 0;
    REQUIRE(read(ready[0], &first, 1) == 1);
    CHECK(first == 'y');

    int status = 0;
    // A 1 s window: the child's matmuls (with their CPU reference) keep card 1 busy part of it.
    const std::string out =
        guest::run_command(guest::tpu_smi() + " --json --sample-ms 1000", status);
    close(stop[1]);
    int child_status = 0;
    REQUIRE(waitpid(child, &child_status, 0) == child);
    CHECK(WIFEXITED(child_status));
    CHECK(WEXITSTATUS(child_status) == 0);
    REQUIRE(status == 0);

    const auto doc = nlohmann::json::parse(out);
    CHECK(doc["driver_loaded"] == true);
    REQUIRE(doc["cards"].size() == kCards);
    bool found = false;
    for (const auto &card : doc["cards"]) {
        INFO(card.dump());
        CHECK(card["spec_version"].get<std::string>().size() >= 3);
        CHECK(card["array"]["rows"].get<unsigned>() > 0);
        CHECK(card["counters"].contains("jobs_done"));
        for (const auto &proc : card["processes"])
            if (proc["pid"].get<int>() == child) {
                found = true;
                CHECK(card["device"] == "/dev/accel/accel1");
                CHECK(proc["busy_ns"].get<std::uint64_t>() > 0);
                // A share of the window, not the cumulative time.
                const double util = proc["utilization_percent"].get<double>();
                CHECK(util > 0.0);
                CHECK(util <= 100.0);
                CHECK(proc["cycles"].get<std::uint64_t>() > 0);
                CHECK(proc["memory_bytes"].get<std::uint64_t>() > 0);
                CHECK(proc["command"] == "test_cards");
            }
    }
    CHECK(found);
    INFO(out);
    CHECK(doc["cards"][1]["busy_ns"].get<std::uint64_t>() > 0);
}

// run-in-vm.sh (and so `make vm CARDS=4`) joins four cards by the interconnect unless told not to.
TEST_CASE("the harness joins the four cards in a 2x2 torus, every link up", "[cards][smi]") {
    int status = 0;
    const std::string out = guest::run_command(guest::tpu_smi() + " --json", status);
    REQUIRE(status == 0);
    const auto doc = nlohmann::json::parse(out);
    REQUIRE(doc["cards"].size() == kCards);
    std::set<std::string> coords;
    for (const auto &card : doc["cards"]) {
        INFO(card["interconnect"].dump());
        REQUIRE(card["interconnect"].is_object());
        CHECK(card["interconnect"]["topology"] == "torus2d");
        CHECK(card["interconnect"]["dims"] == "2x2");
        coords.insert(card["interconnect"]["coord"].get<std::string>());
        REQUIRE(card["interconnect"]["ports"].size() == 4);
        for (const auto &port : card["interconnect"]["ports"])
            CHECK(port["state"] == "up");
    }
    CHECK(coords == std::set<std::string>{"0:0", "1:0", "0:1", "1:1"});
}
