// SPDX-License-Identifier: MIT
// recovering_runner.cpp - one retry on a model loaded again, else 503 with Retry-After; a thread
// that loads a lost model again every second.
#include "tpu_serve/recovering_runner.hpp"

#include "tpu_serve/protocol.hpp"

#include <chrono>
#include <cstdio>

namespace tpu_serve {

RecoveringRunner::RecoveringRunner(Open open, Retryable retryable)
    : open_(std::move(open)), retryable_(std::move(retryable)) {
    run_ = open_();
    ready_ = true;
    thread_ = std::thread([this] { reloader(); });
}

RecoveringRunner::~RecoveringRunner() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    lost_.notify_all();
    thread_.join();
}

std::string RecoveringRunner::reopen(const std::string &why) {
    ready_ = false;
    run_ = nullptr;
    try {
        run_ = open_();
    } catch (const std::exception &e) {
        lost_.notify_all();
        return e.what();
    }
    ++reloads_;
    ready_ = true;
    std::fprintf(stderr, "tpu-serve: the model is loaded again (after: %s)\n", why.c_str());
    return {};
}

void RecoveringRunner::reloader() {
    std::unique_lock lock(mutex_);
    for (;;) {
        lost_.wait(lock, [&] { return stopping_ || !run_; });
        if (!stopping_ && !reopen("the model was lost").empty())
            lost_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; });
        if (stopping_)
            return;
    }
}

std::vector<float> RecoveringRunner::run(const float *x, std::size_t rows) {
    std::lock_guard lock(mutex_);
    auto unavailable = [&](const std::string &what) {
        ++unavailable_;
        return ProtocolError(503, "the card is recovering (" + what + "): retry later");
    };
    if (!run_) {
        const std::string error = reopen("the model was lost");
        if (!error.empty())
            throw unavailable("loading the model failed: " + error);
    }
    for (int attempt = 0;; ++attempt) {
        try {
            std::vector<float> logits = run_(x, rows);
            ready_ = true;
            return logits;
        } catch (const std::exception &e) {
            if (!retryable_(e))
                throw;
            ++failures_;
            const std::string what = e.what();
            const std::string error = reopen(what);
            if (attempt == 1 || !error.empty())
                throw unavailable(what +
                                  (error.empty() ? "" : "; loading the model failed: " + error));
        }
    }
}

std::string RecoveringRunner::metrics() const {
    std::string s;
    s += "# HELP tpu_serve_card_failures_total Batches the card lost (a hung or reset job, a "
         "banned file).\n# TYPE tpu_serve_card_failures_total counter\n";
    s += "tpu_serve_card_failures_total " + std::to_string(failures_.load()) + "\n";
    s += "# HELP tpu_serve_model_reloads_total Times the model was loaded on the card again.\n"
         "# TYPE tpu_serve_model_reloads_total counter\n";
    s += "tpu_serve_model_reloads_total " + std::to_string(reloads_.load()) + "\n";
    s += "# HELP tpu_serve_unavailable_batches_total Batches answered 503 (the card was "
         "recovering).\n# TYPE tpu_serve_unavailable_batches_total counter\n";
    s += "tpu_serve_unavailable_batches_total " + std::to_string(unavailable_.load()) + "\n";
    s += "# HELP tpu_serve_ready Whether the model is loaded and serving (1) or the card is "
         "recovering (0).\n# TYPE tpu_serve_ready gauge\n";
    s += std::string("tpu_serve_ready ") + (ready_.load() ? "1" : "0") + "\n";
    return s;
}

} // namespace tpu_serve
