// SPDX-License-Identifier: MIT
// serve_recovery_test.cpp - tpu-serve when the card loses its model (RecoveringRunner): a batch
// lost once is run again on the model loaded again; lost twice, or with no model to load, its
// requests get 503 with Retry-After and the server reports not ready until a thread of the runner
// has loaded the model again; other errors pass through. The card's failures are played by the
// model functions here (the guest test vm_serve_faults injects real ones into the real card).
#include <tpu_serve/recovering_runner.hpp>
#include <tpu_serve/server.hpp>

#include <httplib.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace {

// The card losing a batch, as tpurt::is_retryable() would call it.
struct Lost : std::runtime_error {
    Lost() : std::runtime_error("job 3 failed: DRM_TPU_JOB_CANCELED") {}
};
bool lost(const std::exception &e) {
    return dynamic_cast<const Lost *>(&e) != nullptr;
}

// A model whose next `fail` batches are lost and whose next `fail_opens` loads fail; it answers
// every row with {rows, loads}.
struct FlakyCard {
    std::atomic<int> fail{0}, fail_opens{0}, loads{0};
    tpu_serve::RecoveringRunner::Open open() {
        return [this]() -> tpu_serve::Batcher::RunFn {
            if (fail_opens > 0) {
                --fail_opens;
                throw std::runtime_error("no card");
            }
            const int generation = ++loads;
            return [this, generation](const float *, std::size_t rows) {
                if (fail > 0) {
                    --fail;
                    throw Lost();
                }
                return std::vector<float>(rows * 2, float(generation));
            };
        };
    }
};

template <class Cond> bool eventually(Cond cond) {
    for (int i = 0; i < 500 && !cond(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return cond();
}

int http_status(const std::exception_ptr &p) {
    try {
        std::rethrow_exception(p);
    } catch (const tpu_serve::ProtocolError &e) {
        return e.status();
    } catch (...) {
        return -1;
    }
}

} // namespace

TEST_CASE("a batch the card lost once runs again on the model loaded again", "[serve]") {
    FlakyCard card;
    tpu_serve::RecoveringRunner runner(card.open(), lost);
    CHECK(runner.run(nullptr, 1) == std::vector<float>{1, 1});
    card.fail = 1;
    CHECK(runner.run(nullptr, 2) == std::vector<float>{2, 2, 2, 2});
    CHECK(runner.ready());
    CHECK_THAT(runner.metrics(), Catch::Contains("tpu_serve_card_failures_total 1\n") &&
                                     Catch::Contains("tpu_serve_model_reloads_total 1\n") &&
                                     Catch::Contains("tpu_serve_unavailable_batches_total 0\n"));
}

TEST_CASE("a batch lost twice is answered 503, and the runner loads the model again", "[serve]") {
    FlakyCard card;
    tpu_serve::RecoveringRunner runner(card.open(), lost);
    card.fail = 2;
    std::exception_ptr error;
    try {
        runner.run(nullptr, 1);
    } catch (...) {
        error = std::current_exception();
    }
    CHECK(http_status(error) == 503);
    // The runner's thread loads it again by itself, without a request.
    CHECK(eventually([&] { return card.loads == 3 && runner.ready(); }));
    CHECK(runner.run(nullptr, 1) == std::vector<float>{3, 3});
    CHECK_THAT(runner.metrics(), Catch::Contains("tpu_serve_unavailable_batches_total 1\n") &&
                                     Catch::Contains("tpu_serve_ready 1\n"));
}

TEST_CASE("while the model cannot be loaded, batches get 503 and ready stays false", "[serve]") {
    FlakyCard card;
    tpu_serve::RecoveringRunner runner(card.open(), lost);
    card.fail = 1;
    card.fail_opens = 2; // the retry's load and the thread's first; its next, a second later, works
    CHECK_THROWS_WITH(runner.run(nullptr, 1), Catch::Contains("the card is recovering") &&
                                                  Catch::Contains("loading the model failed: "
                                                                  "no card"));
    CHECK_FALSE(runner.ready());
    CHECK(eventually([&] { return runner.ready(); })); // a second later, a load that works
    CHECK(runner.run(nullptr, 1).size() == 2);
}

TEST_CASE("an error the card does not recover from passes through", "[serve]") {
    FlakyCard card;
    tpu_serve::RecoveringRunner runner(
        [&]() -> tpu_serve::Batcher::RunFn {
            ++card.loads;
            return [](const float *, std::size_t) -> std::vector<float> {
                throw std::invalid_argument("bad shape");
            };
        },
        lost);
    CHECK_THROWS_AS(runner.run(nullptr, 1), std::invalid_argument);
    CHECK(runner.ready());
    CHECK(card.loads == 1);
}

TEST_CASE("the server answers 503 with Retry-After and not ready while the card recovers",
          "[serve]") {
    FlakyCard card;
    tpu_serve::RecoveringRunner runner(card.open(), lost);
    tpu_serve::ModelSignature sig;
    sig.name = "m";
    sig.features = 1;
    sig.classes = 2;
    tpu_serve::ServerOptions opt;
    opt.port = 0;
    opt.ready = [&] { return runner.ready(); };
    opt.more_metrics = [&] { return runner.metrics(); };
    tpu_serve::Server server(
        sig, [&](const float *x, std::size_t rows) { return runner.run(x, rows); }, 4,
        std::chrono::microseconds(0), opt);
    const int port = server.bind();
    std::thread serving([&] { server.serve(); });
    httplib::Client cli("127.0.0.1", port);
    const std::string body =
        R"({"inputs":[{"name":"input","shape":[1,1],"datatype":"FP32","data":[0.5]}]})";

    auto ok = cli.Post("/v2/models/m/infer", body, "application/json");
    REQUIRE(ok);
    CHECK(ok->status == 200);
    card.fail = 2;
    card.fail_opens = 1000; // the card stays away
    auto down = cli.Post("/v2/models/m/infer", body, "application/json");
    REQUIRE(down);
    CHECK(down->status == 503);
    CHECK(down->get_header_value("Retry-After") == "1");
    CHECK_THAT(down->body, Catch::Contains("the card is recovering"));
    auto health = cli.Get("/v2/health/ready");
    REQUIRE(health);
    CHECK(health->status == 503);
    CHECK(cli.Get("/v2/models/m/ready")->status == 503);
    CHECK(cli.Get("/v2/health/live")->status == 200);
    CHECK_THAT(cli.Get("/metrics")->body,
               Catch::Contains("tpu_serve_ready 0\n") && Catch::Contains("{code=\"503\"} 1\n"));

    card.fail_opens = 0; // back
    CHECK(eventually([&] { return cli.Get("/v2/health/ready")->status == 200; }));
    auto again = cli.Post("/v2/models/m/infer", body, "application/json");
    REQUIRE(again);
    CHECK(again->status == 200);
    server.stop();
    serving.join();
}
