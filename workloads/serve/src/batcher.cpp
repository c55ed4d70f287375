// SPDX-License-Identifier: MIT
// batcher.cpp - the dynamic batching queue and its worker thread.
#include "tpu_serve/batcher.hpp"

#include "tpu_serve/protocol.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace tpu_serve {

Batcher::Batcher(RunFn run, std::function<void(std::size_t)> on_batch, std::size_t features,
                 std::size_t classes, std::size_t max_batch, std::chrono::microseconds queue_delay)
    : run_(std::move(run)), on_batch_(std::move(on_batch)), features_(features), classes_(classes),
      max_batch_(std::max<std::size_t>(max_batch, 1)), delay_(queue_delay),
      thread_([this] { worker(); }) {}

Batcher::~Batcher() {
    stop();
}

std::future<std::vector<float>> Batcher::submit(std::vector<float> samples, std::size_t rows) {
    auto result = std::make_shared<std::promise<std::vector<float>>>();
    std::future<std::vector<float>> f = result->get_future();
    submit(std::move(samples), rows, [result](std::vector<float> logits, std::exception_ptr error) {
        if (error)
            result->set_exception(error);
        else
            result->set_value(std::move(logits));
    });
    return f;
}

void Batcher::submit(std::vector<float> samples, std::size_t rows, Done done) {
    if (rows == 0 || rows > max_batch_ || samples.size() != rows * features_)
        throw std::invalid_argument("Batcher::submit: 1..max_batch samples of the model's size");
    std::lock_guard lock(mutex_);
    if (stopping_)
        throw ProtocolError(503, "the server is shutting down");
    queue_.push_back({std::move(samples), rows, std::chrono::steady_clock::now(), std::move(done)});
    queued_rows_ += rows;
    wake_.notify_one();
}

void Batcher::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable())
        thread_.join();
}

void Batcher::worker() {
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty())
            return; // stopping, nothing left
        const auto deadline = queue_.front().queued + delay_;
        wake_.wait_until(lock, deadline, [&] { return stopping_ || queued_rows_ >= max_batch_; });
        std::vector<Pending> batch;
        std::size_t rows = 0;
        while (!queue_.empty() && rows + queue_.front().rows <= max_batch_) {
            rows += queue_.front().rows;
            queued_rows_ -= queue_.front().rows;
            batch.push_back(std::move(queue_.front()));
            queue_.pop_front();
        }
        lock.unlock();
        // Before the requests get their results, so that whoever sees a result sees its batch.
        if (on_batch_)
            on_batch_(rows);
        std::vector<float> samples;
        samples.reserve(rows * features_);
        for (const Pending &p : batch)
            samples.insert(samples.end(), p.samples.begin(), p.samples.end());
        std::vector<float> logits;
        std::exception_ptr error;
        try {
            logits = run_(samples.data(), rows);
        } catch (...) {
            error = std::current_exception();
        }
        std::size_t at = 0;
        for (Pending &p : batch) {
            if (error) {
                p.done({}, error);
                continue;
            }
            const auto first = logits.begin() + std::ptrdiff_t(at * classes_);
            p.done(std::vector<float>(first, first + std::ptrdiff_t(p.rows * classes_)), nullptr);
            at += p.rows;
        }
        lock.lock();
    }
}

} // namespace tpu_serve
