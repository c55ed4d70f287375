// SPDX-License-Identifier: MIT
// serve_listen_test.cpp - tpu-serve's listening socket on the host: 64 clients connecting at once
// all complete their handshakes (the kernel queues them while the event loops are busy), as
// clients of a busy server in a slow guest must; a backlog of 5 (cpp-httplib's) stalled most.
#include <tpu_serve/server.hpp>

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <vector>

namespace {

// A non-blocking connect to 127.0.0.1:port (-1 if no socket could be made).
int start_connect(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr));
    return fd;
}

// How many of the connects on fds complete within timeout_ms in all.
int count_connected(const std::vector<int> &fds, int timeout_ms) {
    std::vector<pollfd> pending;
    for (int fd : fds)
        pending.push_back(pollfd{fd, POLLOUT, 0});
    int done = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!pending.empty() && std::chrono::steady_clock::now() < deadline) {
        if (::poll(pending.data(), pending.size(), 100) <= 0)
            continue;
        std::vector<pollfd> still;
        for (const pollfd &p : pending) {
            if (!p.revents) {
                still.push_back(pollfd{p.fd, POLLOUT, 0});
                continue;
            }
            int err = 1;
            socklen_t len = sizeof(err);
            done += ::getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
        }
        pending = std::move(still);
    }
    return done;
}

} // namespace

TEST_CASE("tpu-serve completes 64 simultaneous connections' handshakes", "[serve]") {
    tpu_serve::ModelSignature model;
    model.name.assign(1, 'm');
    model.features = 4;
    model.classes = 2;
    tpu_serve::ServerOptions options;
    options.port = 0;
    tpu_serve::Server server(
        model, [](const float *, std::size_t rows) { return std::vector<float>(2 * rows); }, 4,
        std::chrono::microseconds(100), options);
    const int port = server.bind(); // serve() is never called: nothing waits for stop()

    constexpr int kClients = 64;
    std::vector<int> fds;
    for (int i = 0; i < kClients; i++)
        fds.push_back(start_connect(port));
    for (int fd : fds)
        REQUIRE(fd >= 0);
    const int done = count_connected(fds, 3000);
    for (int fd : fds)
        ::close(fd);
    CHECK(done == kClients);
}
