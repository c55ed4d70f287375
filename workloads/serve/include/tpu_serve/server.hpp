// SPDX-License-Identifier: MIT
// server.hpp - tpu-serve's HTTP server (cpp-httplib): the KServe v2 REST endpoints over one model
// behind the dynamic batcher, GET /metrics, JSON errors for every 4xx/5xx (503 with Retry-After
// while the card recovers), a request size limit.
#pragma once

#include "tpu_serve/batcher.hpp"
#include "tpu_serve/metrics.hpp"
#include "tpu_serve/protocol.hpp"

#include <functional>
#include <memory>
#include <string>

namespace httplib {
class Server;
}

namespace tpu_serve {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8000; // 0: any free port
    std::size_t max_body_bytes = 8u << 20;
    std::size_t http_threads = 64;
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
    // Binds; returns the port (throws std::runtime_error if it cannot bind).
    int bind();
    // Serves until stop() (from another thread); then finishes the queued batches.
    void serve();
    void stop();

  private:
    ModelSignature model_;
    ServerOptions options_;
    Metrics metrics_;
    Batcher batcher_;
    std::unique_ptr<httplib::Server> http_;
    int listen_socket_ = -1; // httplib's listening socket, once bound
};

} // namespace tpu_serve
