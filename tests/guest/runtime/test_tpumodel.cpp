// SPDX-License-Identifier: MIT
// test_tpumodel.cpp - compiled models (.tpumodel, written on the host by tests/compiler's
// card tests into $TPU_MODELS_DIR with their tolerances in models.txt) run on the real card by
// tpumodel::card::Executor against the CPU reference tpumodel::cpu::run_model() in this guest:
// each element within the model's tolerance times the output's largest magnitude (0: bit for
// bit; 2e-2 for the CNN compiled for bf16, whose reference is fp32), twice on the constants
// uploaded once.
#include "runtime_helpers.hpp"

#include <tpumodel/card_executor.hpp>
#include <tpumodel/cpu_executor.hpp>
#include <tpumodel/file.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

// Deterministic inputs in [-1, 1) of the graph input's shape.
tpumodel::Tensor input_for(const tpumodel::Tensor &decl, std::uint32_t seed) {
    tpumodel::Tensor t = decl;
    std::vector<float> v(t.element_count());
    std::uint32_t s = seed * 2654435761u + 1;
    for (float &x : v) {
        s = s * 1664525u + 1013904223u;
        x = float(s >> 8) / float(1u << 23) - 1.0f;
    }
    t.data.resize(v.size() * 4);
    std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
}

std::vector<float> values(const tpumodel::Tensor &t) {
    std::vector<float> v(t.element_count());
    std::memcpy(v.data(), t.data.data(), v.size() * 4);
    return v;
}

} // namespace

TEST_CASE("compiled models run on the card as on the CPU", "[tpumodel]") {
    const char *dir = std::getenv("TPU_MODELS_DIR");
    REQUIRE(dir);
    std::ifstream list(std::string(dir) + "/models.txt");
    REQUIRE(list);
    std::string name;
    float tolerance = 0;
    int models = 0;
    while (list >> name >> tolerance) {
        ++models;
        INFO("model " << name << ", tolerance " << tolerance);
        const tpumodel::Model m = tpumodel::load(std::string(dir) + "/" + name + ".tpumodel");
        tpumodel::card::Executor exe(guest_test::device(), m);
        std::vector<tpumodel::Tensor> in;
        for (std::uint32_t id : m.inputs)
            in.push_back(input_for(m.tensors[id], std::uint32_t(in.size() + 1)));
        const std::vector<tpumodel::Tensor> want = tpumodel::cpu::run_model(m, in);
        for (int round = 0; round < 2; ++round) {
            const std::vector<tpumodel::Tensor> got = exe.run(in);
            REQUIRE(got.size() == want.size());
            for (std::size_t o = 0; o < got.size(); ++o) {
                REQUIRE(got[o].shape == want[o].shape);
                const std::vector<float> g = values(got[o]), w = values(want[o]);
                float scale = 0;
                for (float v : w)
                    scale = std::max(scale, std::fabs(v));
                for (std::size_t i = 0; i < g.size(); ++i) {
                    INFO("output " << o << " element " << i << ": card " << g[i] << ", cpu "
                                   << w[i]);
                    CHECK(std::fabs(g[i] - w[i]) <= tolerance * scale);
                }
            }
        }
    }
    CHECK(models == 5);
}
