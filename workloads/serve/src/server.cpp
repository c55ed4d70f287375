// SPDX-License-Identifier: MIT
// server.cpp - the routes of tpu-serve on GNU libmicrohttpd. Every error answer is
// {"error": "..."}: 400 for a bad request, 404 for an unknown model or path, 413 for a body over
// the limit, 500 if the card fails, 503 with Retry-After while the card recovers
// (RecoveringRunner) or the server shuts down. libmicrohttpd answers malformed HTTP itself.
#include "tpu_serve/server.hpp"

#include <microhttpd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>

namespace tpu_serve {
namespace {

constexpr const char *json_type = "application/json";
// A response whose JSON is followed by binary tensor data.
constexpr const char *binary_type = "application/octet-stream";
// Connections the kernel queues for accept() while the event loops are busy.
constexpr unsigned kListenBacklog = 1024;
// Seconds a 503's client is asked to wait before it tries again.
constexpr const char *kRetryAfterSeconds = "1";
// How long a shutdown waits for the answers of the last batches to go out.
constexpr auto kDrainLimit = std::chrono::seconds(10);

// /v2/models/NAME[/versions/V][/ready|/infer]: NAME in [1], the rest in [2].
const std::regex model_path(R"(/v2/models/([^/]+)(?:/versions/[^/]+)?(/ready|/infer)?)");

} // namespace

// One HTTP request: its body as it comes in, then its answer. The batcher's callback may set the
// answer on its own thread: `lock` orders it with the handler that suspends the connection.
struct Server::Exchange : std::enable_shared_from_this<Server::Exchange> {
    std::string body;
    bool too_large = false;
    bool counted = false; // an inference request: its answer goes into the request metrics
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    std::mutex lock;
    bool suspended = false;
    bool answered = false;
    int status = 0;
    std::string text;
    std::string type = json_type;
    std::optional<std::size_t> header_length; // of a response with binary tensor data

    void reply(int code, std::string answer, std::string content_type = json_type) {
        status = code;
        text = std::move(answer);
        type = std::move(content_type);
        answered = true;
    }
    void reply(InferResponse response) {
        header_length = response.header_length;
        reply(200, std::move(response.body), header_length ? binary_type : json_type);
    }
};

// libmicrohttpd's callbacks; the Exchange lives in a shared_ptr that the connection's state
// and a pending batch hold.
struct Daemon {
    using Holder = std::shared_ptr<Server::Exchange>;

    static MHD_Result queue(Server &server, MHD_Connection *connection, Server::Exchange &ex) {
        MHD_Response *response =
            MHD_create_response_from_buffer(ex.text.size(), ex.text.data(), MHD_RESPMEM_MUST_COPY);
        if (!response)
            return MHD_NO;
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, ex.type.c_str());
        if (ex.status == 503)
            MHD_add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER, kRetryAfterSeconds);
        if (ex.header_length)
            MHD_add_response_header(response, kInferenceHeaderContentLength,
                                    std::to_string(*ex.header_length).c_str());
        const MHD_Result queued = MHD_queue_response(connection, unsigned(ex.status), response);
        MHD_destroy_response(response);
        if (ex.counted)
            server.metrics_.request(
                ex.status,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - ex.start).count());
        return queued;
    }

    static MHD_Result access(void *cls, MHD_Connection *connection, const char *url,
                             const char *method, const char * /*version*/, const char *upload_data,
                             std::size_t *upload_data_size, void **state) {
        Server &server = *static_cast<Server *>(cls);
        if (!*state) { // the headers are in; the body, if any, follows
            *state = new Holder(std::make_shared<Server::Exchange>());
            server.open_exchanges_++;
            return MHD_YES;
        }
        Server::Exchange &ex = **static_cast<Holder *>(*state);
        if (*upload_data_size > 0) {
            // A body over the limit is read to its end and dropped, then answered 413.
            if (!ex.too_large &&
                ex.body.size() + *upload_data_size > server.options_.max_body_bytes) {
                ex.too_large = true;
                std::string().swap(ex.body);
            }
            if (!ex.too_large)
                ex.body.append(upload_data, *upload_data_size);
            *upload_data_size = 0;
            return MHD_YES;
        }
        {
            std::lock_guard guard(ex.lock);
            if (ex.answered) // resumed by the batcher's callback
                return queue(server, connection, ex);
        }
        server.handle(connection, ex, method, url);
        std::lock_guard guard(ex.lock);
        if (ex.suspended)
            return MHD_YES;
        return queue(server, connection, ex);
    }

    static void completed(void *cls, MHD_Connection *, void **state, MHD_RequestTerminationCode) {
        Server &server = *static_cast<Server *>(cls);
        if (!*state)
            return;
        delete static_cast<Holder *>(*state);
        *state = nullptr;
        std::lock_guard guard(server.mutex_);
        server.open_exchanges_--;
        server.changed_.notify_all();
    }
};

Server::Server(ModelSignature model, Batcher::RunFn run, std::size_t max_batch,
               std::chrono::microseconds queue_delay, ServerOptions options)
    : model_(std::move(model)), options_(std::move(options)), metrics_(max_batch),
      batcher_(
          std::move(run), [this](std::size_t rows) { metrics_.batch(rows); }, model_.features,
          model_.classes, max_batch, queue_delay) {
    model_.max_batch = max_batch;
}

Server::~Server() {
    batcher_.stop(); // no callback may resume a connection of a stopped daemon
    if (daemon_)
        MHD_stop_daemon(daemon_);
}

void Server::handle(MHD_Connection *connection, Exchange &ex, const std::string &method,
                    const std::string &url) {
    const bool get = method == MHD_HTTP_METHOD_GET, post = method == MHD_HTTP_METHOD_POST;
    const bool ready = !options_.ready || options_.ready();
    std::smatch m;
    const bool model_route = std::regex_match(url, m, model_path);
    const std::string action = model_route ? m[2].str() : "";
    if (post && model_route && action == "/infer")
        ex.counted = true;
    if (ex.too_large) {
        std::lock_guard guard(ex.lock);
        ex.reply(413, error_body("the request body is over the server's limit"));
        return;
    }
    if (model_route && (get ? action != "/infer" : post && action == "/infer") &&
        m[1] != model_.name) {
        std::lock_guard guard(ex.lock);
        ex.reply(404, error_body("unknown model '" + m[1].str() + "': this server serves '" +
                                 model_.name + "'"));
        return;
    }
    if (post && model_route && action == "/infer") {
        infer(connection, ex);
        return;
    }
    std::lock_guard guard(ex.lock);
    if (get && url == "/v2/health/live")
        ex.reply(200, R"({"live":true})");
    else if (get && url == "/v2/health/ready")
        ex.reply(ready ? 200 : 503, ready ? R"({"ready":true})"
                                          : R"({"ready":false,"error":"the card is recovering"})");
    else if (get && url == "/v2")
        ex.reply(200, R"({"name":"tpu-serve","version":"1","extensions":["binary_tensor_data"]})");
    else if (get && model_route && action.empty())
        ex.reply(200, model_metadata(model_));
    else if (get && model_route && action == "/ready")
        ex.reply(ready ? 200 : 503,
                 R"({"name":")" + model_.name + R"(","ready":)" + (ready ? "true" : "false") + "}");
    else if (get && url == "/metrics")
        ex.reply(200, metrics_.render() + (options_.more_metrics ? options_.more_metrics() : ""),
                 "text/plain; version=0.0.4");
    else
        ex.reply(404, error_body("no such endpoint: " + method + " " + url));
}

void Server::infer(MHD_Connection *connection, Exchange &ex) {
    auto reply_now = [&ex](int status, std::string text) {
        std::lock_guard guard(ex.lock);
        ex.reply(status, std::move(text));
    };
    try {
        const char *header_length =
            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, kInferenceHeaderContentLength);
        InferRequest r = parse_infer_request(
            ex.body, model_,
            header_length ? std::optional<std::string_view>(header_length) : std::nullopt);
        std::string().swap(ex.body);
        // The callback runs on the batcher's thread, maybe before this one suspends the
        // connection: whichever comes second answers. It holds the Exchange and the request.
        auto request = std::make_shared<InferRequest>(std::move(r));
        std::vector<float> samples = std::move(request->data);
        batcher_.submit(std::move(samples), request->rows,
                        [this, connection, request, exchange = ex.shared_from_this()](
                            std::vector<float> logits, std::exception_ptr error) {
                            std::lock_guard guard(exchange->lock);
                            try {
                                if (error)
                                    std::rethrow_exception(error);
                                exchange->reply(infer_response(model_, *request, logits));
                            } catch (const ProtocolError &e) {
                                exchange->reply(e.status(), error_body(e.what()));
                            } catch (const std::exception &e) {
                                exchange->reply(
                                    500, error_body(std::string("inference failed: ") + e.what()));
                            }
                            if (exchange->suspended) {
                                exchange->suspended = false;
                                MHD_resume_connection(connection);
                            }
                        });
        std::lock_guard guard(ex.lock);
        if (!ex.answered) {
            ex.suspended = true;
            MHD_suspend_connection(connection);
        }
    } catch (const ProtocolError &e) {
        reply_now(e.status(), error_body(e.what()));
    } catch (const std::exception &e) {
        reply_now(500, error_body(std::string("inference failed: ") + e.what()));
    }
}

int Server::bind() {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(options_.port));
    if (inet_pton(AF_INET, options_.host.c_str(), &addr.sin_addr) != 1)
        throw std::runtime_error("cannot listen on " + options_.host +
                                 ": not a numeric IPv4 address");
    const unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
    daemon_ = MHD_start_daemon(
        flags, 0, nullptr, nullptr, &Daemon::access, this, MHD_OPTION_SOCK_ADDR, &addr,
        MHD_OPTION_THREAD_POOL_SIZE, unsigned(std::max<std::size_t>(options_.http_threads, 1)),
        MHD_OPTION_CONNECTION_TIMEOUT, options_.connection_timeout_s, MHD_OPTION_CONNECTION_LIMIT,
        unsigned(options_.max_connections), MHD_OPTION_LISTEN_BACKLOG_SIZE, kListenBacklog,
        MHD_OPTION_NOTIFY_COMPLETED, &Daemon::completed, this, MHD_OPTION_END);
    if (!daemon_)
        throw std::runtime_error("cannot listen on " + options_.host + ":" +
                                 std::to_string(options_.port));
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : options_.port;
}

void Server::serve() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return stopping_; });
    lock.unlock();
    if (!daemon_)
        return;
    // No new connections; the queued batches run and their connections get their answers;
    // requests on open connections meanwhile are answered 503 (the batcher is stopping).
    const MHD_socket listening = MHD_quiesce_daemon(daemon_);
    if (listening != MHD_INVALID_SOCKET)
        ::close(listening);
    batcher_.stop();
    lock.lock();
    changed_.wait_for(lock, kDrainLimit, [this] { return open_exchanges_ == 0; });
    lock.unlock();
    MHD_stop_daemon(daemon_);
    daemon_ = nullptr;
}

void Server::stop() {
    std::lock_guard guard(mutex_);
    stopping_ = true;
    changed_.notify_all();
}

} // namespace tpu_serve
