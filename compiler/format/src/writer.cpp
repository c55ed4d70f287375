// SPDX-License-Identifier: MIT
// writer.cpp - a model as .tpumodel bytes (docs/tpumodel.md): the payload little-endian, behind
// the header of magic, version, CRC-32 (zlib's) and payload size.
#include "format_constants.hpp"
#include "tpumodel/file.hpp"

#include <tpu_data/file_write.hpp>

#include <zlib.h>

#include <cstring>

namespace tpumodel {

namespace {

class Writer {
  public:
    void u8(std::uint8_t v) { out.push_back(v); }
    void u32(std::uint32_t v) { little_endian(v, 4); }
    void u64(std::uint64_t v) { little_endian(v, 8); }
    void i64(std::int64_t v) { little_endian(std::uint64_t(v), 8); }
    void f32(float v) {
        std::uint32_t bits;
        static_assert(sizeof bits == sizeof v);
        std::memcpy(&bits, &v, 4);
        u32(bits);
    }
    void str(const std::string &s) {
        u32(std::uint32_t(s.size()));
        out.insert(out.end(), s.begin(), s.end());
    }
    void ids(const std::vector<std::uint32_t> &v) {
        u32(std::uint32_t(v.size()));
        for (std::uint32_t id : v)
            u32(id);
    }
    std::vector<std::uint8_t> out;

  private:
    void little_endian(std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
            out.push_back(std::uint8_t(v >> (8 * i)));
    }
};

void write_attribute(Writer &w, const Attribute &a) {
    w.str(a.name);
    w.u8(std::uint8_t(a.value.index()));
    if (const auto *i = std::get_if<std::int64_t>(&a.value))
        w.i64(*i);
    else if (const auto *f = std::get_if<float>(&a.value))
        w.f32(*f);
    else if (const auto *s = std::get_if<std::string>(&a.value))
        w.str(*s);
    else if (const auto *is = std::get_if<std::vector<std::int64_t>>(&a.value)) {
        w.u32(std::uint32_t(is->size()));
        for (std::int64_t v : *is)
            w.i64(v);
    } else {
        const auto &fs = std::get<std::vector<float>>(a.value);
        w.u32(std::uint32_t(fs.size()));
        for (float v : fs)
            w.f32(v);
    }
}

} // namespace

std::vector<std::uint8_t> serialise(const Model &m) {
    validate(m, "serialise");
    Writer p;
    p.str(m.producer);
    p.u8(std::uint8_t(m.precision));
    p.u32(std::uint32_t(m.tensors.size()));
    for (const Tensor &t : m.tensors) {
        p.str(t.name);
        p.u8(std::uint8_t(t.dtype));
        p.u8(std::uint8_t(t.layout));
        p.u8(t.constant ? 1 : 0);
        p.u8(std::uint8_t(t.shape.size()));
        for (std::int64_t d : t.shape)
            p.i64(d);
        if (t.constant) {
            p.u64(t.data.size());
            p.out.insert(p.out.end(), t.data.begin(), t.data.end());
        }
    }
    p.u32(std::uint32_t(m.nodes.size()));
    for (const Node &n : m.nodes) {
        p.str(n.name);
        p.str(n.op);
        p.u8(std::uint8_t(n.placement));
        p.str(n.card_op);
        p.str(n.reason);
        p.ids(n.inputs);
        p.ids(n.outputs);
        p.u32(std::uint32_t(n.attributes.size()));
        for (const Attribute &a : n.attributes)
            write_attribute(p, a);
    }
    p.ids(m.inputs);
    p.ids(m.outputs);

    Writer file;
    file.out.assign(std::begin(format::magic), std::end(format::magic));
    file.u32(format_version);
    file.u32(std::uint32_t(crc32_z(0L, p.out.data(), p.out.size())));
    file.u64(p.out.size());
    file.out.insert(file.out.end(), p.out.begin(), p.out.end());
    return file.out;
}

void save(const Model &m, const std::string &path) {
    const std::vector<std::uint8_t> bytes = serialise(m);
    tpu_data::write_file_atomically(path, bytes.data(), bytes.size());
}

} // namespace tpumodel
