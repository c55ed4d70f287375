// SPDX-License-Identifier: MIT
// inference_test.cpp - graphs for inference (tpu_nn/inference.hpp through tpu_infer): the old MLP
// and CNN checkpoints (tests/golden/checkpoints) give the bf16 and int8 logits the hand-written
// inference networks computed, bit for bit, on the in-process card and on the CPU model of its
// arithmetic, and the quantiser writes the same int8 checkpoint; other graphs (5x5 kernels,
// strides, no padding, odd sizes) on the card equal the CPU model bit for bit in
// bf16 and int8, in batches split over several card runs, and stay close to fp32.
#include "nn_fixtures.hpp"

#include <tpu_infer/card_model.hpp>
#include <tpu_infer/reference.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/quantise.hpp>
#include <tpu_nn/spec.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

const std::string golden = TPU_GOLDEN_DIR "/checkpoints/";

// The card's logits (in card runs of at most max_batch rows) and the CPU model's, which must be
// the same bits.
std::vector<float> card_logits(const tpu_infer::Network &net, const std::vector<float> &x,
                               std::size_t rows, std::size_t max_batch) {
    tpurt::Device dev = tpurt::Device::open_in_process({.threads = 1});
    const std::vector<float> card =
        tpu_infer::load_on_card(dev, net, max_batch)->logits(x.data(), rows);
    CHECK(card == tpu_infer::reference_logits(net, x.data(), rows));
    return card;
}

} // namespace

TEST_CASE("old MLP and CNN checkpoints give the old bf16 and int8 logits", "[inference]") {
    for (const std::string stem : {"cpu-mlp", "cpu-cnn"}) {
        INFO(stem);
        const std::vector<float> probe = tpu_test::normals(8 * 64, 12);
        const tpu_infer::Network net = tpu_infer::load_network(golden + stem + ".tpuckpt");
        CHECK(card_logits(net, probe, 8, 3) ==
              tpu_test::recorded_logits(golden + stem + ".bf16.logits"));

        // The quantiser, calibrated on the rows the old one was, writes the same checkpoint, but
        // for the input scales after a convolution: it calibrates on the CPU executor's fp32
        // forward pass, whose convolution sums run in another order than the old networks'
        // loops, so a largest activation may differ in its last bits.
        const tpu_model::Checkpoint want =
            tpu_model::load_checkpoint(golden + stem + ".int8.tpuckpt");
        const std::vector<float> calibration = tpu_test::normals(64 * 64, 13);
        const tpu_model::Checkpoint mine =
            tpu_infer::quantised_checkpoint(net, tpu_infer::quantise(net, calibration.data(), 64));
        CHECK(mine.model == want.model);
        CHECK(mine.notes == want.notes);
        REQUIRE(mine.tensors.size() == want.tensors.size());
        for (std::size_t i = 0; i < want.tensors.size(); ++i) {
            CHECK(mine.tensors[i].name == want.tensors[i].name);
            CHECK(mine.tensors[i].shape == want.tensors[i].shape);
            if (!mine.tensors[i].name.ends_with(".xscale") || stem == "cpu-mlp") {
                CHECK(mine.tensors[i].data == want.tensors[i].data);
                continue;
            }
            const float a = mine.tensors[i].data.at(0), b = want.tensors[i].data.at(0);
            INFO(want.tensors[i].name << ": " << a << " against " << b);
            CHECK(std::fabs(a - b) <= 4e-7f * b);
        }
        const tpu_infer::Network int8 = tpu_infer::load_network(golden + stem + ".int8.tpuckpt");
        CHECK(card_logits(int8, probe, 8, 3) ==
              tpu_test::recorded_logits(golden + stem + ".int8.logits"));
    }
}

TEST_CASE("other graphs on the card equal the CPU model of its arithmetic", "[inference]") {
    for (const std::string spec :
         {"cnn-8x8x1-c4k5-c8-d16-10", "cnn-9x7x2-conv4k3s2p0-relu-max2-d12-5", "cnn-6x6x3-c8k1-d-7",
          "mlp-20-9-9-3"}) {
        INFO(spec);
        tpu_infer::Network net = tpu_test::random_network(spec, 5);
        const std::size_t rows = 10;
        const std::vector<float> x = tpu_test::normals(rows * net.inputs(), 21);
        tpu_nn::CpuExecutor cpu(net.graph, 0);
        cpu.values() = net.values;
        const std::vector<float> standard = tpu_infer::standardise(net.input, x.data(), x.size());
        const std::vector<float> want = cpu.forward(standard.data(), rows);
        float scale = 0;
        for (float v : want)
            scale = std::max(scale, std::fabs(v));

        const std::vector<float> bf16 = card_logits(net, x, rows, 4);
        net.int8 = tpu_infer::quantise(net, x.data(), rows);
        const std::vector<float> int8 = card_logits(net, x, rows, 4);
        float bf16_error = 0, int8_error = 0;
        for (std::size_t i = 0; i < want.size(); ++i) {
            bf16_error = std::max(bf16_error, std::fabs(bf16[i] - want[i]));
            int8_error = std::max(int8_error, std::fabs(int8[i] - want[i]));
        }
        INFO("largest |logit| " << scale << ", bf16 error " << bf16_error << ", int8 "
                                << int8_error);
        CHECK(bf16_error < 0.03f * scale);
        CHECK(int8_error < 0.08f * scale);
    }
}
