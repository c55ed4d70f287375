// SPDX-License-Identifier: MIT
// server.hpp - tpu-serve's HTTP server (GNU libmicrohttpd): the KServe v2 REST endpoints over one
// model behind the dynamic batcher, GET /metrics, JSON errors for every 4xx/5xx it answers (503
// with Retry-After while the card recovers), a request size limit. Event-driven: a few threads
// poll every connection (epoll), an idle or stalled one costs a socket and is closed after
// connection_timeout_s, and an inference request waits for its batch without holding a thread
// (its connection is suspended until the batcher hands back its logits).
#pragma once

#include "tpu_serve/batcher.hpp"
#include "tpu_serve/metrics.hpp"
#include "tpu_serve/protocol.hpp"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

struct MHD_Daemon;
struct MHD_Connection;

namespace tpu_serve {

struct ServerOptions {
    std::string host = "127.0.0.1"; // numeric IPv4
    int port = 8000;                // 0: any free port
    std::size_t max_body_bytes = 8u << 20;
    std::size_t http_threads = 4;        // event-loop threads, each polling many connections
    unsigned connection_timeout_s = 30;  // an idle or stalled connection is closed after this
    std::size_t max_connections = 10000; // more are refused at accept
    // Whether the model serves (GET /v2/health/ready and the model's ready); null: always.
    std::function<bool()> ready;
    // More Prometheus lines for GET /metrics (e.g. RecoveringRunner::metrics); null: none.
    std::function<std::string()> more_metrics;
};

class Server {
  public:
    Server(ModelSignature model, Batcher::RunFn run, std::size_t max_batch,
           std::chrono::microseconds queue_delay, ServerOptions options);
    ~Server();
    Server(const Server &) = delete;
    Server &operator=(const Server &) = delete;
    // Binds and starts answering; returns the port (throws std::runtime_error if it cannot).
    int bind();
    // Returns once stop() was called (from another thread), after the queued batches finished
    // and their answers went out; then no connection is served any more.
    void serve();
    void stop();

  private:
    struct Exchange;      // one HTTP request and its answer (server.cpp)
    friend struct Daemon; // libmicrohttpd's callbacks (server.cpp)

    // Handles a request once its body is in: answers it, or submits it to the batcher.
    void handle(MHD_Connection *connection, Exchange &exchange, const std::string &method,
                const std::string &url);
    // Submits an inference request; its connection waits, suspended, for the batch.
    void infer(MHD_Connection *connection, Exchange &exchange);

    ModelSignature model_;
    ServerOptions options_;
    Metrics metrics_;
    Batcher batcher_;
    MHD_Daemon *daemon_ = nullptr;
    std::atomic<std::size_t> open_exchanges_{0};
    std::mutex mutex_;
    std::condition_variable changed_;
    bool stopping_ = false;
};

} // namespace tpu_serve
