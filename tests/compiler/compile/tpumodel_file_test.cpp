// SPDX-License-Identifier: MIT
// tpumodel_file_test.cpp - .tpumodel files: a model with every kind of tensor, attribute and
// placement written and read back unchanged, and each broken file refused with its reason
// (bad magic, another version, a checksum mismatch, truncation, ids out of range, a graph out
// of order, data of the wrong size).
#include <tpumodel/file.hpp>

#include <catch2/catch.hpp>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include <unistd.h>

using namespace tpumodel;

namespace {

std::vector<std::uint8_t> bytes_of(const std::vector<float> &v) {
    std::vector<std::uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

// x [1, 4] -> Gemm(w [4, 2], b [2]) -> y [1, 2] -> Relu on the CPU -> z.
Model small_model() {
    Model m;
    m.producer = "tpumodel_file_test";
    m.precision = Precision::Bf16;
    const std::uint32_t x = m.add_tensor({"x", DType::Float, Layout::Plain, {1, 4}, false, {}});
    const std::uint32_t w = m.add_tensor(
        {"w", DType::Float, Layout::Plain, {4, 2}, true, bytes_of({1, 2, 3, 4, 5, 6, 7, 8})});
    const std::uint32_t b = m.add_tensor(
        {"b", DType::Int64, Layout::Hwio, {2}, true, std::vector<std::uint8_t>(16, 7)});
    const std::uint32_t y = m.add_tensor({"y", DType::Float, Layout::Nhwc, {1, 2}, false, {}});
    const std::uint32_t z = m.add_tensor({"z", DType::Bfloat16, Layout::Plain, {1, 2}, false, {}});
    Node gemm{"fc", "Gemm", Placement::Card, "dense", "", {}, {x, w, b}, {y}};
    gemm.set("alpha", 1.5f);
    gemm.set("transB", std::int64_t(-3));
    gemm.set("activation", std::string("Relu"));
    gemm.set("perm", std::vector<std::int64_t>{0, 2, 3, 1});
    gemm.set("scales", std::vector<float>{0.5f, -2.0f});
    m.nodes.push_back(gemm);
    m.nodes.push_back({"act", "Relu", Placement::Cpu, "", "a reason", {}, {y, no_tensor}, {z}});
    m.inputs = {x};
    m.outputs = {z};
    return m;
}

// Rewrites the header's payload size and CRC for the bytes after it (a file edited on purpose).
void reseal(std::vector<std::uint8_t> &file) {
    const std::uint64_t size = file.size() - 24;
    const auto crc = std::uint32_t(crc32_z(0L, file.data() + 24, size));
    for (int i = 0; i < 4; ++i)
        file[12 + std::size_t(i)] = std::uint8_t(crc >> (8 * i));
    for (int i = 0; i < 8; ++i)
        file[16 + std::size_t(i)] = std::uint8_t(size >> (8 * i));
}

void put_u32(std::vector<std::uint8_t> &file, std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
        file[at + std::size_t(i)] = std::uint8_t(v >> (8 * i));
}

std::string refusal(const std::vector<std::uint8_t> &file) {
    try {
        parse(file, "m.tpumodel");
    } catch (const FormatError &e) {
        return e.what();
    }
    return "accepted";
}

} // namespace

TEST_CASE("a model written and read back is unchanged", "[tpumodel]") {
    const Model m = small_model();
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("tpumodel_file_test." + std::to_string(getpid()));
    save(m, path.string());
    const Model r = load(path.string());
    std::filesystem::remove(path);

    CHECK(r.producer == m.producer);
    CHECK(r.precision == Precision::Bf16);
    CHECK(r.inputs == m.inputs);
    CHECK(r.outputs == m.outputs);
    REQUIRE(r.tensors.size() == m.tensors.size());
    for (std::size_t i = 0; i < m.tensors.size(); ++i) {
        CHECK(r.tensors[i].name == m.tensors[i].name);
        CHECK(r.tensors[i].dtype == m.tensors[i].dtype);
        CHECK(r.tensors[i].layout == m.tensors[i].layout);
        CHECK(r.tensors[i].shape == m.tensors[i].shape);
        CHECK(r.tensors[i].constant == m.tensors[i].constant);
        CHECK(r.tensors[i].data == m.tensors[i].data);
    }
    REQUIRE(r.nodes.size() == 2);
    const Node &g = r.nodes[0];
    CHECK(g.name == "fc");
    CHECK(g.op == "Gemm");
    CHECK(g.placement == Placement::Card);
    CHECK(g.card_op == "dense");
    CHECK(g.inputs == m.nodes[0].inputs);
    CHECK(g.outputs == m.nodes[0].outputs);
    CHECK(g.get_float("alpha", 0) == 1.5f);
    CHECK(g.get_int("transB", 0) == -3);
    CHECK(g.get_string("activation", "") == "Relu");
    CHECK(g.get_ints("perm", {}) == std::vector<std::int64_t>{0, 2, 3, 1});
    REQUIRE(g.find("scales"));
    CHECK(std::get<std::vector<float>>(g.find("scales")->value) == std::vector<float>{0.5f, -2.0f});
    CHECK(r.nodes[1].placement == Placement::Cpu);
    CHECK(r.nodes[1].reason == "a reason");
    CHECK(r.nodes[1].inputs[1] == no_tensor);
}

TEST_CASE("a broken .tpumodel file is refused with its reason", "[tpumodel]") {
    const std::vector<std::uint8_t> good = serialise(small_model());
    REQUIRE(refusal(good) == "accepted");

    SECTION("bad magic") {
        std::vector<std::uint8_t> f = good;
        f[0] = 'X';
        CHECK(refusal(f) == "m.tpumodel: not a .tpumodel file (no TPUMODEL magic)");
    }
    SECTION("another version") {
        std::vector<std::uint8_t> f = good;
        put_u32(f, 8, 2);
        CHECK(refusal(f) == "m.tpumodel: .tpumodel format version 2 is not supported (this build "
                            "reads version 1)");
    }
    SECTION("a corrupt byte") {
        std::vector<std::uint8_t> f = good;
        f[f.size() / 2] ^= 0x10;
        CHECK(refusal(f) == "m.tpumodel: checksum mismatch: the file is corrupt");
    }
    SECTION("a file cut short") {
        std::vector<std::uint8_t> f(good.begin(), good.end() - 1);
        CHECK_THAT(refusal(f), Catch::StartsWith("m.tpumodel: truncated or padded: the header "
                                                 "gives"));
        f.resize(20);
        CHECK(refusal(f) == "m.tpumodel: truncated: the header is cut short");
    }
    SECTION("a payload cut short with a header that agrees") {
        std::vector<std::uint8_t> f(good.begin(), good.end() - 6);
        reseal(f);
        CHECK(refusal(f) == "m.tpumodel: truncated: the graph outputs is cut short");
    }
    SECTION("a count larger than the file") {
        std::vector<std::uint8_t> f = good;
        put_u32(f, f.size() - 8, 1000); // the graph outputs' count
        reseal(f);
        CHECK(refusal(f) == "m.tpumodel: truncated: the graph outputs promises 1000 items, the "
                            "file is shorter");
    }
    SECTION("an id out of range") {
        std::vector<std::uint8_t> f = good;
        put_u32(f, f.size() - 4, 99); // the graph output's id
        reseal(f);
        CHECK(refusal(f) == "m.tpumodel: a graph output refers to tensor 99, out of range (the "
                            "model has 5 tensors)");
    }
    SECTION("a graph input that is a constant") {
        std::vector<std::uint8_t> f = good;
        put_u32(f, f.size() - 12, 1); // the graph input: w
        reseal(f);
        CHECK(refusal(f) == "m.tpumodel: graph input 'w' is a constant or listed twice");
    }
    SECTION("bytes after the graph") {
        std::vector<std::uint8_t> f = good;
        f.push_back(0);
        reseal(f);
        CHECK(refusal(f) == "m.tpumodel: unexpected bytes after the graph outputs");
    }
}

TEST_CASE("a model that breaks the graph rules is never written", "[tpumodel]") {
    auto refused = [](const Model &m) {
        try {
            serialise(m);
        } catch (const FormatError &e) {
            return std::string(e.what());
        }
        return std::string("written");
    };
    Model m = small_model();
    REQUIRE(refused(m) == "written");
    SECTION("nodes out of order") {
        std::swap(m.nodes[0], m.nodes[1]);
        CHECK(refused(m) ==
              "serialise: node 'act' (Relu) reads tensor 'y' before any node produces "
              "it (a cycle, a missing initialiser or nodes out of order)");
    }
    SECTION("a tensor written twice") {
        m.nodes[1].outputs = {3};
        CHECK(refused(m) == "serialise: node 'act' (Relu) writes tensor 'y', which already has a "
                            "value");
    }
    SECTION("a constant's data of the wrong size") {
        m.tensors[1].data.pop_back();
        CHECK(refused(m) == "serialise: tensor 1 'w' holds 31 bytes of data, its shape [4, 2] of "
                            "float32 needs 32");
    }
    SECTION("an absurd shape") {
        m.tensors[3].shape = {1 << 20, 1 << 20, 8};
        CHECK(refused(m) == "serialise: tensor 3 'y' has more than 2^32 elements: [1048576, "
                            "1048576, 8]");
    }
    SECTION("a node on the card without its op") {
        m.nodes[0].card_op.clear();
        CHECK(refused(m) == "serialise: node 'fc' (Gemm) is placed on the card without a card op");
    }
}

TEST_CASE("uint8, int8 and int32 tensors are written and read back unchanged", "[tpumodel]") {
    Model m;
    m.producer = "tpumodel_file_test";
    const std::uint32_t x = m.add_tensor({"x", DType::Uint8, Layout::Plain, {2, 3}, false, {}});
    const std::uint32_t s =
        m.add_tensor({"s", DType::Float, Layout::Plain, {}, true, bytes_of({0.5f})});
    const std::uint32_t z = m.add_tensor({"z", DType::Uint8, Layout::Plain, {}, true, {255}});
    m.add_tensor({"w", DType::Int8, Layout::Plain, {3, 2}, true, {0x80, 0x7f, 0, 1, 0xff, 2}});
    const std::uint32_t b = m.add_tensor(
        {"b", DType::Int32, Layout::Plain, {2}, true, {1, 0, 0, 0x80, 0xff, 0xff, 0xff, 0xff}});
    const std::uint32_t y = m.add_tensor({"y", DType::Float, Layout::Plain, {2, 3}, false, {}});
    m.nodes.push_back({"dq", "DequantizeLinear", Placement::Card, "unary", "", {}, {x, s, z}, {y}});
    m.inputs = {x};
    m.outputs = {y};
    const Model r = parse(serialise(m), "m.tpumodel");
    REQUIRE(r.tensors.size() == m.tensors.size());
    for (std::size_t i = 0; i < m.tensors.size(); ++i) {
        INFO(m.tensors[i].name);
        CHECK(r.tensors[i].dtype == m.tensors[i].dtype);
        CHECK(r.tensors[i].shape == m.tensors[i].shape);
        CHECK(r.tensors[i].data == m.tensors[i].data);
    }
    // A constant's size is its elements x the dtype's size: 4 bytes of int32 is one element.
    m.tensors[b].data.resize(4);
    CHECK_THROWS_WITH(serialise(m), Catch::Contains("'b'"));
}
