// SPDX-License-Identifier: MIT
// perf_run.cpp - running, timing and checking one row of tpu-collectives-perf (perf_run.hpp).
#include "perf_run.hpp"

#include <tpurt/profile.hpp>
#include <tpurt/testing/raw_values.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>

namespace tpu::bench {

namespace {

using tpurt::RawValues;
using tpurt::Tensor;

// What a rank's output holds before a run: no result has these bits in every element.
constexpr std::uint32_t poison = 0xffffffffu;

void launch(tpurt::Communicator &comm, tpurt::CommRanks &ranks, CollectiveOp op,
            std::vector<Tensor> &send, std::vector<Tensor> &recv) {
    switch (op) {
    case CollectiveOp::AllReduce:
        return comm.all_reduce(ranks.stream_ptrs, send, recv, tpurt::ReduceKind::Sum);
    case CollectiveOp::ReduceScatter:
        return comm.reduce_scatter(ranks.stream_ptrs, send, recv, tpurt::ReduceKind::Sum);
    case CollectiveOp::AllGather:
        return comm.all_gather(ranks.stream_ptrs, send, recv);
    case CollectiveOp::Broadcast:
        return comm.broadcast(ranks.stream_ptrs, send, recv, 0);
    case CollectiveOp::AllToAll:
        return comm.all_to_all(ranks.stream_ptrs, send, recv);
    }
}

std::uint64_t count_wrong(const std::vector<Tensor> &recv, const std::vector<RawValues> &want) {
    std::uint64_t wrong = 0;
    for (std::size_t r = 0; r < recv.size(); ++r) {
        const RawValues got = tpurt::read_raw(recv[r]);
        for (std::size_t i = 0; i < want[r].size(); ++i)
            wrong += got[i] != want[r][i];
    }
    return wrong;
}

} // namespace

CollectiveBench::CollectiveBench(tpurt::CommRanks &ranks, tpurt::Communicator &comm,
                                 tpurt::DType type, std::uint64_t max_bytes, unsigned seed)
    : ranks_(ranks), comm_(comm), type_(type) {
    std::mt19937 rng(seed);
    for (std::size_t r = 0; r < ranks.devices.size(); ++r)
        data_.push_back(tpurt::random_raw_values(type, max_bytes / element_size(type), rng));
    tpurt::profiler::start();
}

std::vector<RawValues> CollectiveBench::inputs(std::uint64_t count) const {
    std::vector<RawValues> in;
    for (const RawValues &all : data_)
        in.emplace_back(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count));
    return in;
}

std::vector<RawValues> CollectiveBench::expected(CollectiveOp op, const std::vector<RawValues> &in,
                                                 std::uint64_t bytes) const {
    const std::size_t p = in.size();
    const tpurt::CollectiveAlgorithm algorithm = comm_.algorithm(bytes);
    const tpurt::CommShape shape = comm_.shape(algorithm);
    std::vector<RawValues> want(p);
    for (std::size_t r = 0; r < p; ++r) {
        switch (op) {
        case CollectiveOp::AllReduce:
            if (r == 0)
                want[r] = tpurt::reference_all_reduce(type_, tpurt::ReduceKind::Sum, in, algorithm,
                                                      shape);
            else
                want[r] = want[0];
            break;
        case CollectiveOp::ReduceScatter:
            want[r] = tpurt::reference_reduce_scatter(type_, tpurt::ReduceKind::Sum, in, algorithm,
                                                      shape, static_cast<std::uint32_t>(r));
            break;
        case CollectiveOp::AllGather:
            for (const RawValues &v : in)
                want[r].insert(want[r].end(), v.begin(), v.end());
            break;
        case CollectiveOp::Broadcast:
            want[r] = in[0];
            break;
        case CollectiveOp::AllToAll:
            want[r] = tpurt::reference_all_to_all(in, static_cast<std::uint32_t>(r));
            break;
        }
    }
    return want;
}

Measurement CollectiveBench::run(CollectiveOp op, std::uint64_t bytes, std::uint32_t iters) {
    const std::uint32_t p = comm_.nranks();
    Measurement m;
    m.size = row_size(op, bytes, p, static_cast<std::uint32_t>(element_size(type_)));
    if (m.size.count == 0)
        return m;
    const bool gathers = op == CollectiveOp::AllGather,
               scatters = op == CollectiveOp::ReduceScatter;
    const std::uint64_t in_count = gathers ? m.size.rank_count : m.size.count;
    const std::uint64_t out_count = scatters ? m.size.rank_count : m.size.count;
    const std::vector<RawValues> in = inputs(in_count);
    std::vector<Tensor> send, recv;
    for (std::uint32_t r = 0; r < p; ++r) {
        send.push_back(tpurt::raw_tensor(ranks_.devices[r], type_, in[r]));
        recv.push_back(tpurt::raw_tensor(ranks_.devices[r], type_, RawValues(out_count, poison)));
    }
    const std::vector<RawValues> want = expected(op, in, m.size.bytes);

    launch(comm_, ranks_, op, send, recv);
    ranks_.synchronize();
    m.wrong = count_wrong(recv, want);

    tpurt::profiler::clear();
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    for (std::uint32_t i = 0; i < iters; ++i) {
        launch(comm_, ranks_, op, send, recv);
        ranks_.synchronize();
    }
    m.wall_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
                std::max<std::uint32_t>(iters, 1);
    std::uint64_t cycles = 0;
    for (const tpurt::OpRecord &record : tpurt::profiler::snapshot().ops)
        if (record.name.starts_with(op_name(op)))
            cycles = std::max(cycles, record.cycles);
    m.modelled_us = static_cast<double>(cycles) / ranks_.devices[0].info().clock_mhz;
    m.wrong += count_wrong(recv, want);
    return m;
}

} // namespace tpu::bench
