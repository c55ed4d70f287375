// SPDX-License-Identifier: MIT
// test_collectives - tpurt::Communicator on the cards of one guest joined by the interconnect
// through tpu.ko (run-in-vm.sh --cards 4 --ici torus2d: a 2 x 2 torus; vm_collectives): every
// collective (all-reduce, reduce-scatter, all-gather, broadcast, all-to-all), dtype (fp32, bf16,
// int32) and reduction (sum, max, min) on 2 and 4 cards from 8 bytes to 4 MiB, by the algorithm
// the communicator picks (the bidirectional ring on two cards, the 2-D torus on four) and by
// the ring and the bidirectional ring forced on four, with 0 wrong elements against the golden
// model's order for the algorithm and the same bits on a second run; send-recv
// between neighbours both ways at once; a broadcast whose root never takes part ends every other
// rank's collective with an error at the driver's job timeout (tpu.ko job_timeout_ms=1000)
// instead of hanging, and a new communicator then works; so does one after an all-reduce that
// left a message on the card that never took part (spec 2.2's RECV SKIP_STALE drops it).
#include <tpurt/collectives.hpp>
#include <tpurt/golden/reference_collectives.hpp>
#include <tpurt/testing/comm_ranks.hpp>
#include <tpurt/testing/raw_values.hpp>
#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::RawValues;
using tpurt::ReduceKind;
using tpurt::Tensor;

// The cards on a fabric, in coordinate order (y, then x).
std::vector<tpurt::Device> fabric_cards() {
    std::vector<tpurt::Device> cards;
    const auto list = tpurt::Device::list();
    for (unsigned i = 0; i < list.size(); ++i)
        if (list[i].ici.on_fabric())
            cards.push_back(tpurt::Device::open(i));
    std::sort(cards.begin(), cards.end(), [](const tpurt::Device &a, const tpurt::Device &b) {
        const tpurt::IciPlace &p = a.info().ici, &q = b.info().ici;
        return p.y != q.y ? p.y < q.y : p.x < q.x;
    });
    return cards;
}

using Ranks = tpurt::CommRanks;

// A new communicator over every card all-reduces ones into their count, after a failure.
void check_new_communicator_works(const std::vector<tpurt::Device> &cards) {
    Ranks ranks(cards);
    tpurt::Communicator fresh = tpurt::Communicator::init_all(ranks.devices);
    std::vector<Tensor> t;
    for (auto &d : ranks.devices)
        t.push_back(Tensor::from_host<float>(d, std::vector<float>(4096, 1.0f), {4096}));
    fresh.all_reduce(ranks.stream_ptrs, t, t, ReduceKind::Sum);
    const float n = float(cards.size());
    for (std::size_t r = 0; r < cards.size(); ++r) {
        ranks.streams[r]->synchronize();
        CHECK(t[r].to_vector<float>() == std::vector<float>(4096, n));
    }
    CHECK_FALSE(fresh.async_error());
}

} // namespace

TEST_CASE("every collective, dtype and op on 2 and 4 cards, bit for bit, twice the same",
          "[collectives]") {
    std::vector<tpurt::Device> cards = fabric_cards();
    REQUIRE(cards.size() == 4);
    using Algorithm = tpurt::CollectiveAlgorithm;
    for (const auto &[p, algorithm] :
         {std::pair{2u, Algorithm::Auto}, std::pair{4u, Algorithm::Auto},
          std::pair{4u, Algorithm::Ring}, std::pair{4u, Algorithm::BidirectionalRing}}) {
        // (0,0) and (1,0) are neighbours (over two links); the four make the ring (0,0) (1,0)
        // (1,1) (0,1) and the whole torus. Auto: the ring at 8 bytes, then the bidirectional
        // ring on two cards and the torus's four lanes on four; the others forced, to 12 KiB.
        Ranks ranks(std::vector<tpurt::Device>(cards.begin(), cards.begin() + p));
        tpurt::Communicator comm =
            tpurt::Communicator::init_all(ranks.devices, {.algorithm = algorithm});
        std::mt19937 rng(p);
        const bool forced = algorithm != Algorithm::Auto;
        for (const std::size_t bytes : {std::size_t{8}, std::size_t{3000 * 4 + 8},
                                        forced ? std::size_t{0} : std::size_t{4} << 20})
            for (const std::string what :
                 {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all"})
                for (const DType type : {DType::Fp32, DType::Bf16, DType::Int32})
                    for (const ReduceKind op :
                         {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min}) {
                        const bool reduces = what == "all_reduce" || what == "reduce_scatter";
                        if ((!reduces && op != ReduceKind::Sum) || bytes == 0)
                            continue;
                        // `bytes` is the size of the tensors on a rank (at least an element
                        // per rank).
                        const std::size_t total = bytes / element_size(type);
                        const bool split = what == "reduce_scatter" || what == "all_gather" ||
                                           what == "all_to_all";
                        const std::size_t count =
                            split ? std::max<std::size_t>(1, total / p) : total;
                        const bool whole = what == "reduce_scatter" || what == "all_to_all";
                        const std::size_t in_count = whole ? count * p : count;
                        std::vector<RawValues> in;
                        std::vector<Tensor> send, recv;
                        for (std::uint32_t r = 0; r < p; ++r) {
                            in.push_back(tpurt::random_raw_values(type, in_count, rng));
                            send.push_back(tpurt::raw_tensor(ranks.devices[r], type, in.back()));
                            const bool gathers = what == "all_gather" || what == "all_to_all";
                            const std::size_t out = gathers ? count * p : count;
                            recv.push_back(Tensor::empty(ranks.devices[r], type, {out}));
                        }
                        const auto got = ranks.run(comm, what, op, send, recv);
                        const auto again = ranks.run(comm, what, op, send, recv);
                        const Algorithm used =
                            comm.algorithm(std::max(in_count, got[0].size()) * element_size(type));
                        for (std::uint32_t r = 0; r < p; ++r) {
                            INFO(what << " " << tpurt::dtype_name(type) << " op " << int(op) << ", "
                                      << bytes << " bytes on " << p << " cards by "
                                      << tpurt::algorithm_name(used) << ", rank " << r);
                            RawValues want;
                            if (what == "all_reduce")
                                want = tpurt::reference_all_reduce(type, op, in, used,
                                                                   comm.shape(used));
                            else if (what == "reduce_scatter")
                                want = tpurt::reference_reduce_scatter(type, op, in, used,
                                                                       comm.shape(used), r);
                            else if (what == "all_gather")
                                for (const RawValues &v : in)
                                    want.insert(want.end(), v.begin(), v.end());
                            else if (what == "all_to_all")
                                want = tpurt::reference_all_to_all(in, r);
                            else
                                want = in[p - 1];
                            REQUIRE(got[r].size() == want.size());
                            std::size_t wrong = 0;
                            for (std::size_t i = 0; i < want.size(); ++i)
                                wrong += got[r][i] != want[i];
                            CHECK(wrong == 0);
                            CHECK(got[r] == again[r]);
                        }
                    }
        CHECK_FALSE(comm.async_error());
    }
}

TEST_CASE("send-recv between ring neighbours both ways at once on 2 and 4 cards", "[collectives]") {
    std::vector<tpurt::Device> cards = fabric_cards();
    REQUIRE(cards.size() == 4);
    for (const std::uint32_t p : {2u, 4u}) {
        Ranks ranks(std::vector<tpurt::Device>(cards.begin(), cards.begin() + p));
        tpurt::Communicator comm = tpurt::Communicator::init_all(ranks.devices);
        const std::vector<std::uint32_t> &position = comm.ring_positions();
        std::vector<std::uint32_t> rank_at(p);
        for (std::uint32_t r = 0; r < p; ++r)
            rank_at[position[r]] = r;
        std::mt19937 rng(p);
        // 300,000 int32: more than a receive buffer (1 MiB), sent and received in pieces.
        for (const int shift : {1, -1}) {
            std::vector<RawValues> in;
            std::vector<Tensor> send, recv;
            std::vector<std::uint32_t> to, from;
            for (std::uint32_t r = 0; r < p; ++r) {
                in.push_back(tpurt::random_raw_values(DType::Int32, 300000, rng));
                send.push_back(tpurt::raw_tensor(ranks.devices[r], DType::Int32, in[r]));
                recv.push_back(Tensor::empty(ranks.devices[r], DType::Int32, {300000}));
                to.push_back(rank_at[(position[r] + p + shift) % p]);
                from.push_back(rank_at[(position[r] + p - shift) % p]);
            }
            comm.send_recv(ranks.stream_ptrs, send, recv, to, from);
            ranks.synchronize();
            for (std::uint32_t r = 0; r < p; ++r) {
                INFO(p << " cards, shift " << shift << ", rank " << r << " from " << from[r]);
                CHECK(tpurt::read_raw(recv[r]) == in[from[r]]);
            }
        }
        CHECK_FALSE(comm.async_error());
    }
}

TEST_CASE("a broadcast whose root never takes part fails on every other rank, and a new "
          "communicator works",
          "[collectives][failure]") {
    std::vector<tpurt::Device> cards = fabric_cards();
    REQUIRE(cards.size() == 4);
    // One communicator per card, as one process per card would make them.
    const tpurt::CommId id = tpurt::CommId::make();
    std::vector<tpurt::Communicator> comms;
    std::vector<std::uint32_t> rank_of;
    for (auto &card : cards) {
        rank_of.push_back(tpurt::Communicator::fabric_rank(card.info()));
        comms.push_back(tpurt::Communicator::init_rank(card, 4, id, rank_of.back()));
    }
    // Cards 1..3 take part; card 0 (rank 0, the root) never calls: each rank's RECV waits
    // until tpu.ko's job timeout resets it (nothing was sent, so no card is left holding a
    // message of the failed collective).
    std::vector<std::string> errors(4);
    std::vector<std::thread> threads;
    for (std::size_t c = 1; c < 4; ++c)
        threads.emplace_back([&, c] {
            tpurt::Stream stream(cards[c]);
            Tensor t = Tensor::empty(cards[c], DType::Fp32, {1024});
            tpurt::Stream *s = &stream;
            try {
                comms[c].broadcast({&s, 1}, {&t, 1}, {&t, 1}, 0);
                stream.synchronize();
            } catch (const tpurt::Error &e) {
                errors[c] = e.what();
            }
        });
    for (auto &t : threads)
        t.join();
    for (std::size_t c = 1; c < 4; ++c) {
        INFO("card " << c << " (rank " << rank_of[c] << ")");
        CHECK_THAT(errors[c], Catch::Contains("DRM_TPU_JOB_TIMEOUT"));
        CHECK(comms[c].async_error());
    }

    check_new_communicator_works(cards);
}

TEST_CASE("an all-reduce that left a message on a card that never took part does not stop a new "
          "communicator",
          "[collectives][failure]") {
    std::vector<tpurt::Device> cards = fabric_cards();
    REQUIRE(cards.size() == 4);
    const tpurt::CommId id = tpurt::CommId::make();
    std::vector<tpurt::Communicator> comms;
    for (auto &card : cards)
        comms.push_back(tpurt::Communicator::init_rank(
            card, 4, id, tpurt::Communicator::fabric_rank(card.info())));
    // Cards 0..2 take part, card 3 never calls: its ring predecessor's first piece waits in
    // card 3's receive buffer, where nothing behind tpu.ko takes it out (only a reset would),
    // and the three time out.
    std::vector<std::string> errors(3);
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < 3; ++c)
        threads.emplace_back([&, c] {
            tpurt::Stream stream(cards[c]);
            Tensor t = Tensor::from_host<float>(cards[c], std::vector<float>(4096, 1.0f), {4096});
            tpurt::Stream *s = &stream;
            try {
                comms[c].all_reduce({&s, 1}, {&t, 1}, {&t, 1}, ReduceKind::Sum);
                stream.synchronize();
            } catch (const tpurt::Error &e) {
                errors[c] = e.what();
            }
        });
    for (auto &t : threads)
        t.join();
    for (std::size_t c = 0; c < 3; ++c) {
        INFO("card " << c);
        CHECK_THAT(errors[c], Catch::Contains("DRM_TPU_JOB_TIMEOUT"));
    }

    check_new_communicator_works(cards);
}
