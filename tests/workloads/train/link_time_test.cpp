// SPDX-License-Identifier: MIT
// link_time_test.cpp - the modelled send time of a rank's ports in an all-reduce
// (workloads/train/parallel/link_time.hpp) on four in-process cards of a 2 x 2 torus (v5e links:
// 400 Gbit/s, 1 us a hop): the 2-D torus algorithm keeps every port of every card busy for the
// collective's whole alpha-beta time; the ring (under 4 KiB) sends on one port, the one toward
// the next card of the ring; a wrong count of cards is refused.
#include <link_time.hpp>

#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <vector>

namespace {

struct Torus {
    std::vector<tpurt::Device> devices = tpurt::Device::open_in_process_fabric(
        {.torus = true, .dim_x = 2, .dim_y = 2}, {.threads = 1});
    tpurt::Communicator comm = tpurt::Communicator::init_all(devices);
    // Per communicator rank (init_all: rank i on devices[i]).
    std::vector<tpu_train::RankCard> cards() const {
        std::vector<tpu_train::RankCard> c;
        for (const tpurt::Device &d : devices)
            c.push_back({d.info().ici.x, d.info().ici.y, "host"});
        return c;
    }
};

constexpr double alpha = 1000, beta = 8.0 / 400; // ns, ns a byte

} // namespace

TEST_CASE("the 2-D torus all-reduce keeps every port busy for its whole alpha-beta time",
          "[link-time]") {
    Torus t;
    const std::uint64_t bytes = 1 << 20;
    REQUIRE(t.comm.algorithm(bytes) == tpurt::CollectiveAlgorithm::Torus2d);
    // Four lanes, along x then y or y then x: (alpha + B/8 beta) + (alpha + B/16 beta), twice.
    const double want = 2 * ((alpha + bytes / 8.0 * beta) + (alpha + bytes / 16.0 * beta));
    for (std::uint32_t r = 0; r < 4; ++r) {
        const std::array<double, 4> ns =
            tpu_train::all_reduce_port_ns(t.comm, t.cards(), r, t.devices[r].info().ici, bytes);
        for (std::uint32_t p = 0; p < 4; ++p) {
            INFO("rank " << r << ", port " << p);
            CHECK(ns[p] == Approx(want).epsilon(1e-12));
        }
    }
}

TEST_CASE("the ring all-reduce sends on the port toward the next card of the ring", "[link-time]") {
    Torus t;
    const std::uint64_t bytes = 1024;
    REQUIRE(t.comm.algorithm(bytes) == tpurt::CollectiveAlgorithm::Ring);
    const double want = 2 * 3 * (alpha + bytes / 4.0 * beta);
    // The ring (0,0) (1,0) (1,1) (0,1): card 0 sends along +x (port 0), card 2 at (0,1) to
    // (0,0) along +y (port 2, the lower of the two ports that lead there).
    const std::array<double, 4> first =
        tpu_train::all_reduce_port_ns(t.comm, t.cards(), 0, t.devices[0].info().ici, bytes);
    CHECK(first == std::array<double, 4>{want, 0, 0, 0});
    const std::array<double, 4> third =
        tpu_train::all_reduce_port_ns(t.comm, t.cards(), 2, t.devices[2].info().ici, bytes);
    CHECK(third == std::array<double, 4>{0, 0, want, 0});
}

TEST_CASE("the link time model refuses cards that are not one a rank", "[link-time]") {
    Torus t;
    std::vector<tpu_train::RankCard> three = t.cards();
    three.pop_back();
    CHECK_THROWS_AS(
        tpu_train::all_reduce_port_ns(t.comm, three, 0, t.devices[0].info().ici, 1 << 20),
        tpurt::Error);
}
