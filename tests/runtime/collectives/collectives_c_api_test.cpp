// SPDX-License-Identifier: MIT
// collectives_c_api_test.cpp - the communicators' C API (tpurt.h, API versions 4, 5) on two
// in-process cards on a fabric (tpurt_open_in_process_fabric()): all-reduce sum, max and min,
// reduce-scatter, all-gather, broadcast, all-to-all and send-recv of fp32 against host
// arithmetic; a link taken down reported by the streams and tpurt_comm_async_error(), then by
// every later collective; a new communicator works; abort; refusals.
#include <tpurt/tpurt.h>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace {

struct Cards {
    std::array<tpurt_device *, 2> dev{};
    std::array<tpurt_stream *, 2> stream{};
    std::vector<tpurt_tensor *> tensors;

    Cards() {
        tpurt_fabric_config fabric = {};
        fabric.struct_size = sizeof(fabric);
        fabric.dim_x = 2;
        fabric.credits = 4;
        REQUIRE(tpurt_open_in_process_fabric(&fabric, nullptr, dev.data(), 2) == TPURT_OK);
        for (int i = 0; i < 2; ++i)
            REQUIRE(tpurt_stream_create(dev[i], nullptr, &stream[i]) == TPURT_OK);
    }
    ~Cards() {
        for (tpurt_tensor *t : tensors)
            tpurt_tensor_destroy(t);
        for (int i = 0; i < 2; ++i) {
            tpurt_stream_destroy(stream[i]);
            tpurt_close(dev[i]);
        }
    }
    // Rank r's fp32 tensor holding `values`.
    tpurt_tensor *tensor(int r, const std::vector<float> &values) {
        tpurt_tensor_desc desc = {};
        desc.struct_size = sizeof(desc);
        desc.dtype = TPURT_FP32;
        desc.rank = 1;
        desc.shape[0] = values.size();
        tpurt_tensor *t = nullptr;
        REQUIRE(tpurt_tensor_create(dev[r], &desc, &t) == TPURT_OK);
        tensors.push_back(t);
        REQUIRE(tpurt_tensor_write(nullptr, t, values.data(), values.size() * 4) == TPURT_OK);
        return t;
    }
    std::vector<float> read(tpurt_tensor *t, std::size_t n) {
        std::vector<float> v(n);
        REQUIRE(tpurt_tensor_read(nullptr, t, v.data(), n * 4) == TPURT_OK);
        return v;
    }
    int synchronize() {
        int status = TPURT_OK;
        for (int i = 0; i < 2; ++i)
            if (const int s = tpurt_stream_synchronize(stream[i], TPURT_WAIT_DEFAULT))
                status = s;
        return status;
    }
};

} // namespace

TEST_CASE("the C API's collectives on two in-process cards", "[in-process][collectives][c-api]") {
    Cards c;
    tpurt_comm *comm = nullptr;
    REQUIRE(tpurt_comm_init_all(c.dev.data(), 2, 0, &comm) == TPURT_OK);
    std::uint32_t local = 0;
    REQUIRE(tpurt_comm_local_ranks(comm, &local) == TPURT_OK);
    CHECK(local == 2);

    const std::vector<float> a{1, -2, 3.5f, 8}, b{10, 20, -30, 0.25f};
    for (const std::uint32_t op : {TPURT_COMM_SUM, TPURT_COMM_MAX, TPURT_COMM_MIN}) {
        std::array<tpurt_tensor *, 2> t{c.tensor(0, a), c.tensor(1, b)};
        REQUIRE(tpurt_comm_all_reduce(comm, c.stream.data(), t.data(), t.data(), op) == TPURT_OK);
        REQUIRE(c.synchronize() == TPURT_OK);
        for (int r = 0; r < 2; ++r) {
            const std::vector<float> got = c.read(t[r], 4);
            for (int i = 0; i < 4; ++i)
                CHECK(got[i] == (op == TPURT_COMM_SUM   ? a[i] + b[i]
                                 : op == TPURT_COMM_MAX ? std::max(a[i], b[i])
                                                        : std::min(a[i], b[i])));
        }
    }

    std::array<tpurt_tensor *, 2> in{c.tensor(0, a), c.tensor(1, b)};
    std::array<tpurt_tensor *, 2> half{c.tensor(0, {0, 0}), c.tensor(1, {0, 0})};
    REQUIRE(tpurt_comm_reduce_scatter(comm, c.stream.data(), in.data(), half.data(),
                                      TPURT_COMM_SUM) == TPURT_OK);
    REQUIRE(c.synchronize() == TPURT_OK);
    CHECK(c.read(half[0], 2) == std::vector<float>{11, 18});
    CHECK(c.read(half[1], 2) == std::vector<float>{-26.5f, 8.25f});

    std::array<tpurt_tensor *, 2> all{c.tensor(0, std::vector<float>(8)),
                                      c.tensor(1, std::vector<float>(8))};
    REQUIRE(tpurt_comm_all_gather(comm, c.stream.data(), in.data(), all.data()) == TPURT_OK);
    REQUIRE(c.synchronize() == TPURT_OK);
    for (int r = 0; r < 2; ++r)
        CHECK(c.read(all[r], 8) == std::vector<float>{1, -2, 3.5f, 8, 10, 20, -30, 0.25f});

    std::array<tpurt_tensor *, 2> out{c.tensor(0, std::vector<float>(4)),
                                      c.tensor(1, std::vector<float>(4))};
    REQUIRE(tpurt_comm_broadcast(comm, c.stream.data(), in.data(), out.data(), 1) == TPURT_OK);
    REQUIRE(c.synchronize() == TPURT_OK);
    CHECK(c.read(out[0], 4) == b);
    CHECK(tpurt_comm_async_error(comm) == TPURT_OK);

    CHECK(tpurt_comm_all_reduce(comm, c.stream.data(), in.data(), in.data(), 7) == TPURT_E_INVALID);
    CHECK(tpurt_comm_broadcast(comm, c.stream.data(), in.data(), out.data(), 2) == TPURT_E_INVALID);

    // A link down: both ranks' streams report the failure, the communicator keeps it.
    REQUIRE(tpurt_in_process_set_link(c.dev[0], 0, 0) == TPURT_OK);
    REQUIRE(tpurt_comm_all_reduce(comm, c.stream.data(), in.data(), in.data(), TPURT_COMM_SUM) ==
            TPURT_OK);
    for (int i = 0; i < 2; ++i)
        CHECK(tpurt_stream_synchronize(c.stream[i], TPURT_WAIT_DEFAULT) == TPURT_E_JOB_FAILED);
    CHECK(tpurt_comm_async_error(comm) == TPURT_E_JOB_FAILED);
    CHECK(std::string(tpurt_last_error()).find("LINK_DOWN") != std::string::npos);
    CHECK(tpurt_comm_all_reduce(comm, c.stream.data(), in.data(), in.data(), TPURT_COMM_SUM) ==
          TPURT_E_JOB_FAILED);
    tpurt_comm_destroy(comm);

    REQUIRE(tpurt_in_process_set_link(c.dev[0], 0, 1) == TPURT_OK);
    REQUIRE(tpurt_comm_init_all(c.dev.data(), 2, 0, &comm) == TPURT_OK);
    std::array<tpurt_tensor *, 2> t{c.tensor(0, a), c.tensor(1, b)};
    REQUIRE(tpurt_comm_all_reduce(comm, c.stream.data(), t.data(), t.data(), TPURT_COMM_SUM) ==
            TPURT_OK);
    REQUIRE(c.synchronize() == TPURT_OK);
    CHECK(c.read(t[1], 4)[0] == 11.0f);
    REQUIRE(tpurt_comm_abort(comm) == TPURT_OK);
    CHECK(tpurt_comm_async_error(comm) == TPURT_E_JOB_FAILED);
    tpurt_comm_destroy(comm);

    tpurt_comm_id id = {};
    REQUIRE(tpurt_comm_id_make(&id) == TPURT_OK);
    CHECK(tpurt_comm_init_rank(c.dev[0], 3, &id, 0, 0, &comm) == TPURT_E_INVALID);
    CHECK(tpurt_comm_init_all(nullptr, 2, 0, &comm) == TPURT_E_INVALID);
}

TEST_CASE("the C API's all-to-all and send-recv on two in-process cards (API version 5)",
          "[in-process][collectives][c-api]") {
    Cards c;
    tpurt_comm *comm = nullptr;
    REQUIRE(tpurt_comm_init_all(c.dev.data(), 2, 0, &comm) == TPURT_OK);
    std::array<tpurt_tensor *, 2> in{c.tensor(0, {1, 2, 3, 4}), c.tensor(1, {5, 6, 7, 8})};
    std::array<tpurt_tensor *, 2> out{c.tensor(0, std::vector<float>(4)),
                                      c.tensor(1, std::vector<float>(4))};
    REQUIRE(tpurt_comm_all_to_all(comm, c.stream.data(), in.data(), out.data()) == TPURT_OK);
    REQUIRE(c.synchronize() == TPURT_OK);
    CHECK(c.read(out[0], 4) == std::vector<float>{1, 2, 5, 6});
    CHECK(c.read(out[1], 4) == std::vector<float>{3, 4, 7, 8});

    // Rank 0 sends to rank 1, which sends nothing (its send tensor NULL); rank 0 receives nothing.
    std::array<tpurt_tensor *, 2> send{in[0], nullptr}, recv{nullptr, out[1]};
    const std::uint32_t to[] = {1, TPURT_COMM_NONE}, from[] = {TPURT_COMM_NONE, 0};
    REQUIRE(tpurt_comm_send_recv(comm, c.stream.data(), send.data(), recv.data(), to, from) ==
            TPURT_OK);
    REQUIRE(c.synchronize() == TPURT_OK);
    CHECK(c.read(out[1], 4) == std::vector<float>{1, 2, 3, 4});
    // A peer without its tensor, a rank without either, a rank that is not a neighbour.
    const std::uint32_t none[] = {TPURT_COMM_NONE, TPURT_COMM_NONE}, self[] = {0, 0};
    std::array<tpurt_tensor *, 2> empty{nullptr, nullptr};
    CHECK(tpurt_comm_send_recv(comm, c.stream.data(), empty.data(), recv.data(), to, from) ==
          TPURT_E_INVALID);
    CHECK(tpurt_comm_send_recv(comm, c.stream.data(), empty.data(), empty.data(), none, none) ==
          TPURT_E_INVALID);
    CHECK(tpurt_comm_send_recv(comm, c.stream.data(), in.data(), out.data(), self, none) ==
          TPURT_E_INVALID);
    CHECK(tpurt_comm_async_error(comm) == TPURT_OK);
    tpurt_comm_destroy(comm);
}
