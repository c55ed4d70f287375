// SPDX-License-Identifier: MIT
// checkpoint_test.cpp - checkpoint files: a round trip, a resumed run (MLP and CNN, SGD and Adam)
// that continues bit for bit where the uninterrupted one goes, and every kind of damaged file named
// in its error.
#include <tpu_data/batches.hpp>
#include <tpu_data/error.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/spec.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <unistd.h>

namespace {

struct TempFile {
    std::string path;
    TempFile() {
        char templ[] = "/tmp/tpu-ckpt-XXXXXX";
        const int fd = mkstemp(templ);
        REQUIRE(fd >= 0);
        close(fd);
        path = templ;
    }
    ~TempFile() { std::remove(path.c_str()); }
    std::vector<char> bytes() const {
        std::ifstream in(path, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    void write(const std::vector<char> &b) const {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(b.data(), std::streamsize(b.size()));
    }
};

// A fixed random classification problem: 64 samples of 8 features, 3 classes.
tpu_data::Dataset toy_set() {
    tpu_data::Dataset d;
    d.sample_shape = {8};
    d.count = 64;
    d.class_names = {"a", "b", "c"};
    tpu_data::SplitMix64 rng(9);
    for (std::size_t i = 0; i < d.count * 8; ++i)
        d.features.push_back(float(rng.below(1000)) / 500.0f - 1.0f);
    for (std::size_t i = 0; i < d.count; ++i)
        d.labels.push_back(std::uint8_t(rng.below(3)));
    return d;
}

template <typename Net, typename Opt>
void train_epochs(Net &net, Opt &opt, const tpu_data::Dataset &d, std::uint64_t first,
                  std::uint64_t last) {
    tpu_data::Batches batches(d, 16, 5);
    tpu_data::Batch b;
    for (std::uint64_t e = first; e < last; ++e) {
        batches.start_epoch(e);
        while (batches.next(b)) {
            const std::vector<float> &logits = net.forward(b.features.data(), b.size);
            net.backward(
                tpu_model::softmax_cross_entropy(logits, b.size, 3, b.labels.data()).dlogits);
            opt.step(net.params());
        }
    }
}

// `make(seed)` builds the network (an MLP, or a CNN of the toy set's 8 features as 4x2x1
// images), as graphs on the CPU executor.
template <typename Make, typename Opt> void check_resume(Make make, Opt fresh_opt) {
    const tpu_data::Dataset d = toy_set();
    auto straight = make(1);
    Opt opt_straight = fresh_opt;
    train_epochs(straight, opt_straight, d, 0, 4);

    auto first = make(1);
    Opt opt_first = fresh_opt;
    train_epochs(first, opt_first, d, 0, 2);
    tpu_model::Checkpoint c;
    c.model = "toy";
    c.epoch = 2;
    first.save(c);
    opt_first.save(c);
    TempFile f;
    tpu_model::save_checkpoint(c, f.path);

    const tpu_model::Checkpoint back = tpu_model::load_checkpoint(f.path);
    CHECK(back.epoch == 2);
    auto resumed = make(99); // other initial weights, all overwritten
    resumed.load(back);
    Opt opt_resumed = fresh_opt;
    opt_resumed.load(back, resumed.params());
    train_epochs(resumed, opt_resumed, d, back.epoch, 4);
    const std::vector<tpu_model::Param> want = straight.params(), got = resumed.params();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        INFO("parameter " << want[i].key);
        CHECK(*got[i].value == *want[i].value);
    }
}

tpu_nn::CpuExecutor toy_mlp(std::uint64_t seed) {
    return tpu_nn::CpuExecutor(tpu_nn::graph_from_spec("mlp-8-6-3"), seed);
}
tpu_nn::CpuExecutor toy_cnn(std::uint64_t seed) {
    return tpu_nn::CpuExecutor(tpu_nn::graph_from_spec("cnn-4x2x1-c3-d4-3"), seed);
}

} // namespace

TEST_CASE("a checkpoint round-trips names, shapes, values and run state") {
    tpu_model::Checkpoint c;
    c.model = "toy";
    c.epoch = 3;
    c.step = 1234;
    c.seed = 0xfeedull;
    c.notes = {{"optimizer", "adam"}, {"lr", "0.001"}};
    c.tensors = {{"w", {2, 3}, {1, -2, 3.5f, 0, 1e-30f, -0.0f}}, {"empty-shape", {}, {7}}};
    TempFile f;
    tpu_model::save_checkpoint(c, f.path);
    const tpu_model::Checkpoint back = tpu_model::load_checkpoint(f.path);
    CHECK(back.model == "toy");
    CHECK(back.epoch == 3);
    CHECK(back.step == 1234);
    CHECK(back.seed == 0xfeedull);
    CHECK(back.notes == c.notes);
    REQUIRE(back.tensors.size() == 2);
    CHECK(back.tensors[0].shape == std::vector<std::uint32_t>{2, 3});
    CHECK(back.tensors[0].data == c.tensors[0].data);
    CHECK(back.find("empty-shape")->data == std::vector<float>{7});
}

TEST_CASE("a run resumed from a checkpoint continues exactly as the uninterrupted run") {
    SECTION("MLP, SGD with momentum") {
        check_resume(toy_mlp, tpu_model::SgdMomentum(0.05f, 0.9f));
    }
    SECTION("MLP, Adam") {
        check_resume(toy_mlp, tpu_model::Adam(1e-2f));
    }
    SECTION("CNN, SGD with momentum") {
        check_resume(toy_cnn, tpu_model::SgdMomentum(0.05f, 0.9f));
    }
    SECTION("CNN, Adam") {
        check_resume(toy_cnn, tpu_model::Adam(1e-2f));
    }
}

TEST_CASE("damaged checkpoints are rejected with what is wrong") {
    tpu_model::Checkpoint c;
    c.model = "toy";
    c.tensors = {{"w", {4}, {1, 2, 3, 4}}};
    TempFile f;
    tpu_model::save_checkpoint(c, f.path);
    const std::vector<char> good = f.bytes();
    auto reject = [&](std::vector<char> bytes, const std::string &why) {
        f.write(bytes);
        CHECK_THROWS_WITH(tpu_model::load_checkpoint(f.path),
                          Catch::StartsWith(f.path + ": ") && Catch::Contains(why));
    };
    reject(std::vector<char>(good.begin(), good.end() - 3), "truncated or padded");
    std::vector<char> flipped = good;
    flipped.back() ^= 0x40;
    reject(flipped, "checksum mismatch");
    std::vector<char> other = good;
    other[0] = 'X';
    reject(other, "not a checkpoint");
    std::vector<char> version = good;
    version[8] = 2;
    reject(version, "format version 2 is not supported");
    reject(std::vector<char>(good.begin(), good.begin() + 12), "header is cut short");
    CHECK_THROWS_WITH(tpu_model::load_checkpoint("/nonexistent/ckpt"),
                      Catch::Contains("/nonexistent/ckpt: cannot open"));

    tpu_nn::CpuExecutor net = toy_mlp(1);
    CHECK_THROWS_WITH(net.load(c), Catch::Contains("no tensor layer0.w"));
    tpu_model::Checkpoint wrong;
    wrong.model = "mlp-8-5-3";
    tpu_nn::CpuExecutor(tpu_nn::graph_from_spec("mlp-8-5-3"), 1).save(wrong);
    CHECK_THROWS_WITH(net.load(wrong),
                      Catch::Contains("tensor layer0.w is not of this model's shape 8x6"));
}
