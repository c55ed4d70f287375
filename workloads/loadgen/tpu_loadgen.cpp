// SPDX-License-Identifier: MIT
// tpu-loadgen: a load generator for tpu-serve (any KServe v2 REST server), in the manner of
// Triton's perf_analyzer. For each concurrency level, that many clients (one thread and one
// keep-alive connection each, cpp-httplib; or with --new-connection a connection per request)
// send infer requests back to back until --requests requests were sent or --seconds passed; it
// reports throughput and p50/p90/p95/p99 latency per level as a table, and optionally as JSON and
// CSV. Every request's outcome is counted: answered (200), unavailable (503 with Retry-After: the
// server's card is recovering; an answer, not an error) or an error (any other status, or no
// answer: a connection reset, a timeout), which makes the exit status 1. Inputs are uniform random
// features in [0, 1] in the shape the model's metadata gives, --batch samples per request, sent
// as JSON; with --binary each level runs twice, as JSON and then with the inputs and outputs as
// binary tensor data (the KServe v2 / Triton extension), the encodings side by side.
// A level's clients open their connections one after the other (a GET of /v2/health/live each)
// before its clock starts: it measures serving, not a storm of connects, which a forwarded port
// of QEMU's user network does not take (libslirp listens on the host with a backlog of 1; at 32
// clients connecting at once the host dropped connects and requests stalled for seconds or
// failed with read errors).
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A request body; with binary tensor data, the length of its JSON header.
struct Body {
    std::string text;
    std::string header_length; // empty: all JSON
};

struct Level {
    std::string encoding; // "json" or "binary"
    unsigned concurrency = 0;
    std::size_t requests = 0, unavailable = 0, errors = 0, samples = 0;
    double seconds = 0;
    double p50 = 0, p90 = 0, p95 = 0, p99 = 0, mean = 0; // milliseconds
    std::string first_error;
};

double percentile(const std::vector<double> &sorted, double p) {
    if (sorted.empty())
        return 0;
    const std::size_t i = std::min(sorted.size() - 1, std::size_t(p / 100 * double(sorted.size())));
    return sorted[i];
}

Level run_level(const std::string &host, int port, const std::string &path,
                const std::vector<Body> &bodies, unsigned concurrency, std::size_t requests,
                double max_seconds, std::size_t batch, bool new_connection) {
    std::atomic<std::size_t> next{0};
    std::vector<std::vector<double>> lat(concurrency);
    std::vector<std::size_t> errors(concurrency, 0), unavailable(concurrency, 0);
    std::vector<std::string> first_error(concurrency);
    std::mutex connecting; // one client connects at a time
    std::latch connected(concurrency);
    std::latch go(1);             // the clock has started
    Clock::time_point start, end; // written before go opens
    std::vector<std::thread> clients;
    for (unsigned c = 0; c < concurrency; ++c)
        clients.emplace_back([&, c] {
            auto client = [&] {
                auto cli = std::make_unique<httplib::Client>(host, port);
                cli->set_keep_alive(!new_connection);
                cli->set_tcp_nodelay(true);
                cli->set_read_timeout(60, 0);
                return cli;
            };
            std::unique_ptr<httplib::Client> cli = client();
            bool up;
            {
                std::lock_guard<std::mutex> one(connecting);
                auto res = cli->Get("/v2/health/live");
                up = res && res->status == 200;
                if (!up) {
                    errors[c]++;
                    first_error[c] = "connect: " + (res ? "HTTP " + std::to_string(res->status)
                                                        : httplib::to_string(res.error()));
                }
            }
            connected.count_down();
            go.wait();
            while (up) {
                const std::size_t i = next.fetch_add(1);
                if (i >= requests || Clock::now() >= end)
                    break;
                const auto t0 = Clock::now();
                if (new_connection)
                    cli = client();
                const Body &body = bodies[i % bodies.size()];
                auto res =
                    body.header_length.empty()
                        ? cli->Post(path, body.text, "application/json")
                        : cli->Post(path, {{"Inference-Header-Content-Length", body.header_length}},
                                    body.text, "application/octet-stream");
                const double ms =
                    std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                if (res && res->status == 503 && res->has_header("Retry-After")) {
                    unavailable[c]++;
                    continue;
                }
                if (!res || res->status != 200) {
                    if (errors[c]++ == 0)
                        first_error[c] = res ? "HTTP " + std::to_string(res->status) + " " +
                                                   res->body.substr(0, 200)
                                             : "connection: " + httplib::to_string(res.error());
                    continue;
                }
                lat[c].push_back(ms);
            }
        });
    connected.wait();
    start = Clock::now();
    end = start +
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(max_seconds));
    go.count_down();
    for (std::thread &t : clients)
        t.join();
    Level l;
    l.concurrency = concurrency;
    l.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<double> all;
    for (unsigned c = 0; c < concurrency; ++c) {
        all.insert(all.end(), lat[c].begin(), lat[c].end());
        l.errors += errors[c];
        l.unavailable += unavailable[c];
        if (l.first_error.empty())
            l.first_error = first_error[c];
    }
    std::sort(all.begin(), all.end());
    l.requests = all.size();
    l.samples = all.size() * batch;
    for (double v : all)
        l.mean += v / double(all.size());
    l.p50 = percentile(all, 50);
    l.p90 = percentile(all, 90);
    l.p95 = percentile(all, 95);
    l.p99 = percentile(all, 99);
    return l;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"tpu-loadgen: throughput and latency of a KServe v2 server per concurrency"};
    std::string host = "127.0.0.1", model, json_out, csv_out;
    int port = 8000;
    std::vector<unsigned> levels = {1, 2, 4, 8};
    std::size_t requests = 200, batch = 1;
    double seconds = 30;
    unsigned seed = 1;
    app.add_option("--host", host, "server address (numeric)")->capture_default_str();
    app.add_option("--port", port, "server port")->capture_default_str();
    app.add_option("--model", model, "model name")->required();
    app.add_option("--concurrency", levels, "concurrency levels (clients), e.g. 1,2,4,8")
        ->delimiter(',')
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    app.add_option("--requests", requests, "requests per level at most")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--seconds", seconds, "seconds per level at most")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--batch", batch, "samples per request")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    app.add_option("--seed", seed, "seed of the random inputs")->capture_default_str();
    bool new_connection = false, binary = false;
    app.add_flag("--new-connection", new_connection,
                 "open a connection per request (as clients without keep-alive do)");
    app.add_flag("--binary", binary,
                 "run each level as JSON and again with binary tensor data, side by side");
    app.add_option("--json", json_out, "also write the results as JSON here");
    app.add_option("--csv", csv_out, "also write the results as CSV here");
    CLI11_PARSE(app, argc, argv);

    httplib::Client meta(host, port);
    auto res = meta.Get("/v2/models/" + model);
    if (!res || res->status != 200) {
        std::cerr << "tpu-loadgen: no metadata for model '" << model << "' at " << host << ":"
                  << port << ": "
                  << (res ? "HTTP " + std::to_string(res->status) + " " + res->body
                          : httplib::to_string(res.error()))
                  << "\n";
        return 1;
    }
    json m = json::parse(res->body, nullptr, false);
    std::size_t features = 0;
    std::string input = "input";
    std::vector<std::size_t> shape; // a request's: the batch, then the model's other dimensions
    try {
        input = m.at("inputs").at(0).at("name").get<std::string>();
        const json &dims = m.at("inputs").at(0).at("shape");
        shape = {batch};
        features = 1;
        for (std::size_t i = 1; i < dims.size(); ++i) {
            shape.push_back(dims[i].get<std::size_t>());
            features *= shape.back();
        }
    } catch (const std::exception &e) {
        std::cerr << "tpu-loadgen: unexpected metadata " << res->body << ": " << e.what() << "\n";
        return 1;
    }

    // A few distinct inputs, each as a JSON body and as binary tensor data, built before timing
    // starts.
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
    std::vector<Body> json_bodies, binary_bodies;
    for (int b = 0; b < 16; ++b) {
        std::vector<float> data(batch * features);
        for (float &v : data)
            v = pixel(rng);
        json_bodies.push_back(
            {json{{"inputs",
                   {{{"name", input}, {"shape", shape}, {"datatype", "FP32"}, {"data", data}}}}}
                 .dump(),
             ""});
        std::string text = json{{"inputs",
                                 {{{"name", input},
                                   {"shape", shape},
                                   {"datatype", "FP32"},
                                   {"parameters", {{"binary_data_size", data.size() * 4}}}}}},
                                {"parameters", {{"binary_data_output", true}}}}
                               .dump();
        const std::string length = std::to_string(text.size());
        text.append(reinterpret_cast<const char *>(data.data()), data.size() * 4);
        binary_bodies.push_back({std::move(text), length});
    }
    const std::string path = "/v2/models/" + model + "/infer";
    std::printf("tpu-loadgen: %s:%d model %s, %zu features, batch %zu per request, up to %zu "
                "requests or %.0f s per level\n",
                host.c_str(), port, model.c_str(), features, batch, requests, seconds);
    std::printf("%11s %9s %7s %7s %10s %11s %9s %9s %9s %9s %9s\n", "concurrency", "requests",
                "503", "errors", "req/s", "samples/s", "p50 ms", "p90 ms", "p95 ms", "p99 ms",
                "encoding");
    std::vector<Level> results;
    int rc = 0;
    std::vector<std::pair<const char *, const std::vector<Body> *>> encodings = {
        {"json", &json_bodies}};
    if (binary)
        encodings.push_back({"binary", &binary_bodies});
    for (unsigned c : levels)
        for (const auto &[encoding, bodies] : encodings) {
            Level l =
                run_level(host, port, path, *bodies, c, requests, seconds, batch, new_connection);
            l.encoding = encoding;
            std::printf("%11u %9zu %7zu %7zu %10.1f %11.1f %9.2f %9.2f %9.2f %9.2f %9s\n",
                        l.concurrency, l.requests, l.unavailable, l.errors,
                        double(l.requests) / l.seconds, double(l.samples) / l.seconds, l.p50, l.p90,
                        l.p95, l.p99, l.encoding.c_str());
            if (l.errors) {
                std::printf("            first error: %s\n", l.first_error.c_str());
                rc = 1;
            }
            results.push_back(l);
        }
    if (!json_out.empty()) {
        json j = json::array();
        for (const Level &l : results)
            j.push_back({{"encoding", l.encoding},
                         {"concurrency", l.concurrency},
                         {"requests", l.requests},
                         {"unavailable", l.unavailable},
                         {"errors", l.errors},
                         {"seconds", l.seconds},
                         {"requests_per_second", double(l.requests) / l.seconds},
                         {"samples_per_second", double(l.samples) / l.seconds},
                         {"latency_ms",
                          {{"mean", l.mean},
                           {"p50", l.p50},
                           {"p90", l.p90},
                           {"p95", l.p95},
                           {"p99", l.p99}}}});
        std::ofstream(json_out) << j.dump(2) << "\n";
    }
    if (!csv_out.empty()) {
        std::ofstream csv(csv_out);
        csv << "concurrency,requests,unavailable,errors,seconds,requests_per_second,"
               "samples_per_second,p50_ms,p90_ms,p95_ms,p99_ms,encoding\n";
        for (const Level &l : results)
            csv << l.concurrency << ',' << l.requests << ',' << l.unavailable << ',' << l.errors
                << ',' << l.seconds << ',' << double(l.requests) / l.seconds << ','
                << double(l.samples) / l.seconds << ',' << l.p50 << ',' << l.p90 << ',' << l.p95
                << ',' << l.p99 << ',' << l.encoding << '\n';
        if (!csv)
            std::cerr << "tpu-loadgen: cannot write " << csv_out << "\n", rc = 1;
    }
    return rc;
}
