// SPDX-License-Identifier: MIT
// card_run.cpp - a run of tpu-train or tpu-train-mpi (card_run.hpp): trains the MLP, the CNN or
// a model spec (--model) on the card as the graph of its name (tpu_nn/card_trainer.hpp:
// forward, loss, backward and optimiser step as card ops), with tpu-train-cpu's options, progress
// line per epoch, learning curves (curves.csv), test-set evaluation (evaluation.csv) and
// checkpoints (checkpoint.tpuckpt, the same format: tpu-eval, tpu-serve and tpu-train-cpu read it),
// in bf16 mixed or fp32 precision (--precision). At the start it times one training step on the
// card and the same step with the CPU executor on this CPU. The test set is evaluated on the
// card.
// --profile writes the trace of the run's first training steps (libtpurt's profiler) and prints
// their per-op table.
// --cards N trains data-parallel on cards --card .. --card + N - 1 (data_parallel.hpp): rank 0
// evaluates, checkpoints and reports; the replicas are compared every --replica-check-steps steps
// and at the end, and the summary gives images/s in wall and modelled card time, the modelled
// compute / communication split and the modelled weak-scaling efficiency. With a RankGroup
// (tpu-train-mpi) this process trains its rank's card alone: rank 0 alone writes the curves,
// TensorBoard, the checkpoint and evaluation, and the summary has a row per rank
// (parallel_summary.hpp). The other ranks evaluate the test set too, unseen, then all meet at a
// barrier: they reach it when rank 0 does, so that the barrier, which fails at the
// communicator's timeout like every collective, tells a dead rank from a slow evaluation.
#include "card_run.hpp"

#include "card_recovery.hpp"
#include "data_parallel.hpp"
#include "parallel_summary.hpp"
#include "train_common.hpp"

#include <tpu_data/batches.hpp>
#include <tpu_data/error.hpp>
#include <tpu_nn/card_trainer.hpp>
#include <tpu_report/progress.hpp>
#include <tpu_report/tensorboard_writer.hpp>

#include <CLI/CLI.hpp>
#include <tpurt/error.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <variant>
#include <vector>

namespace {

using Card = tpu_nn::CardTrainer;
using Net = tpu_nn::CpuExecutor;

using tpu_train::Options;

tpu_train::OptimizerConfig optimizer_config(const Options &o) {
    tpu_train::OptimizerConfig c;
    c.kind = o.optimizer == "adam" ? tpu_train::OptimizerKind::Adam : tpu_train::OptimizerKind::Sgd;
    c.lr = tpu_train::learning_rate(o);
    c.momentum = o.momentum;
    c.captured = !o.eager_steps;
    return c;
}

// Milliseconds per call of `step`, the mean of `runs` after one untimed call (which compiles the
// card's programs or warms the caches).
template <typename F> double ms_per_step(F &&step, int runs) {
    step();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i)
        step();
    const std::chrono::duration<double, std::milli> t = std::chrono::steady_clock::now() - start;
    return t.count() / runs;
}

// One training step of `net` on batch `b`, on the card (the mean of 5) and with the CPU model
// (the mean of 2: it takes seconds in the guest and varies little), on copies: the training
// itself is untouched.
void compare_step_times(tpurt::Device &device, const Net &net, const Options &o,
                        const tpu_data::Batch &b, std::size_t classes) {
    const int card_runs = 5, cpu_runs = 2;
    Card card(device, net, optimizer_config(o), tpu_train::parse_precision(o.precision));
    const double card_ms =
        ms_per_step([&] { card.step(b.features.data(), b.labels.data(), b.size); }, card_runs);
    Net cpu = net;
    std::variant<tpu_model::SgdMomentum, tpu_model::Adam> opt =
        o.optimizer == "adam"
            ? decltype(opt)(tpu_model::Adam(tpu_train::learning_rate(o)))
            : decltype(opt)(tpu_model::SgdMomentum(tpu_train::learning_rate(o), o.momentum));
    const double cpu_ms = ms_per_step(
        [&] {
            const std::vector<float> &logits = cpu.forward(b.features.data(), b.size);
            cpu.backward(
                tpu_model::softmax_cross_entropy(logits, b.size, classes, b.labels.data()).dlogits);
            std::visit([&](auto &op) { op.step(cpu.params()); }, opt);
        },
        cpu_runs);
    std::printf("one training step of batch %zu (mean of %d): card %.2f ms, CPU %.2f ms "
                "(mean of %d; card / CPU %.2f)\n",
                b.size, card_runs, card_ms, cpu_ms, cpu_runs, card_ms / cpu_ms);
}

// --profile: records the run's first --profile-steps training steps, then writes their trace;
// their per-op table is printed after the epoch's progress line. With TPURT_PROFILE set the
// profiler records the whole run anyway: the trace then holds everything up to that step.
class StepProfile {
  public:
    explicit StepProfile(const Options &o)
        : path_(o.profile), left_(o.profile_steps), whole_run_(tpurt::profiler::active()) {
        if (!path_.empty() && left_ > 0 && !whole_run_) {
            tpurt::profiler::clear();
            tpurt::profiler::start();
        }
    }
    // After each training step (which ends waiting for the card).
    void stepped() {
        if (path_.empty() || left_ == 0 || --left_ > 0)
            return;
        if (!whole_run_)
            tpurt::profiler::stop();
        tpurt::profiler::write_trace(path_);
        const tpurt::Profile p = tpurt::profiler::snapshot();
        table_ = "profile of the first training steps (" + std::to_string(p.ops.size()) +
                 " op calls), trace in " + path_ + "\n" + p.table();
    }
    // At the end of an epoch: the table, once it is there.
    void report() {
        std::cout << table_ << std::flush;
        table_.clear();
    }

  private:
    std::string path_;
    std::size_t left_;
    bool whole_run_;
    std::string table_;
};

// The test set's logits, on the card.
tpu_train::Forward test_forward(tpu_nn::CardTrainer &card) {
    return [&card](const float *x, std::size_t batch) { return card.logits(x, batch); };
}

// The devices (--card and the --cards - 1 after it, or the group's rank's) and the model's
// replicas on them, opened again after a card failure.
class CardSession {
  public:
    CardSession(const Options &o, tpu_train::RankGroup *group, Net &net)
        : o_(o), group_(group), net_(net) {
        open();
    }
    // Drops the card state and the device files (a context may be banned), then opens them
    // again from `net`'s weights.
    void open() {
        if (replicas_)
            earlier_ += replicas_->modelled();
        replicas_.reset();
        if (group_) {
            replicas_.emplace(*group_, net_, optimizer_config(o_),
                              tpu_train::parse_precision(o_.precision));
            return;
        }
        std::vector<tpurt::Device> devices;
        for (std::size_t i = 0; i < o_.cards; ++i)
            devices.push_back(tpurt::Device::open(o_.card + unsigned(i)));
        replicas_.emplace(std::move(devices), net_, optimizer_config(o_),
                          tpu_train::parse_precision(o_.precision));
    }
    // Rank 0 (in a group, this rank): the card that evaluates and whose state is saved.
    tpurt::Device &device() { return replicas_->device(0); }
    Card &card() { return replicas_->card(0); }
    tpu_train::DataParallel &replicas() { return *replicas_; }
    // The modelled time of every step trained, on the devices opened before too.
    tpu_train::ModelledSteps modelled() const {
        tpu_train::ModelledSteps m = earlier_;
        return m += replicas_->modelled();
    }

  private:
    const Options &o_;
    tpu_train::RankGroup *group_;
    Net &net_;
    std::optional<tpu_train::DataParallel> replicas_;
    tpu_train::ModelledSteps earlier_;
};

// With --tensorboard, each step's scalars (RunLogs::step), and from the card's counters (all
// its work, as tpu-smi sees it) the modelled card time and the matrix unit's utilisation since
// the previous step.
class StepScalars {
  public:
    // `logs`: null on a rank that writes none.
    explicit StepScalars(tpu_train::RunLogs *logs) : logs_(logs) {}
    void add(tpurt::Device &device, std::size_t step, const tpu_train::StepResult &r, float lr,
             std::size_t samples) {
        if (!logs_)
            return;
        logs_->step(step, r.loss, double(r.correct) / double(samples), lr, samples);
        if (!logs_->tensorboard)
            return;
        tpu_report::TensorBoardWriter &tb = *logs_->tensorboard;
        const auto at = static_cast<std::int64_t>(step);
        const tpurt::DeviceCounters now = device.counters();
        // A card reset may restart the counters: no figure for that step.
        if (have_last_ && now.cycles >= last_.cycles && now.macs >= last_.macs) {
            tpurt::JobStats step_work;
            step_work.cycles = now.cycles - last_.cycles;
            step_work.macs = now.macs - last_.macs;
            const std::chrono::duration<double, std::milli> card_ms =
                step_work.modelled_time(device.info());
            tb.scalar("card/modelled_ms_per_step", at, card_ms.count());
            tb.scalar("card/mxu_utilisation", at, step_work.utilisation(device.info()));
        }
        last_ = now;
        have_last_ = true;
    }
    // With --cards over 1: the step's modelled time over the cards (the slowest card's) and the
    // all-reduce's share of it, from the data-parallel totals (data_parallel.hpp).
    void add_parallel(std::size_t step, const tpu_train::ModelledSteps &m,
                      const tpurt::DeviceInfo &info) {
        if (!logs_ || !logs_->tensorboard || m.steps <= last_parallel_.steps ||
            m.step_cycles <= last_parallel_.step_cycles) {
            last_parallel_ = m;
            return;
        }
        tpurt::JobStats work;
        work.cycles = m.step_cycles - last_parallel_.step_cycles;
        const std::uint64_t compute = m.compute_cycles - last_parallel_.compute_cycles;
        const auto at = static_cast<std::int64_t>(step);
        const std::chrono::duration<double, std::milli> ms = work.modelled_time(info);
        logs_->tensorboard->scalar("data_parallel/modelled_ms_per_step", at, ms.count());
        logs_->tensorboard->scalar("data_parallel/allreduce_share", at,
                                   1.0 - double(compute) / double(work.cycles));
        last_parallel_ = m;
    }

  private:
    tpu_train::RunLogs *logs_;
    tpurt::DeviceCounters last_{};
    bool have_last_ = false;
    tpu_train::ModelledSteps last_parallel_{};
};

// Trains `net`'s graph named `model` on the card, replaying from the last recovery point after a
// card failure (card_recovery.hpp).
int train_net(const Options &o, tpu_train::RankGroup *group, Net &net, const std::string &model,
              const tpu_data::Dataset &train, const tpu_data::Dataset &test,
              const tpu_data::Normalization &norm) {
    // Rank 0 of a group, or the one process: writes the logs, the checkpoint, the evaluation.
    const bool writer = !group || group->rank() == 0;
    // Another rank's evaluation, the same work as rank 0's, then the barrier after it.
    const auto evaluated = [&](const tpu_train::Forward &forward) {
        if (!group)
            return;
        if (!writer)
            tpu_train::evaluate(forward, test, nullptr);
        group->barrier();
    };
    tpu_model::Checkpoint resumed;
    if (!o.resume.empty()) {
        resumed = tpu_model::load_checkpoint(o.resume);
        if (resumed.model != model)
            throw tpu_data::DataError(o.resume, "holds model " + resumed.model + ", not " + model);
        net.load(resumed);
    }
    CardSession session(o, group, net);
    tpu_train::RunPosition pos;
    if (!o.resume.empty()) {
        session.replicas().load_optimizer(resumed);
        pos.epoch = resumed.epoch;
        std::cout << "resumed " << model << " from " << o.resume << " after epoch " << resumed.epoch
                  << "\n";
    }
    std::cout << "training " << model << " on " << train.name << " (" << train.count
              << " samples, batch " << o.batch << ", " << o.optimizer << ", " << o.precision
              << ") on "
              << (o.cards == 1 ? std::string("the card")
                               : std::to_string(o.cards) + " cards, data-parallel (" +
                                     std::to_string(o.batch / o.cards) + " samples a card" +
                                     (group ? ", a process a card" : "") + ")")
              << "\n";

    if (writer)
        std::filesystem::create_directories(o.out);
    const std::string ckpt_path = o.out + "/checkpoint.tpuckpt";
    tpu_data::Batches batches(train, o.batch, o.seed);
    tpu_data::Batch b;
    batches.start_epoch(pos.epoch);
    pos.step = pos.epoch * batches.batches_per_epoch();
    tpu_train::RecoveryBudget budget(o.retries);
    if (o.cards == 1 && batches.next(b)) {
        try {
            compare_step_times(session.device(), net, o, b, train.classes());
        } catch (const std::exception &e) {
            if (!budget.failed(e, pos, pos))
                throw;
            session.open();
            if (!o.resume.empty())
                session.replicas().load_optimizer(resumed);
        }
    }

    // The state at `pos`, read back from the card: a recovery point and the checkpoint's tensors.
    auto recovery_point = [&] {
        tpu_train::RecoveryPoint r{pos, tpu_train::checkpoint_header(o, model, pos.epoch, norm)};
        Card &card = session.card();
        card.copy_to(net);
        r.state.notes["precision"] = o.precision;
        r.state.step = card.steps();
        net.save(r.state);
        card.save_optimizer(r.state);
        return r;
    };
    // The first recovery point is the run's start, which the host already holds.
    tpu_train::RecoveryPoint point{pos, resumed};
    if (o.resume.empty()) {
        point.state = tpu_train::checkpoint_header(o, model, 0, norm);
        net.save(point.state); // and no optimiser state: a fresh one
    }
    const tpu_train::Forward forward = [&](const float *x, std::size_t batch) {
        return test_forward(session.card())(x, batch);
    };

    std::optional<tpu_train::RunLogs> logs;
    if (writer)
        logs.emplace(o, pos.epoch > 0);
    StepScalars step_scalars(logs ? &*logs : nullptr);
    const tpu_model::LrSchedule schedule = tpu_train::lr_schedule(o, batches.batches_per_epoch());
    const bool tty = tpu_report::Progress::stdout_is_terminal();
    StepProfile profile(o);
    auto epoch_start = std::chrono::steady_clock::now();
    for (;;) {
        try {
            if (pos.epoch == o.epochs) {
                session.replicas().check_replicas();
                if (o.cards > 1)
                    std::printf("the %zu replicas' weights and optimiser state were identical "
                                "at every check (every %zu steps and at the end)\n",
                                o.cards, o.replica_check_steps);
                if (writer)
                    tpu_train::final_evaluation(forward, test, o.out);
                evaluated(forward);
                break;
            }
            tpu_report::Progress progress("epoch " + std::to_string(pos.epoch + 1) + "/" +
                                              std::to_string(o.epochs),
                                          train.count, std::cout, tty);
            batches.start_epoch(pos.epoch);
            for (std::size_t i = 0; i < pos.batch; ++i) // replayed from a recovery point
                batches.next(b);
            if (pos.batch == 0)
                epoch_start = std::chrono::steady_clock::now();
            while (batches.next(b)) {
                tpu_train::DataParallel &replicas = session.replicas();
                const float lr = schedule.at(pos.step);
                replicas.set_lr(lr);
                const tpu_train::StepResult r =
                    replicas.step(b.features.data(), b.labels.data(), b.size, train.sample_size());
                budget.progressed();
                profile.stepped();
                ++pos.step;
                ++pos.batch;
                pos.loss_sum += r.loss * double(b.size);
                pos.correct += r.correct;
                pos.seen += b.size;
                step_scalars.add(session.device(), pos.step, r, lr, b.size);
                if (o.cards > 1)
                    step_scalars.add_parallel(pos.step, replicas.modelled(),
                                              session.device().info());
                progress.update(pos.seen, pos.loss_sum / double(pos.seen),
                                double(pos.correct) / double(pos.seen));
                if (pos.step % o.replica_check_steps == 0)
                    replicas.check_replicas();
                if (pos.step % o.snapshot_steps == 0)
                    point = recovery_point();
            }
            const std::chrono::duration<double> seconds =
                std::chrono::steady_clock::now() - epoch_start;
            progress.finish(pos.loss_sum / double(pos.seen),
                            double(pos.correct) / double(pos.seen));
            profile.report();
            // The epoch's end is a recovery point: a failure in the evaluation repeats only it.
            point = recovery_point();
            if (writer) {
                tpu_train::end_epoch(forward, test, pos.epoch, pos.step, pos.loss_sum, pos.correct,
                                     pos.seen, seconds.count(), *logs);
                tpu_model::Checkpoint c = point.state;
                c.epoch = pos.epoch + 1;
                tpu_model::save_checkpoint(c, ckpt_path);
            }
            evaluated(forward);
            pos = {pos.epoch + 1, 0, pos.step, 0.0, 0, 0};
            point.at = pos;
        } catch (const std::exception &e) {
            // A job or a collective that failed on one of several cards (a reset, a hang, a
            // link down, a peer's stale message on a link: tpurt::Error, JobError included).
            if (o.cards > 1 && dynamic_cast<const tpurt::Error *>(&e) != nullptr)
                throw std::runtime_error(
                    std::string("a card failed during data-parallel training (") + e.what() +
                    "): a run on several cards is not recovered yet; resume it from its last "
                    "checkpoint with --resume " +
                    ckpt_path);
            if (!budget.failed(e, pos, point.at))
                throw;
            pos = point.at;
            net.load(point.state);
            session.open();
            session.replicas().load_optimizer(point.state);
        }
    }
    if (group)
        tpu_train::print_group_summary(*group, session.modelled(),
                                       *session.replicas().communicator(),
                                       session.replicas().bucket_bytes(), session.device().info());
    else
        tpu_train::print_parallel_summary(session.modelled(), session.device().info(), o.cards);
    if (budget.recovered() > 0)
        std::cout << "recovered from " << budget.recovered()
                  << " card failures; the run replayed the lost steps\n";
    return 0;
}

} // namespace

namespace tpu_train {

int run(const Options &o, RankGroup *group) {
    if (o.cards == 0 || o.batch % o.cards != 0)
        throw std::invalid_argument(
            "--batch " + std::to_string(o.batch) + " does not split evenly over --cards " +
            std::to_string(o.cards) + ": give a global batch that is a multiple of the cards");
    tpu_data::Dataset train, test;
    const tpu_data::Normalization norm = tpu_train::load_data(o, train, test);
    if (const std::size_t tail = train.count % o.batch; tail != 0 && tail < o.cards)
        throw std::invalid_argument("an epoch's last batch has " + std::to_string(tail) +
                                    " samples, fewer than --cards " + std::to_string(o.cards) +
                                    ": change --batch or --limit so that every card gets one");
    tpu_nn::CpuExecutor net(tpu_train::model_graph(o, train), o.seed);
    const std::string name = net.graph().name();
    return train_net(o, group, net, name, train, test, norm);
}

void add_card_options(CLI::App &app, Options &o) {
    tpu_train::add_options(app, o);
    app.add_option("--precision", o.precision,
                   "bf16 (bf16 activations and gradients, fp32 master weights) or fp32")
        ->check(CLI::IsMember({"bf16", "fp32"}))
        ->capture_default_str();
    app.add_option("--profile", o.profile,
                   "write the Chrome trace (Perfetto, tpu-prof) of the first training steps here "
                   "and print their per-op table");
    app.add_option("--profile-steps", o.profile_steps, "training steps --profile records")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--snapshot-steps", o.snapshot_steps,
                   "read the weights and optimiser state back every this many steps (and at each "
                   "epoch's end): a card failure replays the steps since")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_flag("--eager-steps", o.eager_steps,
                 "queue every op of a training step on its own instead of replaying the step "
                 "captured once per batch size (the same results, bit for bit)");
    app.add_option("--replica-check-steps", o.replica_check_steps,
                   "with --cards over 1, compare the replicas' weights bit for bit every this many "
                   "steps (and at the end)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--retries", o.retries,
                   "card failures (hung or reset jobs) in a row to recover from before giving up")
        ->capture_default_str();
}

} // namespace tpu_train
