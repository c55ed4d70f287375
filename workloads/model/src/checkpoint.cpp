// SPDX-License-Identifier: MIT
// checkpoint.cpp - writing and validating checkpoint files.
#include "tpu_model/checkpoint.hpp"

#include <tpu_data/error.hpp>
#include <tpu_data/file_bytes.hpp>
#include <tpu_data/file_write.hpp>

#include <zlib.h>

#include <cstring>
#include <stdexcept>

namespace tpu_model {

namespace {

constexpr char magic[8] = {'T', 'P', 'U', 'C', 'K', 'P', 'T', '\n'};
constexpr std::uint32_t format_version = 1;
constexpr std::size_t header_size = 8 + 4 + 4 + 8; // magic, version, crc32, payload bytes
constexpr std::uint32_t max_rank = 8;

void put_u32(std::string &out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
        out.push_back(char(v >> (8 * i)));
}
void put_u64(std::string &out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i)
        out.push_back(char(v >> (8 * i)));
}
void put_string(std::string &out, const std::string &s) {
    put_u32(out, std::uint32_t(s.size()));
    out += s;
}

// Reads the payload front to back; every read checks the bytes are there.
class Reader {
  public:
    Reader(const std::uint8_t *p, std::size_t n, const std::string &path)
        : p_(p), n_(n), path_(path) {}
    std::uint64_t u(int bytes) {
        need(std::size_t(bytes), "a number");
        std::uint64_t v = 0;
        for (int i = 0; i < bytes; ++i)
            v |= std::uint64_t(p_[pos_ + std::size_t(i)]) << (8 * i);
        pos_ += std::size_t(bytes);
        return v;
    }
    std::string str() {
        const std::size_t len = std::size_t(u(4));
        need(len, "a string");
        std::string s(reinterpret_cast<const char *>(p_ + pos_), len);
        pos_ += len;
        return s;
    }
    void floats(std::vector<float> &out, std::size_t count) {
        if (count > (n_ - pos_) / 4)
            fail("truncated: a tensor's data is cut short");
        out.resize(count);
        std::memcpy(out.data(), p_ + pos_, count * 4);
        pos_ += count * 4;
    }
    bool done() const { return pos_ == n_; }
    [[noreturn]] void fail(const std::string &what) const {
        throw tpu_data::DataError(path_, what);
    }

  private:
    void need(std::size_t bytes, const char *what) const {
        if (bytes > n_ - pos_)
            fail(std::string("truncated: ") + what + " is cut short");
    }
    const std::uint8_t *p_;
    std::size_t n_, pos_ = 0;
    const std::string &path_;
};

} // namespace

const NamedTensor *Checkpoint::find(const std::string &name) const {
    for (const NamedTensor &t : tensors)
        if (t.name == name)
            return &t;
    return nullptr;
}

void save_checkpoint(const Checkpoint &c, const std::string &path) {
    std::string payload;
    put_string(payload, c.model);
    put_u64(payload, c.epoch);
    put_u64(payload, c.step);
    put_u64(payload, c.seed);
    put_u32(payload, std::uint32_t(c.notes.size()));
    for (const auto &[k, v] : c.notes) {
        put_string(payload, k);
        put_string(payload, v);
    }
    put_u32(payload, std::uint32_t(c.tensors.size()));
    for (const NamedTensor &t : c.tensors) {
        std::size_t count = 1;
        for (std::uint32_t d : t.shape)
            count *= d;
        if (t.shape.size() > max_rank || count != t.data.size())
            throw std::invalid_argument("save_checkpoint: tensor " + t.name +
                                        " has a shape that does not match its data");
        put_string(payload, t.name);
        put_u32(payload, std::uint32_t(t.shape.size()));
        for (std::uint32_t d : t.shape)
            put_u32(payload, d);
        payload.append(reinterpret_cast<const char *>(t.data.data()), t.data.size() * 4);
    }
    std::string file(magic, sizeof magic);
    put_u32(file, format_version);
    put_u32(file, std::uint32_t(crc32(0L, reinterpret_cast<const Bytef *>(payload.data()),
                                      uInt(payload.size()))));
    put_u64(file, payload.size());
    file += payload;

    tpu_data::write_file_atomically(path, file.data(), file.size());
}

Checkpoint load_checkpoint(const std::string &path) {
    const std::vector<std::uint8_t> bytes = tpu_data::read_file_bytes(path);
    auto fail = [&](const std::string &what) { throw tpu_data::DataError(path, what); };
    if (bytes.size() < sizeof magic || std::memcmp(bytes.data(), magic, sizeof magic) != 0)
        fail("not a checkpoint (no TPUCKPT magic)");
    if (bytes.size() < header_size)
        fail("truncated: the header is cut short");
    Reader fields(bytes.data() + sizeof magic, header_size - sizeof magic, path);
    const auto version = std::uint32_t(fields.u(4));
    if (version != format_version)
        fail("checkpoint format version " + std::to_string(version) +
             " is not supported (this build reads version 1)");
    const auto crc = std::uint32_t(fields.u(4));
    const std::uint64_t size = fields.u(8);
    if (size != bytes.size() - header_size)
        fail("truncated or padded: the header gives " + std::to_string(size) +
             " payload bytes, the file holds " + std::to_string(bytes.size() - header_size));
    const std::uint8_t *payload = bytes.data() + header_size;
    if (crc32(0L, payload, uInt(size)) != crc)
        fail("checksum mismatch: the file is corrupt");

    Reader r(payload, std::size_t(size), path);
    Checkpoint c;
    c.model = r.str();
    c.epoch = r.u(8);
    c.step = r.u(8);
    c.seed = r.u(8);
    for (auto n = r.u(4); n > 0; --n) {
        std::string k = r.str();
        c.notes[k] = r.str();
    }
    for (auto n = r.u(4); n > 0; --n) {
        NamedTensor t;
        t.name = r.str();
        const auto rank = std::uint32_t(r.u(4));
        if (rank > max_rank)
            r.fail("tensor " + t.name + " has rank " + std::to_string(rank) + " (at most 8)");
        std::size_t count = 1;
        for (std::uint32_t i = 0; i < rank; ++i) {
            t.shape.push_back(std::uint32_t(r.u(4)));
            count *= t.shape.back();
            if (count > size)
                r.fail("tensor " + t.name + " is larger than the file");
        }
        r.floats(t.data, count);
        c.tensors.push_back(std::move(t));
    }
    if (!r.done())
        r.fail("unexpected bytes after the last tensor");
    return c;
}

} // namespace tpu_model
