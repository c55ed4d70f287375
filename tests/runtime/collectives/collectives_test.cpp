// SPDX-License-Identifier: MIT
// collectives_test.cpp - tpurt::Communicator on in-process cards joined by a fabric
// (Device::open_in_process_fabric()): all-reduce (sum, max, min; fp32, bf16, int32),
// reduce-scatter, all-gather, broadcast and all-to-all on rings of 2 and 3 cards and 2 x 2 and
// 2 x 3 tori by the ring, bidirectional-ring and 2-D torus algorithms, and send-recv between
// neighbours both ways at once, at sizes that leave chunks empty, uneven and cut into several
// pieces, checked bit for bit against a CPU reference that reduces in each algorithm's
// documented order (golden/reference_collectives.hpp) and identical on a second run; the
// algorithm chosen by size and topology; then failure: a link down, a rank that never takes
// part and an abort end every rank's collective with an error, and a new communicator works.
#include <tpurt/collectives.hpp>
#include <tpurt/golden/reference_collectives.hpp>
#include <tpurt/testing/comm_ranks.hpp>
#include <tpurt/testing/raw_values.hpp>
#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::ReduceKind;
using tpurt::Tensor;

using Values = tpurt::RawValues;
using Ranks = tpurt::CommRanks;

// Runs the collective `what` on `count` elements and returns each rank's output.
std::vector<Values> run(tpurt::Communicator &comm, Ranks &ranks, const std::string &what,
                        DType type, ReduceKind op, std::size_t count,
                        const std::vector<Values> &in) {
    std::vector<Tensor> send, recv;
    const std::uint32_t p = comm.nranks();
    for (std::uint32_t r = 0; r < p; ++r) {
        send.push_back(tpurt::raw_tensor(ranks.devices[r], type, in[r]));
        const std::size_t out = what == "all_gather" || what == "all_to_all" ? count * p : count;
        recv.push_back(Tensor::empty(ranks.devices[r], type, {out}));
    }
    return ranks.run(comm, what, op, send, recv);
}

// What rank r must hold, in the reduction order of the algorithm the communicator runs for a
// buffer of `bytes`.
Values expected(const tpurt::Communicator &comm, const std::string &what, DType type, ReduceKind op,
                const std::vector<Values> &in, std::uint32_t r, std::uint64_t bytes) {
    const std::uint32_t p = comm.nranks();
    const tpurt::CollectiveAlgorithm a = comm.algorithm(bytes);
    Values want;
    if (what == "all_reduce") {
        want = tpurt::reference_all_reduce(type, op, in, a, comm.shape(a));
    } else if (what == "reduce_scatter") {
        want = tpurt::reference_reduce_scatter(type, op, in, a, comm.shape(a), r);
    } else if (what == "all_gather") {
        for (std::uint32_t k = 0; k < p; ++k)
            want.insert(want.end(), in[k].begin(), in[k].end());
    } else if (what == "all_to_all") {
        want = tpurt::reference_all_to_all(in, r);
    } else {
        want = in[p - 1];
    }
    return want;
}

using Algorithm = tpurt::CollectiveAlgorithm;
constexpr Algorithm ring = Algorithm::Ring, bidir = Algorithm::BidirectionalRing,
                    torus = Algorithm::Torus2d, hierarchical = Algorithm::Hierarchical;

// Every collective, dtype and reduction on `count` elements a rank by `algorithm` (Auto: the
// communicator's choice).
void check_collective(std::vector<tpurt::Device> devices, std::size_t count, Algorithm algorithm) {
    Ranks ranks(std::move(devices));
    tpurt::Communicator comm =
        tpurt::Communicator::init_all(ranks.devices, {.algorithm = algorithm});
    const std::uint32_t p = comm.nranks();
    std::mt19937 rng(p * 1000 + static_cast<unsigned>(count));
    for (const std::string what :
         {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all"})
        for (const DType type : {DType::Fp32, DType::Bf16, DType::Int32})
            for (const ReduceKind op : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min}) {
                const bool reduces = what == "all_reduce" || what == "reduce_scatter";
                if (!reduces && op != ReduceKind::Sum)
                    continue;
                const std::size_t in_count =
                    what == "reduce_scatter" || what == "all_to_all" ? count * p : count;
                std::vector<Values> in;
                for (std::uint32_t r = 0; r < p; ++r)
                    in.push_back(tpurt::random_raw_values(type, in_count, rng));
                const std::vector<Values> got = run(comm, ranks, what, type, op, count, in);
                const std::vector<Values> again = run(comm, ranks, what, type, op, count, in);
                const std::uint64_t bytes =
                    std::max(in_count, got[0].size()) * tpurt::element_size(type);
                for (std::uint32_t r = 0; r < p; ++r) {
                    INFO(what << " " << tpurt::dtype_name(type) << " op " << int(op) << " of "
                              << count << " on " << p << " cards by "
                              << tpurt::algorithm_name(comm.algorithm(bytes)) << ", rank " << r);
                    const Values want = expected(comm, what, type, op, in, r, bytes);
                    std::size_t wrong = 0;
                    for (std::size_t i = 0; i < want.size(); ++i)
                        wrong += got[r][i] != want[i];
                    CHECK(wrong == 0);
                    CHECK(got[r] == again[r]);
                }
            }
}

} // namespace

TEST_CASE("collectives on two in-process cards match the reference bit for bit",
          "[in-process][collectives]") {
    // 1 element: a chunk is empty; 1000: chunks of 500; 70000 fp32: pieces of 16 KiB (credits 4).
    // Both engine modes: the same bits. The ring, the bidirectional ring, and Auto's choice.
    for (const bool cycle_accurate : {false, true})
        for (const std::size_t count : {1, 1000, 70000})
            for (const Algorithm algorithm : {ring, bidir, Algorithm::Auto})
                check_collective(tpurt::Device::open_in_process_fabric(
                                     {.dim_x = 2, .credits = 4},
                                     {.threads = 1, .cycle_accurate = cycle_accurate}),
                                 count, algorithm);
}

TEST_CASE("collectives on a ring of three and a 2 x 2 torus match the reference bit for bit",
          "[in-process][collectives]") {
    for (const std::size_t count : {5, 20000}) {
        for (const Algorithm algorithm : {ring, bidir})
            check_collective(
                tpurt::Device::open_in_process_fabric({.dim_x = 3, .credits = 2}, {.threads = 1}),
                count, algorithm);
        for (const Algorithm algorithm : {ring, bidir, torus})
            check_collective(
                tpurt::Device::open_in_process_fabric(
                    {.torus = true, .dim_x = 2, .dim_y = 2, .credits = 8}, {.threads = 1}),
                count, algorithm);
    }
}

TEST_CASE("hierarchical collectives on a 2 x 2 torus with slower y links match the reference",
          "[in-process][collectives]") {
    // y links of 100 Gbit/s and 5 us a hop (spec 2.4: a pod's links between servers): Auto
    // takes the hierarchical algorithm from 4 KiB, and so does the option, both engine modes.
    for (const bool cycle_accurate : {false, true})
        for (const Algorithm algorithm : {hierarchical, Algorithm::Auto})
            check_collective(tpurt::Device::open_in_process_fabric(
                                 {.torus = true,
                                  .dim_x = 2,
                                  .dim_y = 2,
                                  .credits = 8,
                                  .y_link_gbps = 100,
                                  .y_hop_ns = 5000},
                                 {.threads = 1, .cycle_accurate = cycle_accurate}),
                             cycle_accurate ? 3000 : 20000, algorithm);
}

TEST_CASE("collectives on a 2 x 3 torus (two lanes) match the reference bit for bit",
          "[in-process][collectives]") {
    for (const std::size_t count : {7, 3000})
        check_collective(tpurt::Device::open_in_process_fabric(
                             {.torus = true, .dim_x = 2, .dim_y = 3, .credits = 2}, {.threads = 1}),
                         count, torus);
}

TEST_CASE("a communicator picks its algorithm by size and topology, or as forced",
          "[in-process][collectives]") {
    auto square = tpurt::Device::open_in_process_fabric({.torus = true, .dim_x = 2, .dim_y = 2});
    tpurt::Communicator comm = tpurt::Communicator::init_all(square);
    CHECK(comm.algorithm(4095) == ring);
    CHECK(comm.algorithm(4096) == torus);
    CHECK(tpurt::Communicator::init_all({square[0], square[1]}).algorithm(1 << 20) == bidir);
    CHECK(tpurt::Communicator::init_all(square, {.algorithm = ring}).algorithm(1 << 20) == ring);
    auto four = tpurt::Device::open_in_process_fabric({.dim_x = 4});
    CHECK(tpurt::Communicator::init_all(four).algorithm(1 << 20) == bidir);
    // Cards 0 and 1 of a ring of four share one link: one direction each way, no second lane.
    CHECK(tpurt::Communicator::init_all({four[0], four[1]}).algorithm(1 << 20) == ring);
    CHECK_THROWS_AS(tpurt::Communicator::init_all({four[0], four[1]}, {.algorithm = bidir}),
                    tpurt::Error);
    CHECK_THROWS_AS(tpurt::Communicator::init_all(four, {.algorithm = torus}), tpurt::Error);
    CHECK_THROWS_AS(tpurt::Communicator::init_all(four, {.algorithm = hierarchical}), tpurt::Error);
    // Slower y links (spec 2.4): hierarchical; y links as fast as x: the torus's four lanes.
    auto pod = tpurt::Device::open_in_process_fabric(
        {.torus = true, .dim_x = 2, .dim_y = 2, .y_link_gbps = 100});
    CHECK(tpurt::Communicator::init_all(pod).algorithm(1 << 20) == hierarchical);
    CHECK(tpurt::Communicator::init_all(pod).algorithm(4095) == ring);
    auto alike = tpurt::Device::open_in_process_fabric(
        {.torus = true, .dim_x = 2, .dim_y = 2, .y_link_gbps = 400, .y_hop_ns = 1000});
    CHECK(tpurt::Communicator::init_all(alike).algorithm(1 << 20) == torus);
    CHECK(tpurt::algorithm_named("hierarchical") == hierarchical);
    CHECK_FALSE(tpurt::algorithm_named("tree").has_value());
}

TEST_CASE("a communicator's ring follows the links", "[in-process][collectives]") {
    auto torus = tpurt::Device::open_in_process_fabric({.torus = true, .dim_x = 2, .dim_y = 2});
    // Cards 0..3 at (0,0) (1,0) (0,1) (1,1): the ring (0,0) (1,0) (1,1) (0,1).
    tpurt::Communicator comm = tpurt::Communicator::init_all(torus);
    CHECK(comm.ring_positions() == std::vector<std::uint32_t>{0, 1, 3, 2});
    CHECK(tpurt::Communicator::fabric_rank(torus[3].info()) == 2);
    CHECK_THROWS_AS(tpurt::Communicator::init_all({torus[0], torus[0]}), tpurt::Error);
    auto ring = tpurt::Device::open_in_process_fabric({.dim_x = 4});
    // Cards 0 and 2 of a ring of four are not neighbours.
    CHECK_THROWS_AS(tpurt::Communicator::init_all({ring[0], ring[2]}), tpurt::Error);
}

namespace {

// Every rank sends `count` elements to the rank `shift` ring positions on (1: the next, -1: the
// previous) and receives from the one `shift` before it; returns whether each got its sender's.
void check_shift(std::vector<tpurt::Device> devices, DType type, std::size_t count, int shift) {
    Ranks ranks(std::move(devices));
    tpurt::Communicator comm = tpurt::Communicator::init_all(ranks.devices);
    const std::uint32_t p = comm.nranks();
    const std::vector<std::uint32_t> &position = comm.ring_positions();
    std::vector<std::uint32_t> rank_at(p);
    for (std::uint32_t r = 0; r < p; ++r)
        rank_at[position[r]] = r;
    std::mt19937 rng(p + static_cast<unsigned>(count));
    std::vector<Values> in;
    std::vector<Tensor> send, recv;
    std::vector<std::uint32_t> to, from;
    for (std::uint32_t r = 0; r < p; ++r) {
        in.push_back(tpurt::random_raw_values(type, count, rng));
        send.push_back(tpurt::raw_tensor(ranks.devices[r], type, in[r]));
        recv.push_back(Tensor::empty(ranks.devices[r], type, {count}));
        to.push_back(rank_at[(position[r] + p + shift) % p]);
        from.push_back(rank_at[(position[r] + p - shift) % p]);
    }
    comm.send_recv(ranks.stream_ptrs, send, recv, to, from);
    ranks.synchronize();
    for (std::uint32_t r = 0; r < p; ++r) {
        INFO(tpurt::dtype_name(type) << " x " << count << " shifted by " << shift << " on " << p
                                     << " cards, rank " << r << " from " << from[r]);
        CHECK(tpurt::read_raw(recv[r]) == in[from[r]]);
    }
}

} // namespace

TEST_CASE("send-recv between ring neighbours, both ways at once, of any size",
          "[in-process][collectives]") {
    // 30000 int32 = 120,000 bytes: 15 pieces of a receive buffer of 2 x 4 KiB, sent and received
    // alternately by every rank; 3 bf16 = 6 bytes.
    for (const int shift : {1, -1})
        for (const auto &[type, count] : {std::pair{DType::Int32, std::size_t{30000}},
                                          std::pair{DType::Bf16, std::size_t{3}}}) {
            check_shift(
                tpurt::Device::open_in_process_fabric({.dim_x = 2, .credits = 2}, {.threads = 1}),
                type, count, shift);
            check_shift(
                tpurt::Device::open_in_process_fabric({.dim_x = 3, .credits = 2}, {.threads = 1}),
                type, count, shift);
            check_shift(tpurt::Device::open_in_process_fabric(
                            {.torus = true, .dim_x = 2, .dim_y = 2, .credits = 2}, {.threads = 1}),
                        type, count, shift);
        }
    // One way only: rank 0 to rank 1, the others idle; and the refusals.
    Ranks ranks(tpurt::Device::open_in_process_fabric({.dim_x = 4}, {.threads = 1}));
    tpurt::Communicator comm = tpurt::Communicator::init_all(ranks.devices);
    const auto none = tpurt::Communicator::none;
    std::vector<Tensor> t;
    for (auto &d : ranks.devices)
        t.push_back(Tensor::from_host<float>(d, std::vector<float>{float(t.size()) + 1, -1}, {2}));
    const std::vector<std::uint32_t> to{1, none, none, none}, from{none, 0, none, none};
    comm.send_recv(ranks.stream_ptrs, t, t, to, from);
    ranks.synchronize();
    CHECK(t[1].to_vector<float>() == std::vector<float>{1, -1});
    CHECK(t[2].to_vector<float>() == std::vector<float>{3, -1});
    // Cards 0 and 2 of a ring of four are not neighbours; a rank cannot send to itself.
    const std::vector<std::uint32_t> far{2, none, none, none}, nobody(4, none);
    CHECK_THROWS_WITH(comm.send_recv(ranks.stream_ptrs, t, t, far, nobody),
                      Catch::Contains("next to it on the ring"));
    const std::vector<std::uint32_t> self{0, none, none, none};
    CHECK_THROWS_AS(comm.send_recv(ranks.stream_ptrs, t, t, self, nobody), tpurt::Error);
    CHECK_FALSE(comm.async_error());
}

namespace {

// An fp32 all-reduce sum of each rank's `value` (count elements) on the ranks' streams: the
// per-rank results, or the errors each stream's synchronize() threw.
struct Outcome {
    std::vector<float> first; // element 0 of each rank's result
    std::vector<std::string> errors;
};

Outcome all_reduce_ones(tpurt::Communicator &comm, Ranks &ranks, std::size_t count) {
    std::vector<Tensor> t;
    for (auto &d : ranks.devices)
        t.push_back(Tensor::from_host<float>(d, std::vector<float>(count, 1.0f), {count}));
    comm.all_reduce(ranks.stream_ptrs, t, t, ReduceKind::Sum);
    Outcome out;
    for (std::size_t r = 0; r < ranks.streams.size(); ++r) {
        try {
            ranks.streams[r]->synchronize();
            out.errors.emplace_back();
        } catch (const tpurt::Error &e) {
            out.errors.emplace_back(e.what());
        }
        out.first.push_back(t[r].to_vector<float>()[0]);
    }
    return out;
}

// A new communicator of the two cards, one process per card as with init_rank: each rank
// all-reduces ones from a thread of its own, and both hold 2.
void check_new_pair_works(std::vector<tpurt::Device> &devices) {
    const tpurt::CommId id = tpurt::CommId::make();
    tpurt::Communicator again0 = tpurt::Communicator::init_rank(devices[0], 2, id, 0);
    tpurt::Communicator again1 = tpurt::Communicator::init_rank(devices[1], 2, id, 1);
    Ranks rank0({devices[0]}), rank1({devices[1]});
    Outcome r1;
    std::thread other([&] { r1 = all_reduce_ones(again1, rank1, 1000); });
    const Outcome r0 = all_reduce_ones(again0, rank0, 1000);
    other.join();
    INFO(r0.errors[0] << r1.errors[0]);
    CHECK(r0.errors[0].empty());
    CHECK(r1.errors[0].empty());
    CHECK(r0.first[0] == 2.0f);
    CHECK(r1.first[0] == 2.0f);
}

} // namespace

TEST_CASE("a link down ends every rank's collective with an error, and a new communicator works",
          "[in-process][collectives]") {
    Ranks ranks(tpurt::Device::open_in_process_fabric({.dim_x = 4, .credits = 2},
                                                      {.threads = 1, .job_timeout_ms = 60000}));
    tpurt::Communicator comm = tpurt::Communicator::init_all(ranks.devices);
    ranks.devices[1].set_link(0, false); // the link between cards 1 and 2
    const Outcome failed = all_reduce_ones(comm, ranks, 100000);
    for (std::size_t r = 0; r < 4; ++r) {
        INFO("rank " << r);
        CHECK_THAT(failed.errors[r], Catch::StartsWith("all_reduce"));
    }
    REQUIRE(comm.async_error());
    CHECK_THROWS_WITH(std::rethrow_exception(comm.async_error()), Catch::Contains("LINK_DOWN"));
    // The failed communicator refuses more work at once.
    CHECK_THROWS_WITH(all_reduce_ones(comm, ranks, 10), Catch::Contains("LINK_DOWN"));

    ranks.devices[1].set_link(0, true);
    tpurt::Communicator fresh = tpurt::Communicator::init_all(ranks.devices);
    const Outcome ok = all_reduce_ones(fresh, ranks, 100000);
    for (std::size_t r = 0; r < 4; ++r) {
        INFO("rank " << r << ": " << ok.errors[r]);
        CHECK(ok.errors[r].empty());
        CHECK(ok.first[r] == 4.0f);
    }
    CHECK_FALSE(fresh.async_error());
}

TEST_CASE("a message a failed collective left on a card does not stop the next communicator",
          "[in-process][collectives]") {
    auto devices =
        tpurt::Device::open_in_process_fabric({.dim_x = 2}, {.threads = 1, .job_timeout_ms = 2000});
    const tpurt::CommId id = tpurt::CommId::make();
    tpurt::Communicator comm0 = tpurt::Communicator::init_rank(devices[0], 2, id, 0);
    tpurt::Communicator comm1 = tpurt::Communicator::init_rank(devices[1], 2, id, 1);
    Ranks rank0({devices[0]});
    // Rank 1 never calls: rank 0's first piece waits on card 1, whose communicator is not
    // aborted (as behind tpu.ko, where nothing empties a card's receive buffers but a reset).
    CHECK_THAT(all_reduce_ones(comm0, rank0, 1000).errors[0],
               Catch::Contains("DRM_TPU_JOB_TIMEOUT"));

    // A new communicator's first RECV on each port drops it (spec 2.2, TPU_F_LINK_SKIP_STALE).
    check_new_pair_works(devices);
}

TEST_CASE("a rank that never takes part ends its peers' collective at the job timeout, abort "
          "ends one at once",
          "[in-process][collectives]") {
    // The job timeout is tpu.ko's test setting (job_timeout_ms=1000), doubled: the new
    // communicator's two ranks start on two threads of a loaded host.
    auto devices =
        tpurt::Device::open_in_process_fabric({.dim_x = 2}, {.threads = 1, .job_timeout_ms = 2000});
    const tpurt::CommId id = tpurt::CommId::make();
    // One process per card, as with init_rank across processes: rank r is the r-th card.
    tpurt::Communicator comm0 = tpurt::Communicator::init_rank(devices[0], 2, id, 0);
    tpurt::Communicator comm1 = tpurt::Communicator::init_rank(devices[1], 2, id, 1);
    CHECK_THROWS_AS(tpurt::Communicator::init_rank(devices[1], 2, id, 0), tpurt::Error);
    Ranks rank0({devices[0]});
    const Outcome timed_out = all_reduce_ones(comm0, rank0, 1000); // rank 1 never calls
    CHECK_THAT(timed_out.errors[0], Catch::Contains("DRM_TPU_JOB_TIMEOUT"));
    CHECK(comm0.async_error());
    // Every rank aborts the failed communicator (rank 1's card holds rank 0's message).
    comm1.abort();

    // Both ranks take part in a new communicator.
    check_new_pair_works(devices);

    // A rank waiting for ever (no job timeout) is ended by abort().
    auto patient =
        tpurt::Device::open_in_process_fabric({.dim_x = 2}, {.threads = 1, .job_timeout_ms = 0});
    tpurt::Communicator lonely =
        tpurt::Communicator::init_rank(patient[0], 2, tpurt::CommId::make(), 0);
    Ranks waiting({patient[0]});
    std::atomic<bool> ended = false;
    std::thread aborter([&] {
        while (!ended) {
            lonely.abort();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    // Aborted before it is queued, the call throws; while it runs, its stream reports it.
    std::string error;
    try {
        error = all_reduce_ones(lonely, waiting, 1000).errors[0];
    } catch (const tpurt::Error &e) {
        error = e.what();
    }
    ended = true;
    aborter.join();
    CHECK_THAT(error, Catch::Contains("abort", Catch::CaseSensitive::No));
}

TEST_CASE("a collective on a capturing stream is refused for every rank, and nothing is queued",
          "[in-process][collectives]") {
    Ranks ranks(tpurt::Device::open_in_process_fabric({.dim_x = 2}, {.threads = 1}));
    tpurt::Communicator comm = tpurt::Communicator::init_all(ranks.devices);
    std::mt19937 rng(5);
    std::vector<Tensor> send, recv;
    for (std::size_t r = 0; r < 2; ++r) {
        send.push_back(tpurt::raw_tensor(ranks.devices[r], DType::Fp32,
                                         tpurt::random_raw_values(DType::Fp32, 64, rng)));
        recv.push_back(Tensor::empty(ranks.devices[r], DType::Fp32, {64}));
    }
    ranks.streams[1]->begin_capture();
    CHECK_THROWS_WITH(comm.all_reduce(ranks.stream_ptrs, send, recv, ReduceKind::Sum),
                      Catch::Contains("all_reduce cannot be captured"));
    CHECK_THROWS_WITH(ranks.streams[1]->end_capture(), Catch::Contains("nothing was captured"));
    // Rank 0 queued nothing it would wait on: the communicator still works.
    ranks.synchronize();
    CHECK_FALSE(comm.async_error());
    CHECK(ranks.run(comm, "all_reduce", ReduceKind::Sum, send, recv).size() == 2);
}
