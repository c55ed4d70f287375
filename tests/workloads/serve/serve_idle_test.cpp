// SPDX-License-Identifier: MIT
// serve_idle_test.cpp - tpu-serve's front end under clients that do nothing: with 1,000
// connections open and silent and a few stalled half-way through a request, other clients are
// still answered, the server's memory grows by a bounded amount, and the idle and stalled
// connections are closed after the connection timeout.
#include <tpu_serve/server.hpp>

#include <httplib.h>

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// A blocking connection to 127.0.0.1:port, -1 if it fails.
int connect_to(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr)) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Whether the server closed fd (end of file or a reset) within timeout_ms.
bool closed_by_server(int fd, int timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1)
        return false;
    char byte;
    return ::recv(fd, &byte, 1, 0) <= 0;
}

// This process's resident memory in KiB.
long rss_kib() {
    std::ifstream status("/proc/self/status");
    std::string key;
    long value = 0;
    while (status >> key) {
        if (key == "VmRSS:") {
            status >> value;
            return value;
        }
        status.ignore(1 << 12, '\n');
    }
    return -1;
}

} // namespace

TEST_CASE("1,000 idle and a few stalled connections starve no client and are closed in time",
          "[serve]") {
    constexpr int kIdle = 1000, kStalled = 8;
    rlimit files{};
    REQUIRE(getrlimit(RLIMIT_NOFILE, &files) == 0);
    if (files.rlim_cur < 2 * (kIdle + kStalled) + 256) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
        REQUIRE(getrlimit(RLIMIT_NOFILE, &files) == 0);
    }
    INFO("open files allowed: " << files.rlim_cur);
    REQUIRE(files.rlim_cur >= 2 * (kIdle + kStalled) + 256);

    tpu_serve::ModelSignature model;
    model.name = "m";
    model.features = 1;
    model.classes = 2;
    tpu_serve::ServerOptions options;
    options.port = 0;
    options.http_threads = 2;
    options.connection_timeout_s = 3;
    tpu_serve::Server server(
        model, [](const float *, std::size_t rows) { return std::vector<float>(2 * rows, 1.0f); },
        4, std::chrono::microseconds(100), options);
    const int port = server.bind();
    std::thread serving([&] { server.serve(); });

    const long rss_before = rss_kib();
    std::vector<int> idle, stalled;
    for (int i = 0; i < kIdle; i++)
        idle.push_back(connect_to(port));
    // Stalled mid-request: headers announcing a body that never comes.
    const std::string head = "POST /v2/models/m/infer HTTP/1.1\r\nHost: x\r\n"
                             "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"in";
    for (int i = 0; i < kStalled; i++) {
        stalled.push_back(connect_to(port));
        REQUIRE(::send(stalled.back(), head.data(), head.size(), MSG_NOSIGNAL) ==
                ssize_t(head.size()));
    }
    for (int fd : idle)
        REQUIRE(fd >= 0);

    // Other clients are answered meanwhile, on a new connection each.
    for (int i = 0; i < 4; i++) {
        httplib::Client client("127.0.0.1", port);
        client.set_read_timeout(60, 0);
        auto live = client.Get("/v2/health/live");
        REQUIRE(live);
        CHECK(live->status == 200);
        auto answer = client.Post(
            "/v2/models/m/infer",
            R"({"inputs":[{"name":"input","shape":[1,1],"datatype":"FP32","data":[0.5]}]})",
            "application/json");
        REQUIRE(answer);
        CHECK(answer->status == 200);
    }
    // Memory: a socket and a small state per connection, not a thread (5 MiB for the 1,008
    // connections of both ends here).
    const long grown_kib = rss_kib() - rss_before;
    INFO("RSS grew by " << grown_kib << " KiB for " << kIdle + kStalled << " connections");
    CHECK(grown_kib < 64 * 1024);

    // The connection timeout closes the idle and the stalled ones.
    int idle_closed = 0, stalled_closed = 0;
    for (int fd : stalled)
        stalled_closed += closed_by_server(fd, 60000);
    for (int fd : idle)
        idle_closed += closed_by_server(fd, 60000);
    CHECK(stalled_closed == kStalled);
    CHECK(idle_closed == kIdle);
    for (int fd : idle)
        ::close(fd);
    for (int fd : stalled)
        ::close(fd);
    server.stop();
    serving.join();
}
