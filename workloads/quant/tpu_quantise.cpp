// SPDX-License-Identifier: MIT
// tpu-quantise: post-training int8 quantisation of an fp32 checkpoint (tpu_nn's quantiser) of a
// model whose layers are dense layers and convolutions joined by ReLU, max pooling and flatten
// (the MLP, the CNN, spec models such as c16k5). Calibrates the input ranges of its layers on
// the first --calibration images of the model's training set, quantises the weights per output
// channel and writes the quantised checkpoint (workloads/README.md). Any other model spec's
// checkpoint, and any with --out x.tpumodel, is compiled for int8 in the process, calibrated on
// the same images (tpu_export::compile_checkpoint), and written as a compiled model that
// tpu-serve and tpu-eval run.
#include <tpu_data/dataset.hpp>
#include <tpu_export/compile_checkpoint.hpp>
#include <tpu_infer/network.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_nn/quantise.hpp>
#include <tpu_nn/spec.hpp>
#include <tpumodel/file.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>

namespace {

// The training images the trainer used (tpu-train-cpu: digits' first 5/6, Fashion-MNIST's
// training split), raw (the network standardises them itself).
tpu_data::Dataset training_images(const std::string &data, const std::string &dir) {
    if (data == "digits") {
        tpu_data::Dataset all = tpu_data::load_digits(dir + "/sklearn");
        return tpu_data::slice(all, 0, all.count * 5 / 6);
    }
    return tpu_data::load_fashion_mnist(dir + "/fashion-mnist", tpu_data::Split::train);
}

// Calibrates `net` on the training images, quantises it and writes the checkpoint, with one line
// per layer: its input range and the spread of its weight steps.
void quantise_to(const tpu_infer::Network &net, const tpu_data::Dataset &train,
                 std::size_t calibration, const std::string &data, const std::string &out) {
    const std::size_t n = std::min(calibration, train.count);
    const tpu_nn::Quantised q = tpu_infer::quantise(net, train.features.data(), n);
    std::printf("quantised %s on %zu %s images:\n", net.name.c_str(), n, data.c_str());
    for (std::size_t i = 0; i < q.layers.size(); ++i) {
        const tpu_nn::Int8Layer &l = q.layers[i];
        const tpu_nn::Node &node = net.graph.node(l.node);
        const auto [lo, hi] = std::minmax_element(l.w_scale.begin(), l.w_scale.end());
        std::printf(
            "  %s: %s -> %zu, input range +-%.4g (step %.4g), weight steps %.3g..%.3g\n",
            node.name.c_str(), tpu_nn::to_string(net.graph.node(node.inputs[0]).shape).c_str(),
            l.w_scale.size(), double(l.x_scale) * 127, double(l.x_scale), double(*lo), double(*hi));
    }
    tpu_model::save_checkpoint(tpu_infer::quantised_checkpoint(net, q), out);
    std::printf("wrote %s\n", out.c_str());
}

// A model spec's checkpoint compiled for int8, calibrated on the first training images.
void compile_int8(const tpu_model::Checkpoint &c, const std::string &path,
                  const tpu_data::Dataset &train, std::size_t calibration, std::size_t batch,
                  const std::string &data, const std::string &out) {
    if (!out.ends_with(".tpumodel"))
        throw std::runtime_error(out + ": " + c.model +
                                 " is quantised into a compiled model: name it x.tpumodel");
    const std::size_t n = std::min(calibration, train.count);
    const tpumodel::Model m = tpu_export::compile_checkpoint(
        c, path,
        {tpumodel::Precision::Int8, batch,
         std::vector<float>(train.features.begin(),
                            train.features.begin() + std::ptrdiff_t(n * train.sample_size()))});
    std::printf("compiled %s for int8 (batch %zu), calibrated on %zu %s images\n", c.model.c_str(),
                batch, n, data.c_str());
    tpumodel::save(m, out);
    std::printf("wrote %s\n", out.c_str());
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"tpu-quantise: int8 post-training quantisation of a checkpoint: the MLP's and "
                 "the CNN's into a quantised checkpoint, any other model spec's into an int8 "
                 "compiled model (.tpumodel)"};
    std::string model, out, data = "fashion-mnist", data_dir;
    std::size_t calibration = 2000;
    std::size_t batch = 32;
    app.add_option("--model", model, "fp32 checkpoint (tpu-train-cpu, tpu-train)")->required();
    app.add_option("--out", out,
                   "quantised checkpoint to write; x.tpumodel: an int8 compiled model for "
                   "tpu-serve and tpu-eval instead (the only kind for a model spec with layer "
                   "norms, residuals, other activations or poolings, or groups)")
        ->required();
    app.add_option("--batch", batch, "samples per run of a compiled model (model specs only)")
        ->check(CLI::Range(1, 65535))
        ->capture_default_str();
    app.add_option("--data", data, "training set to calibrate on")
        ->check(CLI::IsMember({"fashion-mnist", "digits"}))
        ->capture_default_str();
    app.add_option("--data-dir", data_dir, "data sets directory (default: tpu_data::datasets_dir)");
    app.add_option("--calibration", calibration, "calibration images")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        const tpu_model::Checkpoint c = tpu_model::load_checkpoint(model);
        tpu_data::Dataset train =
            training_images(data, data_dir.empty() ? tpu_data::datasets_dir() : data_dir);
        const auto check_inputs = [&](std::size_t inputs) {
            if (train.sample_size() != inputs)
                throw std::runtime_error(model + " takes " + std::to_string(inputs) + " inputs, " +
                                         data + " images have " +
                                         std::to_string(train.sample_size()));
        };
        if (!tpu_infer::reads_checkpoint(c) || out.ends_with(".tpumodel")) {
            check_inputs(tpu_nn::elements(tpu_nn::parse_spec(c.model).input));
            compile_int8(c, model, train, calibration, batch, data, out);
        } else {
            const tpu_infer::Network net = tpu_infer::network_from_checkpoint(c, model);
            if (net.int8)
                throw std::runtime_error(model + " is already quantised");
            check_inputs(net.inputs());
            quantise_to(net, train, calibration, data, out);
        }
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "tpu-quantise: " << e.what() << "\n";
        return 1;
    }
}
