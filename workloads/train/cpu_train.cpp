// SPDX-License-Identifier: MIT
// cpu_train.cpp - tpu-train-cpu: trains the MLP on a real data set with plain C++ on this CPU,
// the baseline that training on the card is measured against. Shows a progress line per epoch,
// writes the learning curves (curves.csv), the test set's evaluation (evaluation.csv) and a
// checkpoint after every epoch (checkpoint.tpuckpt) into --out, and resumes from one.
#include <tpu_data/batches.hpp>
#include <tpu_data/dataset.hpp>
#include <tpu_data/error.hpp>
#include <tpu_eval/metrics.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_model/cpu_mlp.hpp>
#include <tpu_report/curve_log.hpp>
#include <tpu_report/progress.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <variant>

namespace {

struct Options {
    std::string data = "fashion-mnist";
    std::string data_dir;
    std::vector<std::size_t> hidden = {256, 128};
    std::string optimizer = "sgd";
    float lr = 0.0f; // 0: the optimiser's default
    float momentum = 0.9f;
    std::size_t epochs = 5;
    std::size_t batch = 64;
    std::size_t limit = 0; // 0: the whole training set
    std::uint64_t seed = 1;
    std::string out = "train-out";
    std::string resume;
};

using Optimizer = std::variant<tpu_model::SgdMomentum, tpu_model::Adam>;

Optimizer make_optimizer(const Options &o) {
    if (o.optimizer == "adam")
        return tpu_model::Adam(o.lr > 0 ? o.lr : 1e-3f);
    return tpu_model::SgdMomentum(o.lr > 0 ? o.lr : 0.02f, o.momentum);
}

// A float written so that reading it back gives the same value.
std::string float_text(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}

// Loads the sets and standardises both with the training set's statistics, which it returns.
tpu_data::Normalization load_data(const Options &o, tpu_data::Dataset &train,
                                  tpu_data::Dataset &test) {
    const std::string dir = o.data_dir.empty() ? tpu_data::datasets_dir() : o.data_dir;
    if (o.data == "digits") {
        tpu_data::Dataset all = tpu_data::load_digits(dir + "/sklearn");
        const std::size_t n = all.count * 5 / 6;
        train = tpu_data::slice(all, 0, n);
        test = tpu_data::slice(all, n, all.count);
    } else {
        train = tpu_data::load_fashion_mnist(dir + "/fashion-mnist", tpu_data::Split::train);
        test = tpu_data::load_fashion_mnist(dir + "/fashion-mnist", tpu_data::Split::test);
    }
    if (o.limit > 0 && o.limit < train.count)
        train = tpu_data::slice(train, 0, o.limit);
    const tpu_data::Normalization norm = tpu_data::compute_normalization(train);
    tpu_data::normalize(train, norm);
    tpu_data::normalize(test, norm);
    return norm;
}

// Loss and accuracy of `net` over a whole set, in batches; fills `matrix` if given.
std::pair<double, double> evaluate(tpu_model::CpuMlp &net, const tpu_data::Dataset &d,
                                   tpu_eval::ConfusionMatrix *matrix) {
    tpu_data::Batches batches(d, 500, 0, false);
    tpu_data::Batch b;
    double loss = 0;
    std::size_t correct = 0;
    while (batches.next(b)) {
        const std::vector<float> &logits = net.forward(b.features.data(), b.size);
        tpu_model::LossResult r =
            tpu_model::softmax_cross_entropy(logits, b.size, d.classes(), b.labels.data());
        loss += double(r.loss) * double(b.size);
        correct += r.correct;
        if (matrix)
            matrix->add_logits(logits.data(), b.labels.data(), b.size);
    }
    return {loss / double(d.count), double(correct) / double(d.count)};
}

int run(const Options &o) {
    tpu_data::Dataset train, test;
    const tpu_data::Normalization norm = load_data(o, train, test);
    std::vector<std::size_t> sizes = {train.sample_size()};
    sizes.insert(sizes.end(), o.hidden.begin(), o.hidden.end());
    sizes.push_back(train.classes());
    std::string model = "mlp";
    for (std::size_t s : sizes)
        model += "-" + std::to_string(s);

    tpu_model::CpuMlp net(sizes, o.seed);
    Optimizer opt = make_optimizer(o);
    std::size_t first_epoch = 0;
    std::filesystem::create_directories(o.out);
    const std::string ckpt_path = o.out + "/checkpoint.tpuckpt";
    if (!o.resume.empty()) {
        tpu_model::Checkpoint c = tpu_model::load_checkpoint(o.resume);
        if (c.model != model)
            throw tpu_data::DataError(o.resume, "holds model " + c.model + ", not " + model);
        net.load(c);
        std::visit([&](auto &op) { op.load(c, net.layers()); }, opt);
        first_epoch = c.epoch;
        std::cout << "resumed " << model << " from " << o.resume << " after epoch " << c.epoch
                  << "\n";
    }
    std::cout << "training " << model << " on " << train.name << " (" << train.count
              << " samples, batch " << o.batch << ", " << o.optimizer << ") on the CPU\n";

    tpu_report::CurveLog curves(o.out + "/curves.csv", first_epoch > 0);
    tpu_data::Batches batches(train, o.batch, o.seed);
    tpu_data::Batch b;
    const bool tty = tpu_report::Progress::stdout_is_terminal();
    for (std::size_t epoch = first_epoch; epoch < o.epochs; ++epoch) {
        tpu_report::Progress progress("epoch " + std::to_string(epoch + 1) + "/" +
                                          std::to_string(o.epochs),
                                      train.count, std::cout, tty);
        batches.start_epoch(epoch);
        double loss_sum = 0;
        std::size_t seen = 0, correct = 0;
        while (batches.next(b)) {
            const std::vector<float> &logits = net.forward(b.features.data(), b.size);
            tpu_model::LossResult r =
                tpu_model::softmax_cross_entropy(logits, b.size, train.classes(), b.labels.data());
            net.backward(r.dlogits);
            std::visit([&](auto &op) { op.step(net.layers()); }, opt);
            loss_sum += double(r.loss) * double(b.size);
            correct += r.correct;
            seen += b.size;
            progress.update(seen, loss_sum / double(seen), double(correct) / double(seen));
        }
        const double seconds = progress.elapsed();
        progress.finish(loss_sum / double(seen), double(correct) / double(seen));
        auto [test_loss, test_acc] = evaluate(net, test, nullptr);
        std::printf("  test loss %.4f accuracy %.2f%%, %.0f samples/s\n", test_loss, test_acc * 100,
                    double(seen) / seconds);
        curves.add({epoch + 1, loss_sum / double(seen), double(correct) / double(seen), test_loss,
                    test_acc, seconds, double(seen) / seconds});
        tpu_model::Checkpoint c;
        c.model = model;
        c.epoch = epoch + 1;
        c.seed = o.seed;
        c.notes["optimizer"] = o.optimizer;
        // What inference applies to raw features (tpu_infer::InputTransform).
        c.notes["input.mean"] = float_text(norm.mean);
        c.notes["input.stddev"] = float_text(norm.stddev);
        net.save(c);
        std::visit([&](const auto &op) { op.save(c); }, opt);
        tpu_model::save_checkpoint(c, ckpt_path);
    }
    tpu_eval::ConfusionMatrix matrix(test.class_names);
    evaluate(net, test, &matrix);
    matrix.print(std::cout);
    matrix.write_csv(o.out + "/evaluation.csv");
    std::cout << "saved " << o.out << "/{curves.csv,evaluation.csv,checkpoint.tpuckpt}\n";
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    Options o;
    CLI::App app("tpu-train-cpu: train the MLP on the CPU (the baseline for training on the card)");
    app.add_option("--data", o.data, "data set")
        ->check(CLI::IsMember({"fashion-mnist", "digits"}))
        ->capture_default_str();
    app.add_option("--data-dir", o.data_dir, "where the data sets are (default: the cache's)");
    app.add_option("--hidden", o.hidden, "hidden layer sizes")->capture_default_str();
    app.add_option("--optimizer", o.optimizer, "sgd (with momentum) or adam")
        ->check(CLI::IsMember({"sgd", "adam"}))
        ->capture_default_str();
    app.add_option("--lr", o.lr, "learning rate (default: 0.02 for sgd, 0.001 for adam)");
    app.add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
    app.add_option("--epochs", o.epochs, "epochs in all (a resumed run counts those done)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--batch", o.batch, "mini-batch size")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--limit", o.limit, "train on the first N samples only (0: all)");
    app.add_option("--seed", o.seed, "seed of initialisation and data order")
        ->capture_default_str();
    app.add_option("--out", o.out, "output directory")->capture_default_str();
    app.add_option("--resume", o.resume, "checkpoint to continue from")->check(CLI::ExistingFile);
    CLI11_PARSE(app, argc, argv);
    try {
        return run(o);
    } catch (const std::exception &e) {
        std::cerr << "tpu-train-cpu: " << e.what() << "\n";
        return 1;
    }
}
