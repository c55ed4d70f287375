// SPDX-License-Identifier: MIT
// in_process_c_api_test.cpp - the C API on the in-process card (tpurt_open_in_process()): its
// properties, tensors, and registered ops by name through tpurt_op_launch() — blocking and on
// a stream — against host arithmetic: square, elementwise sub, transpose, column sums,
// matmul, dense with relu and a scale, softmax; refusals of the config struct.
#include <tpurt/tpurt.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

// A tensor of `shape`, released with the test.
struct CTensor {
    tpurt_tensor *t = nullptr;
    CTensor(tpurt_device *dev, std::uint32_t dtype, std::initializer_list<std::uint64_t> shape) {
        tpurt_tensor_desc desc = {};
        desc.struct_size = sizeof(desc);
        desc.dtype = dtype;
        desc.rank = static_cast<std::uint32_t>(shape.size());
        std::copy(shape.begin(), shape.end(), desc.shape);
        REQUIRE(tpurt_tensor_create(dev, &desc, &t) == TPURT_OK);
    }
    ~CTensor() { tpurt_tensor_destroy(t); }
};

} // namespace

TEST_CASE("in process: the C API opens the engine and runs registered ops by name",
          "[in-process][c-api]") {
    tpurt_in_process_config config = {};
    config.struct_size = sizeof(config);
    config.mxu_rows = 32;
    config.mxu_cols = 32;
    config.ub_bytes = 1u << 20;
    config.acc_bytes = 1u << 18;
    config.clock_mhz = 940;
    tpurt_device *dev = nullptr;
    REQUIRE(tpurt_open_in_process(&config, &dev) == TPURT_OK);
    tpurt_device_info info = {};
    info.struct_size = sizeof(info);
    REQUIRE(tpurt_get_info(dev, &info) == TPURT_OK);
    CHECK(info.mxu_rows == 32);
    CHECK(info.clock_mhz == 940);
    CHECK(std::string(info.path) == "in-process engine");

    constexpr int R = 5, C = 7;
    std::vector<std::int32_t> x(R * C);
    for (int i = 0; i < R * C; i++)
        x[i] = i * 1000 - 17000;
    CTensor tx(dev, TPURT_INT32, {R, C}), tsq(dev, TPURT_INT32, {R, C}),
        tdiff(dev, TPURT_INT32, {R, C}), tt(dev, TPURT_INT32, {C, R}), tcol(dev, TPURT_INT32, {C});
    REQUIRE(tpurt_tensor_write(nullptr, tx.t, x.data(), x.size() * 4) == TPURT_OK);
    tpurt_tensor *square_args[2] = {tx.t, tsq.t};
    CHECK(tpurt_op_launch(dev, nullptr, "square", square_args, 2, nullptr, 0) == TPURT_OK);
    tpurt_tensor *sub_args[3] = {tsq.t, tx.t, tdiff.t};
    const tpurt_op_attr sub[1] = {{"op", "sub"}};
    CHECK(tpurt_op_launch(dev, nullptr, "elementwise", sub_args, 3, sub, 1) == TPURT_OK);
    tpurt_tensor *transpose_args[2] = {tx.t, tt.t};
    CHECK(tpurt_op_launch(dev, nullptr, "transpose", transpose_args, 2, nullptr, 0) == TPURT_OK);
    tpurt_tensor *column_args[2] = {tx.t, tcol.t};
    CHECK(tpurt_op_launch(dev, nullptr, "column_sums", column_args, 2, nullptr, 0) == TPURT_OK);
    std::vector<std::int32_t> sq(R * C), diff(R * C), t(R * C), col(C);
    REQUIRE(tpurt_tensor_read(nullptr, tsq.t, sq.data(), sq.size() * 4) == TPURT_OK);
    REQUIRE(tpurt_tensor_read(nullptr, tdiff.t, diff.data(), diff.size() * 4) == TPURT_OK);
    REQUIRE(tpurt_tensor_read(nullptr, tt.t, t.data(), t.size() * 4) == TPURT_OK);
    REQUIRE(tpurt_tensor_read(nullptr, tcol.t, col.data(), col.size() * 4) == TPURT_OK);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            const int i = r * C + c;
            const auto want = static_cast<std::int32_t>(static_cast<std::uint32_t>(x[i]) *
                                                        static_cast<std::uint32_t>(x[i]));
            REQUIRE(sq[i] == want);
            REQUIRE(diff[i] == static_cast<std::int32_t>(static_cast<std::uint32_t>(want) -
                                                         static_cast<std::uint32_t>(x[i])));
            REQUIRE(t[c * R + r] == x[i]);
        }
    for (int c = 0; c < C; c++) {
        std::int32_t sum = 0;
        for (int r = 0; r < R; r++)
            sum += x[r * C + c];
        CHECK(col[c] == sum);
    }

    // On a stream: an int8 matmul, a dense layer with relu and scale 0.5, a softmax.
    tpurt_stream *s = nullptr;
    REQUIRE(tpurt_stream_create(dev, nullptr, &s) == TPURT_OK);
    const std::vector<std::int8_t> a8{1, -2, 3, 4, 5, -6}, b8{7, 8, -9, 10, 11, 12};
    CTensor ta8(dev, TPURT_INT8, {2, 3}), tb8(dev, TPURT_INT8, {3, 2}),
        tc32(dev, TPURT_INT32, {2, 2});
    CHECK(tpurt_tensor_write(s, ta8.t, a8.data(), a8.size()) == TPURT_OK);
    CHECK(tpurt_tensor_write(s, tb8.t, b8.data(), b8.size()) == TPURT_OK);
    tpurt_tensor *matmul_args[3] = {ta8.t, tb8.t, tc32.t};
    CHECK(tpurt_op_launch(nullptr, s, "matmul", matmul_args, 3, nullptr, 0) == TPURT_OK);
    const std::vector<float> logits{1, 2, 3, -1, 0, 1}, w{1, 0, 0, 1, 1, -1}, bias{0.5f, -8};
    CTensor tl(dev, TPURT_FP32, {2, 3}), tp(dev, TPURT_FP32, {2, 3}), tw(dev, TPURT_FP32, {3, 2}),
        tb(dev, TPURT_FP32, {2}), td(dev, TPURT_FP32, {2, 2});
    CHECK(tpurt_tensor_write(s, tl.t, logits.data(), logits.size() * 4) == TPURT_OK);
    CHECK(tpurt_tensor_write(s, tw.t, w.data(), w.size() * 4) == TPURT_OK);
    CHECK(tpurt_tensor_write(s, tb.t, bias.data(), bias.size() * 4) == TPURT_OK);
    tpurt_tensor *softmax_args[2] = {tl.t, tp.t};
    CHECK(tpurt_op_launch(nullptr, s, "softmax", softmax_args, 2, nullptr, 0) == TPURT_OK);
    tpurt_tensor *dense_args[4] = {tl.t, tw.t, td.t, tb.t};
    const tpurt_op_attr dense[2] = {{"activation", "relu"}, {"scale", "0.5"}};
    CHECK(tpurt_op_launch(nullptr, s, "dense", dense_args, 4, dense, 2) == TPURT_OK);
    std::vector<std::int32_t> c32(4);
    std::vector<float> probs(6), dense_out(4);
    CHECK(tpurt_tensor_read(s, tc32.t, c32.data(), c32.size() * 4) == TPURT_OK);
    CHECK(tpurt_tensor_read(s, tp.t, probs.data(), probs.size() * 4) == TPURT_OK);
    CHECK(tpurt_tensor_read(s, td.t, dense_out.data(), dense_out.size() * 4) == TPURT_OK);
    CHECK(tpurt_stream_synchronize(s, TPURT_WAIT_DEFAULT) == TPURT_OK);
    tpurt_stream_destroy(s);
    CHECK(c32 == std::vector<std::int32_t>{1 * 7 - 2 * -9 + 3 * 11, 1 * 8 - 2 * 10 + 3 * 12,
                                           4 * 7 + 5 * -9 - 6 * 11, 4 * 8 + 5 * 10 - 6 * 12});
    for (int r = 0; r < 2; r++) {
        double denominator = 0;
        for (int c = 0; c < 3; c++)
            denominator += std::exp(double(logits[r * 3 + c]));
        for (int c = 0; c < 3; c++)
            CHECK(probs[r * 3 + c] ==
                  Approx(std::exp(double(logits[r * 3 + c])) / denominator).epsilon(1e-5));
    }
    // relu(0.5 * (x w + bias)), small integers: exact.
    CHECK(dense_out == std::vector<float>{(1 + 3 + 0.5f) * 0.5f, 0, (-1 + 1 + 0.5f) * 0.5f, 0});

    tpurt_close(dev);

    // The config struct is versioned like every other.
    config.struct_size = 4;
    CHECK(tpurt_open_in_process(&config, &dev) == TPURT_E_INVALID);
    CHECK(std::strstr(tpurt_last_error(), "struct_size") != nullptr);
    CHECK(tpurt_open_in_process(nullptr, nullptr) == TPURT_E_INVALID);
    REQUIRE(tpurt_open_in_process(nullptr, &dev) == TPURT_OK);
    REQUIRE(tpurt_get_info(dev, &info) == TPURT_OK);
    CHECK(info.mxu_rows == 128);
    CHECK(info.ub_bytes == 8u << 20);
    tpurt_close(dev);
}
