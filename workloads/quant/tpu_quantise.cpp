// SPDX-License-Identifier: MIT
// tpu-quantise: post-training int8 quantisation of an fp32 MLP checkpoint. Calibrates the
// activation ranges on the first --calibration images of the model's training set, quantises the
// weights per output channel and writes the quantised checkpoint (workloads/README.md).
#include "tpu_quant/quantise.hpp"

#include <tpu_data/dataset.hpp>
#include <tpu_model/checkpoint.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

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

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"tpu-quantise: int8 post-training quantisation of an MLP checkpoint"};
    std::string model, out, data = "fashion-mnist", data_dir;
    std::size_t calibration = 2000;
    app.add_option("--model", model, "fp32 checkpoint (tpu-train-cpu)")->required();
    app.add_option("--out", out, "quantised checkpoint to write")->required();
    app.add_option("--data", data, "training set to calibrate on")
        ->check(CLI::IsMember({"fashion-mnist", "digits"}))
        ->capture_default_str();
    app.add_option("--data-dir", data_dir, "data sets directory (default: tpu_data::datasets_dir)");
    app.add_option("--calibration", calibration, "calibration images")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        const tpu_infer::FloatMlp net =
            tpu_infer::float_mlp_from_checkpoint(tpu_model::load_checkpoint(model), model);
        tpu_data::Dataset train =
            training_images(data, data_dir.empty() ? tpu_data::datasets_dir() : data_dir);
        if (train.sample_size() != net.inputs()) {
            std::cerr << "tpu-quantise: " << model << " takes " << net.inputs() << " inputs, "
                      << data << " images have " << train.sample_size() << "\n";
            return 1;
        }
        const std::size_t n = std::min(calibration, train.count);
        const tpu_quant::Calibration cal = tpu_quant::calibrate(net, train.features.data(), n);
        const tpu_infer::Int8Mlp q = tpu_quant::quantise(net, cal);
        tpu_model::save_checkpoint(tpu_infer::int8_mlp_to_checkpoint(q), out);
        std::printf("quantised %s on %zu %s images:\n", net.name.c_str(), n, data.c_str());
        for (std::size_t i = 0; i < q.layers.size(); ++i) {
            const auto &l = q.layers[i];
            float lo = l.w_scale[0], hi = l.w_scale[0];
            for (float s : l.w_scale)
                lo = std::min(lo, s), hi = std::max(hi, s);
            std::printf("  layer %zu: %zux%zu, input range +-%.4g (step %.4g), weight steps "
                        "%.3g..%.3g\n",
                        i, l.in, l.out, double(cal.max_abs[i]), double(l.x_scale), double(lo),
                        double(hi));
        }
        std::printf("wrote %s\n", out.c_str());
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "tpu-quantise: " << e.what() << "\n";
        return 1;
    }
}
