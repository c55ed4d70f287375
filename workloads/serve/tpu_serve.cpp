// SPDX-License-Identifier: MIT
// tpu-serve: serves a checkpointed model on the card over HTTP with the Open Inference Protocol
// (KServe v2 REST) and dynamic batching; Prometheus metrics at /metrics. An fp32 checkpoint runs
// as bf16, a quantised one (tpu-quantise) as int8; a compiled model (x.tpumodel, tpu-compile,
// tpu-quantise of a model spec) as it was compiled, its signature taken from its graph
// (graph_model.hpp). A model spec's checkpoint that tpu_infer does not read (res, ln, gelu, ...) is
// compiled in the process for bf16 at --max-batch (tpu_export::compile_checkpoint) and served
// as a compiled model. A batch the card loses
// (a reset, a hung job) is run again on the model loaded again, or answered 503 with Retry-After
// (RecoveringRunner). SIGTERM or SIGINT stops it cleanly: no new connections, the queued batches
// finish, exit status 0.
#include "tpu_serve/graph_model.hpp"
#include "tpu_serve/recovering_runner.hpp"
#include "tpu_serve/server.hpp"

#include <tpu_export/compile_checkpoint.hpp>
#include <tpu_infer/card_model.hpp>
#include <tpu_infer/reference.hpp>
#include <tpumodel/card_executor.hpp>
#include <tpumodel/cpu_executor.hpp>
#include <tpumodel/file.hpp>

#include <CLI/CLI.hpp>
#include <tpurt/device.hpp>
#include <tpurt/error.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <pthread.h>
#include <thread>

int main(int argc, char **argv) {
    CLI::App app{"tpu-serve: a model on the card behind the KServe v2 REST protocol"};
    std::string model_path, name;
    tpu_serve::ServerOptions opt;
    std::size_t max_batch = 32;
    unsigned delay_us = 2000;
    app.add_option("--model", model_path,
                   "checkpoint: fp32 (served as bf16; a model spec other than the MLP and the "
                   "CNN of 3x3 blocks is compiled for bf16 here) or quantised (int8); or a "
                   "compiled model (.tpumodel)")
        ->required();
    app.add_option("--name", name, "model name in the URLs (default: the checkpoint's)");
    app.add_option("--host", opt.host, "address to listen on")->capture_default_str();
    app.add_option("--port", opt.port, "port (0: any free port)")
        ->check(CLI::Range(0, 65535))
        ->capture_default_str();
    app.add_option("--max-batch", max_batch, "samples per card batch (and per request) at most")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    app.add_option("--queue-delay-us", delay_us,
                   "how long the first queued request waits for others to join its batch")
        ->capture_default_str();
    app.add_option("--max-body-bytes", opt.max_body_bytes, "request size limit")
        ->check(CLI::Range(std::size_t(1024), std::size_t(1) << 30))
        ->capture_default_str();
    app.add_option("--http-threads", opt.http_threads,
                   "HTTP event-loop threads (each serves many connections)")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    app.add_option("--connection-timeout-s", opt.connection_timeout_s,
                   "an idle or stalled connection is closed after this many seconds")
        ->check(CLI::Range(1, 3600))
        ->capture_default_str();
    app.add_option("--max-connections", opt.max_connections, "connections open at once at most")
        ->check(CLI::Range(16, 100000))
        ->capture_default_str();
    unsigned card = 0;
    app.add_option("--card", card, "the card to serve on (its index in /dev/accel order)")
        ->capture_default_str();
    bool cpu = false;
    app.add_flag("--cpu", cpu,
                 "compute on this CPU with the reference of the card's arithmetic instead of the "
                 "card (same answers, no card needed: for trying the server out)");
    CLI11_PARSE(app, argc, argv);

    // SIGINT and SIGTERM are taken by one thread with sigwait (blocked in every other thread).
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGUSR1); // the main thread's wake-up when the server ends by itself
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    try {
        bool compiled = model_path.ends_with(".tpumodel");
        std::optional<tpu_infer::Network> net;
        tpumodel::Model graph;
        tpu_serve::ModelSignature sig;
        if (compiled) {
            graph = tpumodel::load(model_path);
            const std::string stem = model_path.substr(model_path.find_last_of('/') + 1);
            sig = tpu_serve::graph_signature(graph,
                                             name.empty() ? stem.substr(0, stem.size() - 9) : name);
        } else if (const tpu_model::Checkpoint c = tpu_model::load_checkpoint(model_path);
                   !tpu_infer::reads_checkpoint(c)) {
            compiled = true;
            graph = tpu_export::compile_checkpoint(
                c, model_path,
                {.precision = tpumodel::Precision::Bf16, .batch = max_batch, .calibration = {}});
            sig = tpu_serve::graph_signature(graph, name.empty() ? c.model : name);
        } else {
            net = tpu_infer::network_from_checkpoint(c, model_path);
            sig.name = name.empty() ? net->name : name;
            sig.platform = std::string("tpu-stack-") + net->precision();
            sig.features = net->inputs();
            sig.classes = net->outputs();
        }
        std::optional<tpurt::Device> dev;
        std::unique_ptr<tpu_infer::CardModel> model;
        std::unique_ptr<tpumodel::card::Executor> executor;
        std::optional<tpu_serve::GraphRunner> graph_runner;
        std::unique_ptr<tpu_serve::RecoveringRunner> runner;
        tpu_serve::Batcher::RunFn run = [&](const float *x, std::size_t rows) {
            return tpu_infer::reference_logits(*net, x, rows);
        };
        if (compiled && cpu) {
            graph_runner.emplace(graph, [&](const std::vector<tpumodel::Tensor> &in) {
                return tpumodel::cpu::run_model(graph, in);
            });
            run = [&](const float *x, std::size_t rows) { return graph_runner->run(x, rows); };
        }
        if (!cpu) {
            // (Re)opens the device and loads the model: at start, and after the card lost it.
            auto open = [&]() -> tpu_serve::Batcher::RunFn {
                model.reset();
                graph_runner.reset();
                executor.reset();
                dev.reset();
                dev.emplace(tpurt::Device::open(card));
                if (compiled) {
                    executor = std::make_unique<tpumodel::card::Executor>(*dev, graph);
                    graph_runner.emplace(graph, [&](const std::vector<tpumodel::Tensor> &in) {
                        return executor->run(in);
                    });
                    return [&](const float *x, std::size_t rows) {
                        return graph_runner->run(x, rows);
                    };
                }
                model = tpu_infer::load_on_card(*dev, *net, max_batch);
                return [&](const float *x, std::size_t rows) { return model->logits(x, rows); };
            };
            runner = std::make_unique<tpu_serve::RecoveringRunner>(
                open, [](const std::exception &e) { return tpurt::is_retryable(e); });
            run = [&](const float *x, std::size_t rows) { return runner->run(x, rows); };
            opt.ready = [&] { return runner->ready(); };
            opt.more_metrics = [&] { return runner->metrics(); };
        }
        const std::string precision = sig.platform.substr(std::string("tpu-stack-").size());
        tpu_serve::Server server(sig, run, max_batch, std::chrono::microseconds(delay_us), opt);
        const int port = server.bind();
        std::printf("tpu-serve: %s (%s, %zu -> %zu) on %s, max batch %zu, queue delay %u us; "
                    "listening on http://%s:%d/v2/models/%s\n",
                    sig.name.c_str(), precision.c_str(), sig.features, sig.classes,
                    cpu ? "the CPU (reference)" : "the card", max_batch, delay_us, opt.host.c_str(),
                    port, sig.name.c_str());
        std::fflush(stdout);
        std::thread waiter([&] {
            int sig_no = 0;
            sigwait(&signals, &sig_no);
            if (sig_no != SIGUSR1)
                std::printf("tpu-serve: %s, stopping\n", sig_no == SIGINT ? "SIGINT" : "SIGTERM");
            std::fflush(stdout);
            server.stop();
        });
        server.serve();
        pthread_kill(waiter.native_handle(), SIGUSR1);
        waiter.join();
        std::printf("tpu-serve: stopped\n");
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "tpu-serve: " << e.what() << "\n";
        return 1;
    }
}
