// SPDX-License-Identifier: MIT
// reader.cpp - .tpumodel bytes back into a model: the header (magic, version, size, CRC-32)
// first, then the payload front to back, every read and count bounded by the bytes left, and
// finally validate()'s graph rules. Every refusal is a FormatError saying what is wrong.
#include "format_constants.hpp"
#include "tpumodel/file.hpp"

#include <tpu_data/file_bytes.hpp>

#include <zlib.h>

#include <cstring>

namespace tpumodel {

namespace {

class Reader {
  public:
    Reader(std::span<const std::uint8_t> bytes, const std::string &origin)
        : b_(bytes), origin_(origin) {}
    std::uint64_t u(int bytes, const char *what) {
        need(std::size_t(bytes), what);
        std::uint64_t v = 0;
        for (int i = 0; i < bytes; ++i)
            v |= std::uint64_t(b_[pos_ + std::size_t(i)]) << (8 * i);
        pos_ += std::size_t(bytes);
        return v;
    }
    std::uint8_t u8(const char *what) { return std::uint8_t(u(1, what)); }
    std::uint32_t u32(const char *what) { return std::uint32_t(u(4, what)); }
    float f32(const char *what) {
        const std::uint32_t bits = u32(what);
        float v;
        std::memcpy(&v, &bits, 4);
        return v;
    }
    std::string str(const char *what) {
        const std::size_t len = u32(what);
        need(len, what);
        std::string s(reinterpret_cast<const char *>(b_.data() + pos_), len);
        pos_ += len;
        return s;
    }
    // A count of items of at least `each` bytes, refused if the bytes left cannot hold them.
    std::size_t count(std::size_t each, const char *what) {
        const std::size_t n = u32(what);
        if (n > (b_.size() - pos_) / each)
            fail(std::string("truncated: ") + what + " promises " + std::to_string(n) +
                 " items, the file is shorter");
        return n;
    }
    std::vector<std::uint32_t> ids(const char *what) {
        std::vector<std::uint32_t> v(count(4, what));
        for (std::uint32_t &id : v)
            id = u32(what);
        return v;
    }
    std::vector<std::uint8_t> bytes(std::uint64_t n, const char *what) {
        need(n, what);
        std::vector<std::uint8_t> v(b_.begin() + std::ptrdiff_t(pos_),
                                    b_.begin() + std::ptrdiff_t(pos_ + n));
        pos_ += std::size_t(n);
        return v;
    }
    bool done() const { return pos_ == b_.size(); }
    [[noreturn]] void fail(const std::string &what) const { throw FormatError(origin_, what); }

  private:
    void need(std::uint64_t n, const char *what) const {
        if (n > b_.size() - pos_)
            fail(std::string("truncated: ") + what + " is cut short");
    }
    std::span<const std::uint8_t> b_;
    std::size_t pos_ = 0;
    const std::string &origin_;
};

Tensor read_tensor(Reader &r) {
    Tensor t;
    t.name = r.str("a tensor's name");
    const std::uint8_t dtype = r.u8("a tensor's dtype");
    if (!dtype_known(dtype))
        r.fail("tensor '" + t.name + "' has an unknown dtype " + std::to_string(dtype));
    t.dtype = DType(dtype);
    const std::uint8_t layout = r.u8("a tensor's layout");
    if (layout > std::uint8_t(Layout::Hwio))
        r.fail("tensor '" + t.name + "' has an unknown layout " + std::to_string(layout));
    t.layout = Layout(layout);
    const std::uint8_t constant = r.u8("a tensor's kind");
    if (constant > 1)
        r.fail("tensor '" + t.name + "' has an unknown kind " + std::to_string(constant));
    t.constant = constant == 1;
    const std::uint8_t rank = r.u8("a tensor's rank");
    if (rank > max_rank)
        r.fail("tensor '" + t.name + "' has rank " + std::to_string(rank) + " (at most 8)");
    for (std::uint8_t i = 0; i < rank; ++i)
        t.shape.push_back(std::int64_t(r.u(8, "a tensor's shape")));
    if (t.constant)
        t.data = r.bytes(r.u(8, "a constant's size"), "a constant's data");
    return t;
}

Attribute read_attribute(Reader &r) {
    Attribute a;
    a.name = r.str("an attribute's name");
    switch (r.u8("an attribute's kind")) {
    case 0:
        a.value = std::int64_t(r.u(8, "an integer attribute"));
        break;
    case 1:
        a.value = r.f32("a float attribute");
        break;
    case 2:
        a.value = r.str("a string attribute");
        break;
    case 3: {
        std::vector<std::int64_t> v(r.count(8, "an integer list attribute"));
        for (std::int64_t &x : v)
            x = std::int64_t(r.u(8, "an integer list attribute"));
        a.value = std::move(v);
        break;
    }
    case 4: {
        std::vector<float> v(r.count(4, "a float list attribute"));
        for (float &x : v)
            x = r.f32("a float list attribute");
        a.value = std::move(v);
        break;
    }
    default:
        r.fail("attribute '" + a.name + "' has an unknown kind");
    }
    return a;
}

Node read_node(Reader &r) {
    Node n;
    n.name = r.str("a node's name");
    n.op = r.str("a node's op");
    const std::uint8_t placement = r.u8("a node's placement");
    if (placement > std::uint8_t(Placement::Cpu))
        r.fail(n.describe() + " has an unknown placement " + std::to_string(placement));
    n.placement = Placement(placement);
    n.card_op = r.str("a node's card op");
    n.reason = r.str("a node's placement reason");
    n.inputs = r.ids("a node's inputs");
    n.outputs = r.ids("a node's outputs");
    for (std::size_t i = r.count(9, "a node's attributes"); i > 0; --i)
        n.attributes.push_back(read_attribute(r));
    return n;
}

} // namespace

Model parse(std::span<const std::uint8_t> bytes, const std::string &origin) {
    auto fail = [&](const std::string &what) { throw FormatError(origin, what); };
    if (bytes.size() < sizeof format::magic ||
        std::memcmp(bytes.data(), format::magic, sizeof format::magic) != 0)
        fail("not a .tpumodel file (no TPUMODEL magic)");
    if (bytes.size() < format::header_size)
        fail("truncated: the header is cut short");
    Reader header(bytes.subspan(sizeof format::magic, format::header_size - sizeof format::magic),
                  origin);
    const std::uint32_t version = header.u32("the version");
    if (version != format_version)
        fail(".tpumodel format version " + std::to_string(version) +
             " is not supported (this build reads version " + std::to_string(format_version) + ")");
    const std::uint32_t crc = header.u32("the checksum");
    const std::uint64_t size = header.u(8, "the payload size");
    if (size != bytes.size() - format::header_size)
        fail("truncated or padded: the header gives " + std::to_string(size) +
             " payload bytes, the file holds " +
             std::to_string(bytes.size() - format::header_size));
    const std::span<const std::uint8_t> payload = bytes.subspan(format::header_size);
    if (crc32_z(0L, payload.data(), payload.size()) != crc)
        fail("checksum mismatch: the file is corrupt");

    Reader r(payload, origin);
    Model m;
    m.producer = r.str("the producer");
    const std::uint8_t precision = r.u8("the precision");
    if (precision > std::uint8_t(Precision::Int8))
        fail("unknown precision " + std::to_string(precision));
    m.precision = Precision(precision);
    for (std::size_t i = r.count(8, "the tensor table"); i > 0; --i)
        m.tensors.push_back(read_tensor(r));
    for (std::size_t i = r.count(29, "the node table"); i > 0; --i)
        m.nodes.push_back(read_node(r));
    m.inputs = r.ids("the graph inputs");
    m.outputs = r.ids("the graph outputs");
    if (!r.done())
        fail("unexpected bytes after the graph outputs");
    validate(m, origin);
    return m;
}

Model load(const std::string &path) {
    return parse(tpu_data::read_file_bytes(path), path); // unreadable: DataError naming it
}

} // namespace tpumodel
