// SPDX-License-Identifier: MIT
// tpu-eval: the test accuracy of checkpointed models run on the card (an fp32 checkpoint as bf16,
// a quantised one as int8), with the confusion matrix, the card's throughput, and the logits of
// the first --reference test images compared bit for bit with the CPU reference of the same
// arithmetic. Several --model options are compared in one summary (e.g. bf16 against int8).
#include "tpu_infer/card_model.hpp"
#include "tpu_infer/reference.hpp"

#include <tpu_data/dataset.hpp>
#include <tpu_eval/metrics.hpp>

#include <CLI/CLI.hpp>
#include <tpurt/device.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

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

Result evaluate(tpurt::Device &dev, const std::string &path, const tpu_data::Dataset &test,
                std::size_t batch, std::size_t reference, bool quiet) {
    const tpu_infer::Network net = tpu_infer::load_network(path);
    if (tpu_infer::network_inputs(net) != test.sample_size() ||
        tpu_infer::network_outputs(net) != test.classes())
        throw std::runtime_error(path + ": the model takes " +
                                 std::to_string(tpu_infer::network_inputs(net)) + " inputs into " +
                                 std::to_string(tpu_infer::network_outputs(net)) + " classes, " +
                                 test.name + " has " + std::to_string(test.sample_size()) +
                                 " and " + std::to_string(test.classes()));
    auto model = tpu_infer::load_on_card(dev, net, batch);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<float> logits = model->logits(test.features.data(), test.count);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    tpu_eval::ConfusionMatrix matrix(test.class_names);
    matrix.add_logits(logits.data(), test.labels.data(), test.count);

    Result r{path, model->precision(), matrix.accuracy(), 0, std::min(reference, test.count)};
    if (r.compared) {
        const std::vector<float> ref =
            tpu_infer::reference_logits(net, test.features.data(), r.compared);
        for (std::size_t i = 0; i < ref.size(); ++i)
            if (std::memcmp(&ref[i], &logits[i], sizeof(float)) != 0)
                ++r.mismatches;
    }
    std::printf("%s: %s on the card, %s test set (%zu images, batches of %zu)\n", path.c_str(),
                r.precision.c_str(), test.name.c_str(), test.count, batch);
    if (!quiet)
        matrix.print(std::cout);
    std::printf("  accuracy %.2f%%, %.0f images/s on the card\n", r.accuracy * 100,
                double(test.count) / seconds);
    if (r.compared)
        std::printf("  CPU reference of the same arithmetic, first %zu images: %s (%zu of %zu "
                    "logits differ)\n",
                    r.compared, r.mismatches ? "DIFFERENT" : "bit-exact", r.mismatches,
                    r.compared * test.classes());
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
                   "checkpoint (fp32: runs as bf16; quantised: int8); repeat "
                   "to compare")
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
