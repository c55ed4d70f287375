// SPDX-License-Identifier: MIT
// server.cpp - the routes of tpu-serve. Every error answer is {"error": "..."}: 400 for a bad
// request, 404 for an unknown model or path, 413 for a body over the limit, 500 if the card
// fails, 503 with Retry-After while the card recovers (RecoveringRunner) or the server shuts down.
#include "tpu_serve/server.hpp"

#include <httplib.h>

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace tpu_serve {
namespace {

constexpr const char *json_type = "application/json";
// Connections the kernel queues for accept(). httplib listens with 5 (Debian builds it as a
// shared library, so its CPPHTTPLIB_LISTEN_BACKLOG cannot be raised): 32 clients connecting at
// once through QEMU's user network overflowed the guest's queue (ListenOverflows in
// /proc/net/netstat), and slirp, which had already accepted them on the host, ended them in
// client read errors after stalls of seconds.
constexpr int kListenBacklog = 256;

// Seconds a 503's client is asked to wait before it tries again.
constexpr const char *kRetryAfterSeconds = "1";

void reply(httplib::Response &res, int status, const std::string &body) {
    res.status = status;
    if (status == 503)
        res.set_header("Retry-After", kRetryAfterSeconds);
    res.set_content(body, json_type);
}

} // namespace

Server::Server(ModelSignature model, Batcher::RunFn run, std::size_t max_batch,
               std::chrono::microseconds queue_delay, ServerOptions options)
    : model_(std::move(model)), options_(std::move(options)), metrics_(max_batch),
      batcher_(
          std::move(run), [this](std::size_t rows) { metrics_.batch(rows); }, model_.features,
          model_.classes, max_batch, queue_delay),
      http_(std::make_unique<httplib::Server>()) {
    model_.max_batch = max_batch;
    httplib::Server &s = *http_;
    const std::size_t threads = options_.http_threads;
    s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    s.set_payload_max_length(options_.max_body_bytes);
    s.set_tcp_nodelay(true);
    // Called for the listening socket only: keep it to raise its backlog once bound.
    s.set_socket_options([this](socket_t sock) {
        httplib::default_socket_options(sock);
        listen_socket_ = sock;
    });
    // Clients that keep their connection (load generators, proxies) are not cut off every few
    // requests (httplib's defaults: 5 requests, 5 s idle).
    s.set_keep_alive_max_count(1000);
    s.set_keep_alive_timeout(30);

    s.Get("/v2/health/live", [](const httplib::Request &, httplib::Response &res) {
        reply(res, 200, R"({"live":true})");
    });
    auto ready = [this] { return !options_.ready || options_.ready(); };
    s.Get("/v2/health/ready", [ready](const httplib::Request &, httplib::Response &res) {
        if (ready())
            reply(res, 200, R"({"ready":true})");
        else
            reply(res, 503, R"({"ready":false,"error":"the card is recovering"})");
    });
    s.Get("/v2", [](const httplib::Request &, httplib::Response &res) {
        reply(res, 200, R"({"name":"tpu-serve","version":"1","extensions":[]})");
    });
    auto known = [this](const httplib::Request &req, httplib::Response &res) {
        if (req.matches[1] == model_.name)
            return true;
        reply(res, 404,
              error_body("unknown model '" + std::string(req.matches[1]) +
                         "': this server serves '" + model_.name + "'"));
        return false;
    };
    s.Get(R"(/v2/models/([^/]+)(?:/versions/[^/]+)?)",
          [this, known](const httplib::Request &req, httplib::Response &res) {
              if (known(req, res))
                  reply(res, 200, model_metadata(model_));
          });
    s.Get(R"(/v2/models/([^/]+)(?:/versions/[^/]+)?/ready)",
          [this, known, ready](const httplib::Request &req, httplib::Response &res) {
              if (!known(req, res))
                  return;
              if (ready())
                  reply(res, 200, R"({"name":")" + model_.name + R"(","ready":true})");
              else
                  reply(res, 503, R"({"name":")" + model_.name + R"(","ready":false})");
          });
    s.Post(R"(/v2/models/([^/]+)(?:/versions/[^/]+)?/infer)",
           [this, known](const httplib::Request &req, httplib::Response &res) {
               const auto start = std::chrono::steady_clock::now();
               if (known(req, res)) {
                   try {
                       InferRequest r = parse_infer_request(req.body, model_);
                       std::vector<float> logits = batcher_.submit(std::move(r.data), r.rows).get();
                       reply(res, 200, infer_response(model_, r, logits));
                   } catch (const ProtocolError &e) {
                       reply(res, e.status(), error_body(e.what()));
                   } catch (const std::exception &e) {
                       reply(res, 500, error_body(std::string("inference failed: ") + e.what()));
                   }
               }
               metrics_.request(
                   res.status,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
           });
    s.Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
        res.status = 200;
        res.set_content(metrics_.render() + (options_.more_metrics ? options_.more_metrics() : ""),
                        "text/plain; version=0.0.4");
    });
    // Whatever httplib answers by itself (404 for unknown paths, 413 over the size limit, 400
    // for a malformed request line) gets a JSON error too; its error handler sees every
    // 4xx/5xx, and the routes' own answers already have their body.
    using ErrorHandler = httplib::Server::HandlerWithResponse;
    s.set_error_handler(ErrorHandler([](const httplib::Request &req, httplib::Response &res) {
        if (!res.body.empty()) // the routes' own {"error": ...}
            return httplib::Server::HandlerResponse::Unhandled;
        std::string what = "HTTP status " + std::to_string(res.status);
        if (res.status == 400)
            what = "malformed HTTP request";
        else if (res.status == 404)
            what = "no such endpoint: " + req.method + " " + req.path;
        else if (res.status == 413)
            what = "the request body is over the server's limit";
        reply(res, res.status, error_body(what));
        return httplib::Server::HandlerResponse::Handled;
    }));
    s.set_exception_handler(
        [](const httplib::Request &, httplib::Response &res, std::exception_ptr ep) {
            std::string what = "internal error";
            try {
                std::rethrow_exception(ep);
            } catch (const std::exception &e) {
                what += std::string(": ") + e.what();
            } catch (...) {
            }
            reply(res, 500, error_body(what));
        });
}

Server::~Server() = default;

int Server::bind() {
    int port = -1;
    if (options_.port == 0)
        port = http_->bind_to_any_port(options_.host);
    else if (http_->bind_to_port(options_.host, options_.port))
        port = options_.port;
    if (port <= 0)
        throw std::runtime_error("cannot listen on " + options_.host + ":" +
                                 std::to_string(options_.port));
    // listen() again on a listening socket sets its backlog.
    if (::listen(listen_socket_, kListenBacklog) != 0)
        throw std::runtime_error("cannot set the listen backlog of " + options_.host + ":" +
                                 std::to_string(port) + ": " + std::strerror(errno));
    return port;
}

void Server::serve() {
    http_->listen_after_bind();
    batcher_.stop();
}

void Server::stop() {
    http_->stop();
}

} // namespace tpu_serve
