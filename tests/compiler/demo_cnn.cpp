// SPDX-License-Identifier: MIT
// demo_cnn.cpp - the demo's CNN trained by the demo's trainer on the in-process card
// (demo_cnn.hpp): tpu-train's options for `make demo` (DEMO_TRAIN_ARGS), its data loading and
// standardisation, its graph's training step (tpu_nn::CardTrainer) in bf16 with Adam and the cosine
// schedule, and its checkpoint's header, over one epoch of the training set.
#include "demo_cnn.hpp"

#include <train_common.hpp>

#include <tpu_data/batches.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_nn/card_trainer.hpp>
#include <tpurt/device.hpp>

#include <filesystem>

namespace compiler_test {

std::string demo_cnn_path() {
    return TPU_BINARY_DIR "/demo-cnn/checkpoint.tpuckpt";
}

std::string demo_cnn_checkpoint(bool retrain) {
    const std::string path = demo_cnn_path();
    if (!retrain && std::filesystem::exists(path))
        return path;
    tpu_train::Options o; // --model cnn --filters 32 64 --optimizer adam --lr-schedule cosine
    o.model = "cnn";
    o.filters = {32, 64};
    o.optimizer = "adam";
    o.lr_schedule = "cosine";
    o.epochs = 1;
    tpu_data::Dataset train, test;
    const tpu_data::Normalization norm = tpu_train::load_data(o, train, test);
    tpu_nn::CpuExecutor net(tpu_train::model_graph(o, train), o.seed);

    tpurt::Device dev = tpurt::Device::open_in_process({});
    tpu_train::OptimizerConfig opt;
    opt.kind = tpu_train::OptimizerKind::Adam;
    opt.lr = tpu_train::learning_rate(o);
    tpu_nn::CardTrainer card(dev, net, opt, tpu_train::Precision::Bf16);
    tpu_data::Batches batches(train, o.batch, o.seed);
    const tpu_model::LrSchedule schedule = tpu_train::lr_schedule(o, batches.batches_per_epoch());
    batches.start_epoch(0);
    tpu_data::Batch b;
    for (std::size_t step = 0; batches.next(b); ++step) {
        card.set_lr(schedule.at(step));
        card.step(b.features.data(), b.labels.data(), b.size);
    }
    card.copy_to(net);
    tpu_model::Checkpoint c = tpu_train::checkpoint_header(o, net.graph().name(), o.epochs, norm);
    c.notes["precision"] = o.precision;
    c.step = card.steps();
    net.save(c);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    tpu_model::save_checkpoint(c, path);
    return path;
}

} // namespace compiler_test
