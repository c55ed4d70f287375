// SPDX-License-Identifier: MIT
// TensorBoard event files (tpu_report/tensorboard_writer.hpp): the two records of the format
// vector in tests/golden/tfevents, written from the format's definition without TensorFlow, byte
// for byte; and a writer's file read back record by record.
#include <tpu_report/tensorboard_writer.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace {

std::string read_all(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::uint64_t le(const std::string &bytes, std::size_t at, int n) {
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
    return v;
}

} // namespace

TEST_CASE("the writer's records equal TensorBoard's format vector byte for byte", "[tensorboard]") {
    const std::string golden = read_all(TPU_GOLDEN_DIR "/tfevents/events.out.tfevents.0.golden");
    REQUIRE(golden.size() == 82);
    const std::string written =
        tpu_report::file_version_record(1.0) + tpu_report::scalar_record(2.0, 1, "loss", 0.5f);
    CHECK(written == golden);
}

TEST_CASE("a TFRecord's checksums are CRC-32C, masked", "[tensorboard]") {
    // CRC-32C("123456789") = e3069283; masked: ((c >> 15) | (c << 17)) + 0xa282ead8.
    const std::string record = tpu_report::tfrecord("123456789");
    REQUIRE(record.size() == 8 + 4 + 9 + 4);
    const std::uint32_t c = 0xe3069283u;
    CHECK(le(record, 21, 4) == std::uint32_t(((c >> 15) | (c << 17)) + 0xa282ead8u));
}

TEST_CASE("a writer's event file holds the version, then each scalar in order", "[tensorboard]") {
    const std::string dir =
        (std::filesystem::temp_directory_path() / ("tb-" + std::to_string(getpid()))).string();
    std::filesystem::remove_all(dir);
    std::string path;
    {
        tpu_report::TensorBoardWriter writer(dir);
        path = writer.path();
        CHECK(path.find("/events.out.tfevents.") != std::string::npos);
        writer.scalar("train/loss", 1, 2.25);
        writer.scalar("train/loss", 2, 0.0);
        writer.scalar("test/accuracy", 2, 0.875);
    }
    const std::string bytes = read_all(path);
    // Walk the records: each one's length, and where its payload names the tag and value.
    std::size_t at = 0, records = 0;
    std::string tags;
    while (at < bytes.size()) {
        REQUIRE(at + 12 <= bytes.size());
        const std::uint64_t length = le(bytes, at, 8);
        REQUIRE(at + 12 + length + 4 <= bytes.size());
        const std::string payload = bytes.substr(at + 12, length);
        CHECK(tpu_report::tfrecord(payload) == bytes.substr(at, 12 + length + 4));
        for (const char *tag : {"train/loss", "test/accuracy", "brain.Event:2"})
            if (payload.find(tag) != std::string::npos)
                tags += std::string(tags.empty() ? "" : ",") + tag;
        at += 12 + length + 4;
        ++records;
    }
    CHECK(records == 4);
    CHECK(tags == "brain.Event:2,train/loss,train/loss,test/accuracy");
    // A zero is written as a value (TensorBoard's oneof), not left out: 0.875f's bytes follow.
    float v = 0.875f;
    CHECK(bytes.find(std::string(reinterpret_cast<const char *>(&v), 4)) != std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a TensorBoard directory that cannot be created is an error naming it", "[tensorboard]") {
    CHECK_THROWS_WITH(tpu_report::TensorBoardWriter("/proc/no-such/tb"),
                      Catch::Contains("/proc/no-such/tb"));
}
