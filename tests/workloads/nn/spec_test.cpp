// SPDX-License-Identifier: MIT
// spec_test.cpp - model spec strings (tpu_nn/spec.hpp): canonical strings print back as they
// were parsed, today's model names build today's architectures (the CPU CNN's and MLP's
// parameter names, shapes and optimiser keys), new tokens build the layers they say, and every
// bad spec is refused with an error naming its token.
#include <tpu_nn/spec.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace {

std::string refusal(const std::string &spec) {
    try {
        tpu_nn::graph_from_spec(spec);
    } catch (const std::invalid_argument &e) {
        return e.what();
    }
    return "accepted";
}

std::vector<std::string> node_kinds(const tpu_nn::Graph &g) {
    std::vector<std::string> k;
    for (const tpu_nn::Node &n : g.nodes())
        k.push_back(n.kind == tpu_nn::OpKind::Activation ? tpu_nn::act_name(n.attrs.act)
                                                         : tpu_nn::op_rule(n.kind).name);
    return k;
}

} // namespace

TEST_CASE("model specs print back as they were written") {
    for (const char *s :
         {"mlp-784-256-128-10", "mlp-64-10", "cnn-28x28x1-c16-c32-d128-10",
          "cnn-28x28x1-c32-c64-d128-10", "cnn-8x8x1-c4-d-10", "cnn-8x8x2-c4-c8-d16-12-10",
          "cnn-28x28x1-c16k5-c32k5-d128-10", "cnn-8x8x2-conv8-relu-res-resk5-max2-d16-10",
          "cnn-8x8x2-conv4s2g2-tanh-avg3s1p1-conv6k1-gelu-max3s2p1-flat-ln-"
          "sigmoid-d8-10",
          "cnn-8x8x1-conv4k5p0-relu-flat-10", "cnn-8x8x1-c4k4p0s2-10"}) {
        INFO(s);
        const tpu_nn::Spec spec = tpu_nn::parse_spec(s);
        const std::string printed = tpu_nn::print_spec(spec);
        if (std::string(s) == "cnn-8x8x1-c4k4p0s2-10") // options in another order
            CHECK(printed == "cnn-8x8x1-c4k4s2p0-d-10");
        else
            CHECK(printed == s);
        CHECK(tpu_nn::build_graph(spec).name() == printed);
    }
    // The old names' empty hidden list and an implicit flatten read alike.
    CHECK(tpu_nn::print_spec(tpu_nn::parse_spec("cnn-8x8x1-c4-10")) == "cnn-8x8x1-c4-d-10");
}

TEST_CASE("today's CNN and MLP names build their architectures and parameter names") {
    // The optimiser keys and sizes of the hand-written CPU CNN's parameters, which its
    // checkpoints hold (workloads/README.md, "Checkpoint format").
    const tpu_nn::Graph small = tpu_nn::graph_from_spec("cnn-8x8x2-c3-c4-d5-6-3");
    CHECK(small.name() == "cnn-8x8x2-c3-c4-d5-6-3");
    const std::vector<std::pair<std::string, std::size_t>> want = {
        {".conv0.w", 9 * 2 * 3},      {".conv0.b", 3},  {".conv1.w", 9 * 3 * 4}, {".conv1.b", 4},
        {".layer0.w", 2 * 2 * 4 * 5}, {".layer0.b", 5}, {".layer1.w", 5 * 6},    {".layer1.b", 6},
        {".layer2.w", 6 * 3},         {".layer2.b", 3}};
    REQUIRE(small.params().size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(small.param_key(i) == want[i].first);
        CHECK(tpu_nn::elements(small.params()[i].shape) == want[i].second);
    }
    const tpu_nn::Graph fashion = tpu_nn::graph_from_spec("cnn-28x28x1-c16-c32-d128-10");
    CHECK(fashion.param_count() == 9 * 16 + 16 + 9 * 16 * 32 + 32 + 1568 * 128 + 128 + 1290);
    CHECK(node_kinds(fashion) == std::vector<std::string>{"input", "conv2d", "relu", "pool",
                                                          "conv2d", "relu", "pool", "flatten",
                                                          "dense", "relu", "dense"});
    CHECK(fashion.node(1).shape == tpu_nn::Shape{28, 28, 16});
    CHECK(fashion.node(6).shape == tpu_nn::Shape{7, 7, 32});
    CHECK(fashion.params()[0].shape == tpu_nn::Shape{3, 3, 1, 16});

    const tpu_nn::Graph mlp = tpu_nn::graph_from_spec("mlp-784-256-128-10");
    const std::vector<std::string> mlp_keys = {"0.w", "0.b", "1.w", "1.b", "2.w", "2.b"};
    REQUIRE(mlp.params().size() == mlp_keys.size());
    for (std::size_t i = 0; i < mlp_keys.size(); ++i)
        CHECK(mlp.param_key(i) == mlp_keys[i]);
    CHECK(mlp.params()[0].name == "layer0.w");
    CHECK(mlp.params()[0].shape == tpu_nn::Shape{784, 256});
}

TEST_CASE("new spec tokens build the layers they name") {
    const tpu_nn::Graph g = tpu_nn::graph_from_spec("cnn-8x8x2-c4k5s2-res-avg2-d6-3");
    CHECK(node_kinds(g) == std::vector<std::string>{"input", "conv2d", "relu", "pool", "conv2d",
                                                    "layer_norm", "relu", "conv2d", "layer_norm",
                                                    "add", "relu", "pool", "flatten", "dense",
                                                    "relu", "dense"});
    const tpu_nn::Window &k = g.node(1).attrs.window;
    CHECK((k.kh == 5 && k.sh == 2 && k.ph == 2));
    CHECK(g.node(1).shape == tpu_nn::Shape{4, 4, 4}); // (8 + 4 - 5) / 2 + 1
    CHECK(g.node(3).shape == tpu_nn::Shape{2, 2, 4});
    CHECK(g.node(9).inputs == std::vector<tpu_nn::NodeId>{3, 8}); // the residual's add
    CHECK(g.node(11).attrs.pool == tpu_nn::PoolKind::Avg);
    CHECK(g.params()[2].name == "conv1.w");
    CHECK(g.params()[4].name == "ln0.g");
    CHECK(g.params()[4].shape == tpu_nn::Shape{4});
    const tpu_nn::Graph grouped = tpu_nn::graph_from_spec("cnn-8x8x4-conv6k1g2-d-3");
    CHECK(grouped.params()[0].shape == tpu_nn::Shape{1, 1, 2, 6});
}

TEST_CASE("a bad model spec is refused naming its token") {
    using Catch::Matchers::Contains;
    CHECK_THAT(refusal("tcn-8x8x1-10"), Contains("token 1 \"tcn\": a model spec starts with"));
    CHECK_THAT(refusal("cnn-28x28x1-c16-q5-10"), Contains("token 4 \"q5\": unknown layer"));
    CHECK_THAT(refusal("cnn-28x28-c16-10"), Contains("token 2 \"28x28\": expected the input"));
    CHECK_THAT(refusal("cnn-8x8x1-c4kk-10"), Contains("\"c4kk\": expected a number for the "
                                                      "kernel size"));
    CHECK_THAT(refusal("cnn-8x8x1-c4k3k3-10"), Contains("option 'k' given twice"));
    CHECK_THAT(refusal("cnn-8x8x1-c4q2-10"), Contains("unknown option 'q'"));
    CHECK_THAT(refusal("cnn-8x8x1-c0-10"), Contains("the filters must be at least 1"));
    CHECK_THAT(refusal("cnn-8x8x1-c4-d"), Contains("token 4 \"d\": expected a number for the "
                                                   "classes"));
    CHECK_THAT(refusal("cnn-8x8x1"), Contains("expected an input and the classes"));
    CHECK_THAT(refusal("mlp-784-d128-10"), Contains("an mlp spec lists only layer sizes"));
    CHECK_THAT(refusal("cnn-8x8x1-resk4-10"), Contains("kernel must be odd"));
    CHECK_THAT(refusal("cnn-4x4x1-c16k7p0-10"),
               Contains("layer 1 \"c16k7p0\": conv2d conv0: a 7x7 kernel does not fit the 4x4x1 "
                        "input"));
    CHECK_THAT(refusal("cnn-8x8x1-c4-c4-c4-c4-10"),
               Contains("layer 4 \"c4\": pool: a 2x2 window does not fit the 1x1x4 input"));
    CHECK_THAT(refusal("cnn-8x8x1-c4g3-10"),
               Contains("3 groups do not divide the 1 input channels"));
    CHECK_THAT(refusal("cnn-8x8x4-c6g4-10"), Contains("4 groups do not divide the 6 filters"));
    CHECK_THAT(refusal("cnn-8x8x1-c4k3p3-10"), Contains("padding 3x3 must be below the kernel"));
    CHECK_THAT(refusal("cnn-8x8x1-flat-max2-10"), Contains("pooling needs an image"));
    CHECK_THAT(refusal("cnn-8x8x1-max17-10"), Contains("at most 16x16"));
}

TEST_CASE("graphs built in code check their nodes") {
    using Catch::Matchers::Contains;
    tpu_nn::Graph g({4, 4, 2});
    const tpu_nn::NodeId c = g.conv2d(g.input(), "a", 3, {3, 3, 1, 1, 1, 1});
    CHECK_THROWS_WITH(g.add_nodes(c, g.input()), Contains("add: adds two nodes of one shape, not "
                                                          "4x4x3 and 4x4x2"));
    CHECK_THROWS_WITH(g.conv2d(c, "a", 3, {1, 1, 1, 1, 0, 0}),
                      Contains("a parameter a.w exists already"));
    CHECK_THROWS_WITH(g.dense(c, "d", 4), Contains("dense d: needs a vector of features"));
    tpu_nn::Attrs two;
    two.units = 2;
    CHECK_THROWS_WITH(g.add(tpu_nn::OpKind::Dense, two, {g.flatten(c)}), Contains("needs a name"));
    CHECK_THROWS_WITH(g.flatten(9), Contains("input node 9 does not exist"));
    CHECK_THROWS_WITH(tpu_nn::Graph({4, 4}), Contains("the input must be an image"));
}
