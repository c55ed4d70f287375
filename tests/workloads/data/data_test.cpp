// SPDX-License-Identifier: MIT
// data_test.cpp - the data set readers on the real files (Fashion-MNIST and digits, as Debian
// ships them) and on malformed files written here: every error names the file and the fault.
#include <tpu_data/csv.hpp>
#include <tpu_data/dataset.hpp>
#include <tpu_data/error.hpp>
#include <tpu_data/idx.hpp>

#include <catch2/catch.hpp>
#include <zlib.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using tpu_data::DataError;

namespace {

std::string fashion_dir() {
    return tpu_data::datasets_dir() + "/fashion-mnist";
}
std::string sklearn_dir() {
    return tpu_data::datasets_dir() + "/sklearn";
}

// A scratch directory removed at the end of the test case.
struct TempDir {
    fs::path path;
    TempDir() {
        std::string templ = (fs::temp_directory_path() / "tpu-data-XXXXXX").string();
        REQUIRE(mkdtemp(templ.data()) != nullptr);
        path = templ;
    }
    ~TempDir() { fs::remove_all(path); }
    std::string file(const std::string &name) const { return (path / name).string(); }
};

void write_plain(const std::string &path, const std::vector<std::uint8_t> &bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

void write_gz(const std::string &path, const std::vector<std::uint8_t> &bytes) {
    gzFile f = gzopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(gzwrite(f, bytes.data(), unsigned(bytes.size())) == int(bytes.size()));
    gzclose(f);
}

// An IDX ubyte file's bytes: header for `dims`, then `data`.
std::vector<std::uint8_t> idx_bytes(const std::vector<std::uint32_t> &dims,
                                    const std::vector<std::uint8_t> &data) {
    std::vector<std::uint8_t> b = {0, 0, 0x08, std::uint8_t(dims.size())};
    for (std::uint32_t d : dims)
        for (int s = 24; s >= 0; s -= 8)
            b.push_back(std::uint8_t(d >> s));
    b.insert(b.end(), data.begin(), data.end());
    return b;
}

// Writes a small Fashion-MNIST-shaped training set (n images, labels) into dir.
void write_fashion(const TempDir &dir, std::uint32_t n, const std::vector<std::uint8_t> &labels) {
    write_gz(dir.file("train-images-idx3-ubyte.gz"),
             idx_bytes({n, 28, 28}, std::vector<std::uint8_t>(n * 784, 255)));
    write_gz(dir.file("train-labels-idx1-ubyte.gz"),
             idx_bytes({std::uint32_t(labels.size())}, labels));
}

std::array<std::size_t, 10> class_counts(const tpu_data::Dataset &d) {
    std::array<std::size_t, 10> counts{};
    for (std::uint8_t l : d.labels)
        ++counts.at(l);
    return counts;
}

} // namespace

TEST_CASE("Fashion-MNIST as Debian ships it: 60,000 + 10,000 balanced 28x28 images") {
    INFO("data sets from " << fashion_dir() << " (fetched by make deps)");
    tpu_data::Dataset train = tpu_data::load_fashion_mnist(fashion_dir(), tpu_data::Split::train);
    tpu_data::Dataset test = tpu_data::load_fashion_mnist(fashion_dir(), tpu_data::Split::test);
    CHECK(train.count == 60000);
    CHECK(test.count == 10000);
    CHECK(train.sample_size() == 784);
    CHECK(train.classes() == 10);
    for (std::size_t c : class_counts(train))
        CHECK(c == 6000);
    for (std::size_t c : class_counts(test))
        CHECK(c == 1000);
    // The first training and test images are both an ankle boot (class 9).
    CHECK(train.labels[0] == 9);
    CHECK(test.labels[0] == 9);
    float lo = 1, hi = 0;
    for (float v : train.features) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    CHECK(lo == 0.0f);
    CHECK(hi == 1.0f);
}

TEST_CASE("digits from scikit-learn: 1,797 8x8 images with their known class counts") {
    tpu_data::Dataset d = tpu_data::load_digits(sklearn_dir());
    CHECK(d.count == 1797);
    CHECK(d.sample_size() == 64);
    const std::array<std::size_t, 10> expected = {178, 182, 177, 183, 181, 182, 181, 179, 174, 180};
    CHECK(class_counts(d) == expected);
    CHECK(d.labels[0] == 0);
}

TEST_CASE("normalisation from the training set gives it mean 0 and deviation 1") {
    tpu_data::Dataset d = tpu_data::load_digits(sklearn_dir());
    tpu_data::Normalization n = tpu_data::compute_normalization(d);
    CHECK(n.stddev > 0.0f);
    tpu_data::normalize(d, n);
    tpu_data::Normalization after = tpu_data::compute_normalization(d);
    CHECK(std::abs(after.mean) < 1e-4f);
    CHECK(std::abs(after.stddev - 1.0f) < 1e-4f);
}

TEST_CASE("a missing data set file is named in the error") {
    TempDir dir;
    CHECK_THROWS_WITH(tpu_data::load_fashion_mnist(dir.path.string(), tpu_data::Split::test),
                      Catch::Contains(dir.file("t10k-images-idx3-ubyte")) &&
                          Catch::Contains("cannot open: No such file or directory"));
    CHECK_THROWS_WITH(tpu_data::load_digits(dir.path.string()),
                      Catch::Contains("digits.csv.gz: cannot open"));
}

TEST_CASE("malformed IDX files are rejected with what is wrong") {
    TempDir dir;
    const std::string f = dir.file("x.idx");
    auto reject = [&](const std::vector<std::uint8_t> &bytes, const std::string &why) {
        write_plain(f, bytes);
        CHECK_THROWS_WITH(tpu_data::read_idx(f),
                          Catch::StartsWith(f + ": ") && Catch::Contains(why));
    };
    reject({0, 0}, "shorter than the 4-byte magic");
    reject({1, 0, 8, 1, 0, 0, 0, 1, 7}, "does not start with two zero bytes");
    reject({0, 0, 0x0d, 1, 0, 0, 0, 1, 7}, "is not unsigned byte");
    reject({0, 0, 8, 0}, "0 dimensions");
    reject({0, 0, 8, 2, 0, 0, 0, 3}, "truncated: the IDX header needs 12 bytes");
    reject(idx_bytes({2, 0}, {}), "dimension 1 has size 0");
    reject(idx_bytes({3, 4}, std::vector<std::uint8_t>(11)), "truncated: the header promises 12");
    reject(idx_bytes({3, 4}, std::vector<std::uint8_t>(13)), "1 unexpected bytes");
    tpu_data::IdxArray ok = (write_plain(f, idx_bytes({3, 4}, std::vector<std::uint8_t>(12, 5))),
                             tpu_data::read_idx(f));
    CHECK(ok.dims == std::vector<std::uint32_t>{3, 4});
    CHECK(ok.data == std::vector<std::uint8_t>(12, 5));
}

TEST_CASE("a truncated or corrupt gzip file is reported, not read as short data") {
    TempDir dir;
    const std::string good = dir.file("good.gz");
    std::vector<std::uint8_t> payload = idx_bytes({1000}, std::vector<std::uint8_t>(1000, 3));
    for (std::size_t i = 0; i < payload.size(); ++i)
        payload[i] ^= std::uint8_t(i * 131);
    write_gz(good, payload);
    std::vector<std::uint8_t> gz;
    {
        std::ifstream in(good, std::ios::binary);
        gz.assign(std::istreambuf_iterator<char>(in), {});
    }
    REQUIRE(gz.size() > 40);
    const std::string cut = dir.file("cut.gz");
    write_plain(cut,
                std::vector<std::uint8_t>(gz.begin(), gz.begin() + std::ptrdiff_t(gz.size() / 2)));
    CHECK_THROWS_WITH(tpu_data::read_idx(cut),
                      Catch::StartsWith(cut + ": ") && Catch::Contains("compressed data"));
    std::vector<std::uint8_t> bad = gz;
    for (std::size_t i = 20; i < 30; ++i)
        bad[i] ^= 0xff;
    const std::string corrupt = dir.file("corrupt.gz");
    write_plain(corrupt, bad);
    CHECK_THROWS_WITH(tpu_data::read_idx(corrupt),
                      Catch::StartsWith(corrupt + ": ") && Catch::Contains("compressed data"));
}

TEST_CASE("Fashion-MNIST files that disagree with each other or with the format") {
    TempDir dir;
    SECTION("labels and images count differently") {
        write_fashion(dir, 3, {1, 2});
        CHECK_THROWS_WITH(tpu_data::load_fashion_mnist(dir.path.string(), tpu_data::Split::train),
                          Catch::Contains("2 labels for 3 images"));
    }
    SECTION("a label outside 0..9") {
        write_fashion(dir, 3, {1, 10, 2});
        CHECK_THROWS_WITH(tpu_data::load_fashion_mnist(dir.path.string(), tpu_data::Split::train),
                          Catch::Contains("train-labels-idx1-ubyte.gz: label 10 of sample 1"));
    }
    SECTION("images that are not 28x28") {
        write_gz(dir.file("train-images-idx3-ubyte.gz"),
                 idx_bytes({2, 8, 8}, std::vector<std::uint8_t>(128)));
        write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_bytes({2}, {0, 1}));
        CHECK_THROWS_WITH(tpu_data::load_fashion_mnist(dir.path.string(), tpu_data::Split::train),
                          Catch::Contains("not a set of 28x28 images"));
    }
    SECTION("a well-formed small set loads") {
        write_fashion(dir, 2, {4, 9});
        tpu_data::Dataset d =
            tpu_data::load_fashion_mnist(dir.path.string(), tpu_data::Split::train);
        CHECK(d.count == 2);
        CHECK(d.labels == std::vector<std::uint8_t>{4, 9});
        CHECK(d.features[0] == 1.0f);
    }
}

TEST_CASE("malformed CSV tables are rejected with the line") {
    const std::string f = "table.csv";
    CHECK(tpu_data::parse_csv_numbers("1,2\n3,4.5\n", f).at(1, 1) == 4.5f);
    CHECK_THROWS_WITH(tpu_data::parse_csv_numbers("1,2\n3\n", f),
                      Catch::Equals("table.csv: line 2: 1 fields, but the first row has 2"));
    CHECK_THROWS_WITH(tpu_data::parse_csv_numbers("1,2\n3,x\n", f),
                      Catch::Equals("table.csv: line 2: field 2 'x' is not a number"));
    CHECK_THROWS_WITH(tpu_data::parse_csv_numbers("1,,2\n", f),
                      Catch::Equals("table.csv: line 1: field 2 '' is not a number"));
    CHECK_THROWS_WITH(tpu_data::parse_csv_numbers("", f),
                      Catch::Equals("table.csv: no rows: the file is empty"));
}
