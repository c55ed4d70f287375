// SPDX-License-Identifier: MIT
// Parser of the AMX golden vectors: a line-oriented tokenizer that checks every word's width
// and hex digits and every case's word count, so a truncated or edited file fails with the
// line it breaks on instead of yielding wrong cases.
#include "tpu_test/amx_golden.hpp"

#include <fstream>
#include <sstream>

namespace tpu::test {
namespace {

class Reader {
  public:
    Reader(const std::string &text, const std::string &name) : in_(text), name_(name) {}

    [[noreturn]] void fail(const std::string &what) const {
        throw GoldenError(name_ + ":" + std::to_string(line_) + ": " + what);
    }

    // The next token, skipping blank and comment lines; empty at the end of the file.
    std::string next() {
        std::string token;
        while (!(words_ >> token)) {
            std::string line;
            if (!std::getline(in_, line))
                return {};
            line_++;
            if (!line.empty() && line[0] == '#')
                line.clear();
            words_.clear();
            words_.str(line);
        }
        return token;
    }

    // A hex word of exactly `digits` digits.
    uint32_t hex(unsigned digits, const char *what) {
        const std::string token = next();
        if (token.empty())
            fail(std::string("file ends inside a case, expected ") + what);
        if (token.size() != digits ||
            token.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
            fail(std::string("'") + token + "' is not a " + std::to_string(digits) +
                 "-digit hex word (" + what + ")");
        return uint32_t(std::stoul(token, nullptr, 16));
    }

    uint32_t line() const { return line_; }

  private:
    std::istringstream in_;
    std::istringstream words_;
    std::string name_;
    uint32_t line_ = 0;
};

template <class T>
void read_words(Reader &r, std::vector<T> &out, uint64_t count, const char *what) {
    out.resize(count);
    for (T &x : out)
        x = T(r.hex(2 * sizeof(T), what));
}

} // namespace

std::vector<AmxGoldenCase> parse_amx_golden(const std::string &text, const std::string &name) {
    Reader r(text, name);
    std::vector<AmxGoldenCase> cases;
    for (std::string token = r.next(); !token.empty(); token = r.next()) {
        if (token != "case")
            r.fail("expected 'case K', found '" + token + "'");
        AmxGoldenCase c;
        c.line = r.line();
        const std::string k = r.next();
        if (k.empty() || k.size() > 4 || k.find_first_not_of("0123456789") != std::string::npos ||
            std::stoul(k) == 0 || std::stoul(k) > kAmxGoldenMaxK)
            r.fail("bad K '" + k + "' (1 .. " + std::to_string(kAmxGoldenMaxK) + ")");
        c.k = uint32_t(std::stoul(k));
        constexpr uint32_t kOutputs = AmxGoldenCase::kRows * AmxGoldenCase::kCols;
        read_words(r, c.c_in, kOutputs, "C_in");
        read_words(r, c.a, uint64_t(AmxGoldenCase::kRows) * c.k, "A");
        read_words(r, c.w, uint64_t(c.k) * AmxGoldenCase::kCols, "W");
        read_words(r, c.c_out, kOutputs, "C_out");
        cases.push_back(std::move(c));
    }
    if (cases.empty())
        throw GoldenError(name + ": no golden cases");
    return cases;
}

std::vector<AmxGoldenCase> load_amx_golden(const std::string &path) {
    std::ifstream file(path, std::ios::binary);
    if (!file)
        throw GoldenError(path + ": cannot read the AMX golden vectors (tests/golden/amx-bf16)");
    std::ostringstream text;
    text << file.rdbuf();
    return parse_amx_golden(text.str(), path);
}

std::string amx_golden_path() {
    return TPU_GOLDEN_DIR "/amx-bf16/tdpbf16ps.txt";
}

} // namespace tpu::test
