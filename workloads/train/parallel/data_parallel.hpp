// SPDX-License-Identifier: MIT
// data_parallel.hpp - data-parallel training (tpu-train --cards N): the model (its graph on a
// card, tpu_nn::CardTrainer) replicated on N cards of one inter-chip fabric,
// each global batch split over them, each card's gradients summed over the links by a
// tpurt::Communicator and the same optimiser step on every card, so that the replicas stay
// bit-identical (check_replicas() proves it).
//
// The step. Each card gets its rows of the batch (as even as can be, the first cards one more)
// and scales its loss gradient by 1 / (the global batch), so the sum of the cards' gradients is
// the gradient of the whole batch's mean loss: the all-reduce's fp32 sum is the 1 / N scaling as
// well (exactly so for a power of two N and an even split: dividing by N then is exact), and no
// job is added for it. The backward pass is queued a layer at a time on every card (from the
// last); each layer's weight and bias gradients (one view of the card's flat gradient buffer)
// are then all-reduced in a bucket of their own, queued on the card's model stream behind the
// layer's backward ops and ahead of the earlier layers'. A stream runs its work in order and a
// card one job at a time, so on a card the bucket's ring job and the backward jobs do not
// overlap; what buckets give is that a layer's ring starts as soon as its gradients exist, not
// after the whole backward pass (workloads/README.md). Then every card's optimiser step and one
// wait for each card's results. With one card, step() is the card's own step(), bit for bit.
//
// Modelled card time (the cards' cycle counters, never wall time): per step and card the
// counters' cycles over the step and, read from the stream around each bucket (host work in the
// stream's order, when the card has ended the earlier jobs and runs nothing else of ours), those
// of the collective's ring jobs. A collective's jobs count from 0 on every card, so the step's
// modelled time is the slowest card's cycles and its compute part the slowest card's cycles
// without the collectives'.
//
// One rank a process (tpu-train-mpi, a RankGroup): this process's card is rank rank() of the
// group's communicator and trains that rank's rows of every batch, as that rank does in one
// process; the ranks' losses and correct rows are gathered (RankGroup::all_gather) and summed in
// rank order as in one process (the gather runs over the links: it counts as communication in
// the modelled step), and check_replicas() compares a hash of each rank's state with rank 0's.
// The modelled figures are then this rank's card's. One process driving a whole fabric
// orders its cards by their place on the fabric's ring (Communicator::fabric_rank(), rank 0 the
// card at (0, 0)), the ranks init_rank() gives one process a card: a rank's rows land on the
// same card either way, and the ring algorithm's chunk k is reduced toward the same card, so
// both runs sum every gradient in the same order and train bit for bit alike.
#pragma once

#include "card_params.hpp"
#include "rank_group.hpp"

#include <tpu_nn/card_trainer.hpp>

#include <tpurt/collectives.hpp>
#include <tpurt/tpurt.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace tpu_train {

// Thrown by check_replicas() when a replica's state differs from rank 0's.
class ReplicaMismatch : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The modelled card time of the steps so far, in cycles of the cards' clock: per step the
// slowest card's cycles (step_cycles) and the slowest card's cycles but the collectives'
// (compute_cycles), summed; and the steps' wall time, host included.
struct ModelledSteps {
    std::uint64_t steps = 0;
    std::uint64_t samples = 0;
    std::uint64_t own_samples = 0; // the rows this process's cards trained
    std::uint64_t step_cycles = 0;
    std::uint64_t compute_cycles = 0;
    double wall_seconds = 0.0;

    ModelledSteps &operator+=(const ModelledSteps &o) {
        steps += o.steps;
        samples += o.samples;
        own_samples += o.own_samples;
        step_cycles += o.step_cycles;
        compute_cycles += o.compute_cycles;
        wall_seconds += o.wall_seconds;
        return *this;
    }
};

// The first row of rank r's share of a batch of `batch` rows over n ranks (as even as can be,
// the first ranks one more); first_row(batch, n, n) == batch.
inline std::size_t first_row(std::size_t batch, std::size_t n, std::size_t r) {
    return r * (batch / n) + std::min(r, batch % n);
}

class DataParallel {
  public:
    using Card = tpu_nn::CardTrainer;
    // One replica of `net`'s graph and weights on each of `devices` (rank i on devices[i]); with
    // two or more, a communicator over them, which throws tpurt::Error(InvalidArgument) if they
    // do not form a ring of links.
    DataParallel(std::vector<tpurt::Device> devices, const tpu_nn::CpuExecutor &net,
                 const OptimizerConfig &opt, Precision precision);
    // This process's rank of `group` (kept by reference), its card and communicator.
    DataParallel(RankGroup &group, const tpu_nn::CpuExecutor &net, const OptimizerConfig &opt,
                 Precision precision);

    // The cards this process drives.
    std::size_t size() const { return cards_.size(); }
    // Every rank's, in this process or not, and the rank of this process's first card.
    std::size_t ranks() const { return group_ ? group_->size() : size(); }
    std::size_t first_rank() const { return group_ ? group_->rank() : 0; }
    Card &card(std::size_t rank = 0) { return cards_[rank]; }
    tpurt::Device &device(std::size_t rank = 0) { return devices_[rank]; }

    // One training step on a global batch (x: batch x features, labels: batch): its mean loss
    // and correct rows over the whole batch. Throws std::invalid_argument for a batch with
    // fewer rows than cards.
    StepResult step(const float *x, const std::uint8_t *labels, std::size_t batch,
                    std::size_t features);
    void set_lr(float lr);
    void load_optimizer(const tpu_model::Checkpoint &c);

    // Compares every replica's weights and optimiser state with rank 0's, bit for bit; throws
    // ReplicaMismatch naming the card, the parameter and the element that differ (in a group:
    // the rank and what differs).
    void check_replicas();

    const ModelledSteps &modelled() const { return modelled_; }
    // The communicator (none with one card) and the bytes each step all-reduces per bucket.
    const tpurt::Communicator *communicator() const { return comm_ ? &*comm_ : nullptr; }
    std::vector<std::uint64_t> bucket_bytes() const;

  private:
    struct Bucket {
        ParamRange range;
        std::vector<tpurt::Tensor> grads; // per rank
    };
    StepResult parallel_step(const float *x, const std::uint8_t *labels, std::size_t batch,
                             std::size_t features);
    // Queues, on every rank's stream, the all-reduce of `b` between two counter reads that add
    // the ring jobs' cycles to collective_cycles_.
    void queue_all_reduce(Bucket &b);
    // Every rank's part of a step (in a group, gathered from the other processes), in rank order.
    std::vector<StepResult> all_parts(const std::vector<StepResult> &mine);
    // In a group: throws ReplicaMismatch unless every rank's `values` and step count hash alike.
    void check_group(const char *what, const std::vector<float> &values);

    std::deque<tpurt::Device> devices_; // stable: each Card keeps a reference to its device
    std::deque<Card> cards_;
    std::optional<tpurt::Communicator> comm_;
    std::vector<Bucket> buckets_; // one per backward part, in backward order
    // Per rank: the collectives' cycles so far (written by host work on the rank's stream), and
    // the counter read that host work starts from.
    std::vector<std::shared_ptr<std::uint64_t>> collective_cycles_, counter_mark_;
    ModelledSteps modelled_;
    RankGroup *group_ = nullptr; // one rank a process: the other processes
};

} // namespace tpu_train
