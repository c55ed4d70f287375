// SPDX-License-Identifier: MIT
// data_parallel.cpp - a training step of a model replicated on several cards: the batch split,
// the backward pass a layer at a time with each layer's gradients all-reduced over the links,
// the optimiser step on every card, the replicas compared, and the modelled card time
// (data_parallel.hpp).
#include "data_parallel.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <string>

namespace tpu_train {

namespace {

std::uint64_t cycles_of(const tpurt::Device &d) {
    return d.counters().cycles;
}

// The cards in the order of their places on the fabric's ring when they are the whole fabric
// (data_parallel.hpp), else as given.
std::vector<tpurt::Device> ring_order(std::vector<tpurt::Device> devices) {
    const tpurt::IciPlace &ici = devices.front().info().ici;
    if (devices.size() < 2 || !ici.on_fabric() || ici.dim_x * ici.dim_y != devices.size())
        return devices;
    std::stable_sort(devices.begin(), devices.end(), [](const auto &a, const auto &b) {
        return tpurt::Communicator::fabric_rank(a.info()) <
               tpurt::Communicator::fabric_rank(b.info());
    });
    return devices;
}

// FNV-1a over the bits of `values`.
std::uint64_t hash_of(const std::vector<float> &values) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    const auto *bytes = reinterpret_cast<const unsigned char *>(values.data());
    for (std::size_t i = 0; i < values.size() * sizeof(float); ++i)
        h = (h ^ bytes[i]) * 0x100000001b3ull;
    return h;
}

// The first element where `a` and `b` differ in their bits, or a.size().
std::size_t first_difference(const std::vector<float> &a, const std::vector<float> &b) {
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0)
            return i;
    return a.size();
}

} // namespace

DataParallel::DataParallel(std::vector<tpurt::Device> devices, const tpu_nn::CpuExecutor &net,
                           const OptimizerConfig &opt, Precision precision) {
    if (devices.empty())
        throw std::invalid_argument("data-parallel training needs at least one card");
    devices = ring_order(std::move(devices));
    if (devices.size() > 1)
        comm_.emplace(tpurt::Communicator::init_all(devices));
    for (tpurt::Device &d : devices) {
        devices_.push_back(d);
        cards_.emplace_back(devices_.back(), net, opt, precision);
        collective_cycles_.push_back(std::make_shared<std::uint64_t>(0));
        counter_mark_.push_back(std::make_shared<std::uint64_t>(0));
    }
}

DataParallel::DataParallel(RankGroup &group, const tpu_nn::CpuExecutor &net,
                           const OptimizerConfig &opt, Precision precision)
    : comm_(group.communicator()), group_(&group) {
    devices_.push_back(group.device());
    cards_.emplace_back(devices_.back(), net, opt, precision);
    collective_cycles_.push_back(std::make_shared<std::uint64_t>(0));
    counter_mark_.push_back(std::make_shared<std::uint64_t>(0));
}

StepResult DataParallel::step(const float *x, const std::uint8_t *labels, std::size_t batch,
                              std::size_t features) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::uint64_t> before, comm_before;
    for (std::size_t r = 0; r < size(); ++r) {
        before.push_back(cycles_of(devices_[r]));
        comm_before.push_back(*collective_cycles_[r]);
    }
    const StepResult result =
        ranks() == 1 ? cards_[0].step(x, labels, batch) : parallel_step(x, labels, batch, features);
    // Every rank's stream has ended the step (result() waited), collectives included.
    std::uint64_t slowest = 0, slowest_compute = 0;
    for (std::size_t r = 0; r < size(); ++r) {
        const std::uint64_t now = cycles_of(devices_[r]);
        if (now < before[r])
            continue; // a card reset restarted the counters: no figure for this card
        const std::uint64_t step = now - before[r];
        const std::uint64_t comm = *collective_cycles_[r] - comm_before[r];
        slowest = std::max(slowest, step);
        slowest_compute = std::max(slowest_compute, step - std::min(step, comm));
    }
    ++modelled_.steps;
    modelled_.samples += batch;
    modelled_.own_samples +=
        first_row(batch, ranks(), first_rank() + size()) - first_row(batch, ranks(), first_rank());
    modelled_.step_cycles += slowest;
    modelled_.compute_cycles += slowest_compute;
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
    modelled_.wall_seconds += wall.count();
    return result;
}

void DataParallel::queue_all_reduce(Bucket &b) {
    std::vector<tpurt::Stream *> streams;
    for (std::size_t r = 0; r < size(); ++r) {
        tpurt::Stream &s = cards_[r].params().stream();
        streams.push_back(&s);
        s.enqueue_host("collective cycles",
                       [d = devices_[r], mark = counter_mark_[r]] { *mark = cycles_of(d); });
    }
    comm_->all_reduce(streams, b.grads, b.grads, tpurt::ReduceKind::Sum);
    for (std::size_t r = 0; r < size(); ++r)
        streams[r]->enqueue_host("collective cycles", [d = devices_[r], mark = counter_mark_[r],
                                                       sum = collective_cycles_[r]] {
            const std::uint64_t now = cycles_of(d);
            if (now >= *mark)
                *sum += now - *mark;
        });
}

StepResult DataParallel::parallel_step(const float *x, const std::uint8_t *labels,
                                       std::size_t batch, std::size_t features) {
    const std::size_t n = ranks(), mine = first_rank();
    if (batch < n)
        throw std::invalid_argument("a batch of " + std::to_string(batch) +
                                    " samples cannot be split over " + std::to_string(n) +
                                    " cards");
    // Card r's rows: [first[r], first[r + 1]).
    std::vector<std::size_t> first;
    for (std::size_t r = 0; r <= n; ++r)
        first.push_back(first_row(batch, n, r));
    for (std::size_t r = mine; r < mine + size(); ++r)
        cards_[r - mine].queue_forward_loss(x + first[r] * features, labels + first[r],
                                            first[r + 1] - first[r], batch);
    const std::size_t parts = cards_[0].backward_parts();
    if (buckets_.empty()) {
        for (std::size_t k = 0; k < parts; ++k)
            buckets_.push_back({});
    }
    for (std::size_t k = 0; k < parts; ++k) {
        Bucket &b = buckets_[k];
        for (std::size_t r = 0; r < size(); ++r) {
            const ParamRange range = cards_[r].queue_backward(k);
            if (b.grads.size() < size()) {
                b.range = range;
                b.grads.push_back(cards_[r].params().gradients(range));
            }
        }
        queue_all_reduce(b);
    }
    for (Card &c : cards_)
        c.queue_update();
    std::vector<StepResult> results;
    for (std::size_t r = mine; r < mine + size(); ++r)
        results.push_back(cards_[r - mine].result(labels + first[r]));
    results = all_parts(results);
    StepResult total;
    double loss_sum = 0.0;
    for (std::size_t r = 0; r < n; ++r) {
        loss_sum += results[r].loss * double(first[r + 1] - first[r]);
        total.correct += results[r].correct;
    }
    total.loss = loss_sum / double(batch);
    return total;
}

std::vector<StepResult> DataParallel::all_parts(const std::vector<StepResult> &mine) {
    if (!group_)
        return mine;
    const std::uint64_t words[2] = {std::bit_cast<std::uint64_t>(mine.at(0).loss),
                                    mine.at(0).correct};
    // Over the links: communication in the modelled figures.
    const std::uint64_t before = cycles_of(devices_[0]);
    const std::vector<std::uint64_t> all = group_->all_gather(words);
    const std::uint64_t after = cycles_of(devices_[0]);
    if (after >= before)
        *collective_cycles_[0] += after - before;
    std::vector<StepResult> parts;
    for (std::size_t r = 0; r < ranks(); ++r)
        parts.push_back({std::bit_cast<double>(all[2 * r]), all[2 * r + 1]});
    return parts;
}

std::vector<std::uint64_t> DataParallel::bucket_bytes() const {
    std::vector<std::uint64_t> bytes;
    for (const Bucket &b : buckets_)
        bytes.push_back(b.grads.at(0).element_count() * tpurt::element_size(b.grads[0].dtype()));
    return bytes;
}

void DataParallel::set_lr(float lr) {
    for (Card &c : cards_)
        c.set_lr(lr);
}

void DataParallel::load_optimizer(const tpu_model::Checkpoint &c) {
    for (Card &card : cards_)
        card.load_optimizer(c);
}

void DataParallel::check_group(const char *what, const std::vector<float> &values) {
    const std::uint64_t words[2] = {hash_of(values), cards_[0].params().steps()};
    const std::vector<std::uint64_t> all = group_->all_gather(words);
    for (std::size_t r = 1; r < ranks(); ++r)
        if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
            throw ReplicaMismatch("the replicas differ after " + std::to_string(all[1]) +
                                  " steps: rank " + std::to_string(r) + "'s " + what +
                                  (all[2 * r] == all[0]
                                       ? " match rank 0's, its step count " +
                                             std::to_string(all[2 * r + 1]) + " does not"
                                       : " differ from rank 0's (their hashes differ)"));
}

void DataParallel::check_replicas() {
    if (ranks() == 1)
        return;
    for (Card &c : cards_)
        c.params().stream().synchronize();
    struct State {
        const char *what;
        tpurt::Tensor CardParam::*tensor;
    };
    const State states[] = {{"weights", &CardParam::w},
                            {"optimiser state (momentum or first moment)", &CardParam::m},
                            {"optimiser state (second moment)", &CardParam::v}};
    const CardParams &p0 = cards_[0].params();
    for (const State &s : states) {
        const std::vector<float> ref = (p0.flat().*s.tensor).template to_vector<float>();
        if (group_)
            check_group(s.what, ref);
        for (std::size_t r = 1; r < size(); ++r) {
            const CardParams &pr = cards_[r].params();
            const std::vector<float> got = (pr.flat().*s.tensor).template to_vector<float>();
            const std::size_t at = first_difference(ref, got);
            if (at == ref.size() && pr.steps() == p0.steps())
                continue;
            // The parameter holding element `at` of the flat buffer.
            std::size_t i = 0, offset = 0;
            while (i + 1 < p0.size() && offset + p0[i].w.element_count() <= at)
                offset += p0[i++].w.element_count();
            throw ReplicaMismatch(
                "the replicas differ after " + std::to_string(p0.steps()) + " steps: card " +
                std::to_string(r) + "'s " + s.what +
                (at == ref.size()
                     ? " match card 0's, its step count " + std::to_string(pr.steps()) + " does not"
                     : " differ from card 0's at element " + std::to_string(at - offset) + " of " +
                           p0[i].key + " (" + std::to_string(got[at]) + " against " +
                           std::to_string(ref[at]) + ")"));
        }
    }
}

} // namespace tpu_train
