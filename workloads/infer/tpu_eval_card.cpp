// SPDX-License-Identifier: MIT
// tpu-eval: the test accuracy of checkpointed models run on the card (an fp32 checkpoint as bf16,
// a quantised one as int8; a model spec tpu_infer does not read compiled for bf16 in the
// process, tpu_export::compile_checkpoint; a compiled model, .tpumodel, as it was compiled),
// with the confusion matrix, the card's throughput, and the logits of the first --reference
// test images compared bit for bit with the CPU reference of the same arithmetic (a compiled
// model's: tpumodel::card::reference_run, where it has one). Several --model options are
// compared in one summary (e.g. bf16 against int8).
#include "tpu_infer/card_model.hpp"
#include "tpu_infer/reference.hpp"

#include <tpu_data/dataset.hpp>
#include <tpu_eval/metrics.hpp>
#include <tpu_export/compile_checkpoint.hpp>
#include <tpu_serve/graph_model.hpp>
#include <tpumodel/card_executor.hpp>
#include <tpumodel/card_reference.hpp>
#include <tpumodel/file.hpp>

#include <CLI/CLI.hpp>
#include <tpurt/device.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

namespace {

struct Result {
    std::string path, precision;
    double accuracy = 0;
    std::size_t mismatches = 0, compared = 0;
};

tpu_data::Dataset test_images(const std::string &data, const std::string &dir) {
    if (data == "digits") {
        tpu_data::Dataset all = tpu_data::load_digits(dir + "/sklearn");
        return tpu_data::slice(all, all.count * 5 / 6, all.count);
    }
    return tpu_data::load_fashion_mnist(dir + "/fashion-mnist", tpu_data::Split::test);
}

// A model ready to run: its logits on the card, and those of the CPU reference of the same
// arithmetic (a compiled model's throws tpumodel::card::ExecError where it has no bit-exact
// model of a node).
struct Loaded {
    std::string precision;
    std::size_t inputs = 0, outputs = 0, batch = 0; // samples per card run
    std::function<std::vector<float>(const float *, std::size_t)> logits, reference;
    std::unique_ptr<tpu_infer::CardModel> native;
    std::unique_ptr<tpumodel::Model> graph;
    std::unique_ptr<tpumodel::card::Executor> executor;
    std::unique_ptr<tpu_serve::GraphRunner> card, cpu;
};

// A run of `r` on samples in the stack's layout: in ONNX's for a model spec's (`c`).
std::vector<float> in_layout(const tpu_serve::GraphRunner &r, const tpu_model::Checkpoint *c,
                             const float *x, std::size_t rows) {
    return c ? r.run(tpu_export::to_onnx_layout(*c, x, rows).data(), rows) : r.run(x, rows);
}

// A compiled model on the card; its samples put in ONNX's layout for a model spec's (`c`).
void load_compiled(tpurt::Device &dev, Loaded &l, tpumodel::Model m,
                   const tpu_model::Checkpoint *c) {
    l.graph = std::make_unique<tpumodel::Model>(std::move(m));
    const tpumodel::Model &g = *l.graph;
    const tpu_serve::ModelSignature sig = tpu_serve::graph_signature(g, "");
    l.precision = tpumodel::precision_name(g.precision);
    l.inputs = sig.features;
    l.outputs = sig.classes;
    l.executor = std::make_unique<tpumodel::card::Executor>(dev, g);
    l.card = std::make_unique<tpu_serve::GraphRunner>(
        g, [&l](const std::vector<tpumodel::Tensor> &in) { return l.executor->run(in); });
    l.batch = l.card->batch();
    l.cpu =
        std::make_unique<tpu_serve::GraphRunner>(g, [&g](const std::vector<tpumodel::Tensor> &in) {
            return tpumodel::card::reference_run(g, in);
        });
    l.logits = [&l, c](const float *x, std::size_t rows) { return in_layout(*l.card, c, x, rows); };
    l.reference = [&l, c](const float *x, std::size_t rows) {
        return in_layout(*l.cpu, c, x, rows);
    };
}

Result evaluate(tpurt::Device &dev, const std::string &path, const tpu_data::Dataset &test,
                std::size_t batch, std::size_t reference, bool quiet) {
    Loaded l;
    std::optional<tpu_model::Checkpoint> spec;
    std::optional<tpu_infer::Network> net;
    if (path.ends_with(".tpumodel")) {
        load_compiled(dev, l, tpumodel::load(path), nullptr);
    } else if (tpu_model::Checkpoint c = tpu_model::load_checkpoint(path);
               !tpu_infer::reads_checkpoint(c)) {
        spec = std::move(c);
        load_compiled(
            dev, l,
            tpu_export::compile_checkpoint(
                *spec, path,
                {.precision = tpumodel::Precision::Bf16, .batch = batch, .calibration = {}}),
            &*spec);
    } else {
        net = tpu_infer::network_from_checkpoint(c, path);
        l.inputs = net->inputs();
        l.outputs = net->outputs();
        l.native = tpu_infer::load_on_card(dev, *net, batch);
        l.precision = l.native->precision();
        l.batch = batch;
        l.logits = [&l](const float *x, std::size_t rows) { return l.native->logits(x, rows); };
        l.reference = [&net](const float *x, std::size_t rows) {
            return tpu_infer::reference_logits(*net, x, rows);
        };
    }
    if (l.inputs != test.sample_size() || l.outputs != test.classes())
        throw std::runtime_error(path + ": the model takes " + std::to_string(l.inputs) +
                                 " inputs into " + std::to_string(l.outputs) + " classes, " +
                                 test.name + " has " + std::to_string(test.sample_size()) +
                                 " and " + std::to_string(test.classes()));
    const auto start = std::chrono::steady_clock::now();
    const std::vector<float> logits = l.logits(test.features.data(), test.count);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    tpu_eval::ConfusionMatrix matrix(test.class_names);
    matrix.add_logits(logits.data(), test.labels.data(), test.count);

    Result r{path, l.precision, matrix.accuracy(), 0, std::min(reference, test.count)};
    std::string no_reference;
    try {
        const std::vector<float> ref =
            r.compared ? l.reference(test.features.data(), r.compared) : std::vector<float>{};
        for (std::size_t i = 0; i < ref.size(); ++i)
            if (std::memcmp(&ref[i], &logits[i], sizeof(float)) != 0)
                ++r.mismatches;
    } catch (const tpumodel::card::ExecError &e) {
        no_reference = e.what();
        r.compared = 0;
    }
    std::printf("%s: %s on the card, %s test set (%zu images, batches of %zu)\n", path.c_str(),
                r.precision.c_str(), test.name.c_str(), test.count, l.batch);
    if (!quiet)
        matrix.print(std::cout);
    std::printf("  accuracy %.2f%%, %.0f images/s on the card\n", r.accuracy * 100,
                double(test.count) / seconds);
    if (r.compared)
        std::printf("  CPU reference of the same arithmetic, first %zu images: %s (%zu of %zu "
                    "logits differ)\n",
                    r.compared, r.mismatches ? "DIFFERENT" : "bit-exact", r.mismatches,
                    r.compared * test.classes());
    else if (!no_reference.empty())
        std::printf("  no CPU reference of the card's arithmetic for this model: %s\n",
                    no_reference.c_str());
    return r;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"tpu-eval: test accuracy of checkpointed models on the card"};
    std::vector<std::string> models;
    std::string data = "fashion-mnist", data_dir;
    std::size_t batch = 256, reference = 200, limit = 0;
    bool quiet = false;
    app.add_option("--model", models,
                   "checkpoint (fp32: runs as bf16, a model spec other than the MLP and the CNN "
                   "of 3x3 blocks compiled for bf16 here; quantised: int8) or compiled model "
                   "(.tpumodel, e.g. tpu-quantise's of a model spec); repeat to compare")
        ->required();
    app.add_option("--data", data, "test set")
        ->check(CLI::IsMember({"fashion-mnist", "digits"}))
        ->capture_default_str();
    app.add_option("--data-dir", data_dir, "data sets directory (default: tpu_data::datasets_dir)");
    app.add_option("--batch", batch, "images per card batch")
        ->check(CLI::Range(1, 65535))
        ->capture_default_str();
    app.add_option("--reference", reference,
                   "images whose logits are compared with the CPU reference (0: none)")
        ->capture_default_str();
    app.add_option("--limit", limit, "only the first N test images (0: all)");
    app.add_flag("--quiet", quiet, "no confusion matrix");
    CLI11_PARSE(app, argc, argv);
    try {
        tpu_data::Dataset test =
            test_images(data, data_dir.empty() ? tpu_data::datasets_dir() : data_dir);
        if (limit > 0 && limit < test.count)
            test = tpu_data::slice(test, 0, limit);
        tpurt::Device dev = tpurt::Device::open();
        std::vector<Result> results;
        for (const std::string &m : models)
            results.push_back(evaluate(dev, m, test, batch, reference, quiet));
        int rc = 0;
        if (results.size() > 1) {
            std::printf("\nsummary (%s, %zu test images):\n", test.name.c_str(), test.count);
            for (const Result &r : results)
                std::printf("  %-5s %7.2f%%  %+6.2f points against the first  %s\n",
                            r.precision.c_str(), r.accuracy * 100,
                            (r.accuracy - results[0].accuracy) * 100, r.path.c_str());
        }
        for (const Result &r : results)
            if (r.mismatches)
                rc = 1;
        return rc;
    } catch (const std::exception &e) {
        std::cerr << "tpu-eval: " << e.what() << "\n";
        return 1;
    }
}
