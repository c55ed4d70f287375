// SPDX-License-Identifier: MIT
// spec_parse.cpp - the model spec grammar of spec.hpp: a string split at '-' into tokens, each
// token read into a Layer, every error naming the spec and the token.
#include "tpu_nn/spec.hpp"

#include <cctype>
#include <optional>
#include <stdexcept>

namespace tpu_nn {

namespace {

struct Fail {
    std::string why;
};

std::vector<std::string> split(const std::string &s) {
    std::vector<std::string> out(1);
    for (char ch : s) {
        if (ch == '-')
            out.emplace_back();
        else
            out.back() += ch;
    }
    return out;
}

// Reads a number >= 1 at `at` (advanced past it), or throws Fail saying what `what` needed.
std::size_t number(const std::string &t, std::size_t &at, const char *what) {
    std::size_t v = 0, digits = 0;
    while (at < t.size() && std::isdigit(static_cast<unsigned char>(t[at]))) {
        v = v * 10 + std::size_t(t[at++] - '0');
        if (++digits > 6)
            throw Fail{std::string(what) + " is too large"};
    }
    if (digits == 0)
        throw Fail{std::string("expected a number for ") + what};
    if (v == 0)
        throw Fail{std::string(what) + " must be at least 1"};
    return v;
}

std::size_t whole_number(const std::string &t, const char *what) {
    std::size_t at = 0;
    const std::size_t v = number(t, at, what);
    if (at != t.size())
        throw Fail{std::string("expected only a number for ") + what};
    return v;
}

bool starts(const std::string &t, const char *prefix, std::size_t &at) {
    const std::string p(prefix);
    if (t.compare(0, p.size(), p) != 0)
        return false;
    at = p.size();
    return true;
}

// Options after a convolution's or pool's head: letters from `allowed`, each once (padding
// may be 0).
struct Options {
    std::optional<std::size_t> k, s, p, g;
};

Options options(const std::string &t, std::size_t at, const std::string &allowed) {
    Options o;
    while (at < t.size()) {
        const char letter = t[at++];
        if (allowed.find(letter) == std::string::npos)
            throw Fail{std::string("unknown option '") + letter + "' (this layer takes " + allowed +
                       ")"};
        std::optional<std::size_t> *slot = letter == 'k'   ? &o.k
                                           : letter == 's' ? &o.s
                                           : letter == 'p' ? &o.p
                                                           : &o.g;
        if (slot->has_value())
            throw Fail{std::string("option '") + letter + "' given twice"};
        if (letter == 'p' && at < t.size() && t[at] == '0' &&
            (at + 1 == t.size() || !std::isdigit(static_cast<unsigned char>(t[at + 1])))) {
            *slot = 0;
            ++at;
        } else {
            *slot = number(t, at,
                           letter == 'k'   ? "the kernel size"
                           : letter == 's' ? "the stride"
                           : letter == 'p' ? "the padding"
                                           : "the groups");
        }
    }
    return o;
}

Window kernel(const Options &o) {
    const std::size_t k = o.k.value_or(3), s = o.s.value_or(1), p = o.p.value_or((k - 1) / 2);
    return Window{k, k, s, s, p, p};
}

Layer of(LayerKind kind) {
    Layer l;
    l.kind = kind;
    return l;
}

Layer layer(const std::string &t) {
    std::size_t at = 0;
    if (starts(t, "conv", at) || starts(t, "c", at)) {
        Layer l = of(t[1] == 'o' ? LayerKind::Conv : LayerKind::Block);
        l.units = number(t, at, "the filters");
        const Options o = options(t, at, "kspg");
        l.window = kernel(o);
        l.groups = o.g.value_or(1);
        return l;
    }
    if (starts(t, "res", at)) {
        const Options o = options(t, at, "k");
        if (o.k && *o.k % 2 == 0)
            throw Fail{"a residual block's kernel must be odd (its convolutions keep the size)"};
        Layer l = of(LayerKind::Residual);
        l.window = kernel(o);
        return l;
    }
    for (const char *p : {"max", "avg"})
        if (starts(t, p, at)) {
            Layer l = of(LayerKind::Pool);
            l.pool = p[0] == 'm' ? PoolKind::Max : PoolKind::Avg;
            const std::size_t w = number(t, at, "the window");
            const Options o = options(t, at, "sp");
            l.window =
                Window{w, w, o.s.value_or(w), o.s.value_or(w), o.p.value_or(0), o.p.value_or(0)};
            return l;
        }
    for (Act a : {Act::Relu, Act::Sigmoid, Act::Tanh, Act::Gelu})
        if (t == act_name(a)) {
            Layer l = of(LayerKind::Activation);
            l.act = a;
            return l;
        }
    if (t == "ln")
        return of(LayerKind::LayerNorm);
    if (t == "flat")
        return of(LayerKind::Flatten);
    if (starts(t, "d", at) || (!t.empty() && std::isdigit(static_cast<unsigned char>(t[0])))) {
        Layer l = of(LayerKind::Dense);
        l.units = whole_number(t.substr(at), "the dense layer's outputs");
        return l;
    }
    throw Fail{"unknown layer (expected c<F>, conv<F>, res, max<W>, avg<W>, relu, sigmoid, "
               "tanh, gelu, ln, flat, d<N> or <N>)"};
}

Shape image(const std::string &t) {
    Shape s;
    std::size_t at = 0;
    for (const char *what : {"the height", "the width", "the channels"}) {
        s.push_back(number(t, at, what));
        if (s.size() < 3 && (at >= t.size() || t[at++] != 'x'))
            throw Fail{"expected the input as HxWxC"};
    }
    if (at != t.size())
        throw Fail{"expected the input as HxWxC"};
    return s;
}

} // namespace

Spec parse_spec(const std::string &text) {
    const std::vector<std::string> tokens = split(text);
    std::size_t i = 0;
    try {
        Spec spec;
        if (tokens[0] != "mlp" && tokens[0] != "cnn")
            throw Fail{"a model spec starts with mlp- or cnn-"};
        spec.mlp = tokens[0] == "mlp";
        if (tokens.size() < 3) {
            i = tokens.size() - 1;
            throw Fail{"expected an input and the classes after it"};
        }
        i = 1;
        spec.input = spec.mlp ? Shape{whole_number(tokens[1], "the inputs")} : image(tokens[1]);
        for (i = 2; i + 1 < tokens.size(); ++i) {
            if (tokens[i] == "d" && !spec.mlp)
                continue; // the old names' marker of the dense part
            const Layer l = layer(tokens[i]);
            if (spec.mlp && (l.kind != LayerKind::Dense || tokens[i][0] == 'd'))
                throw Fail{"an mlp spec lists only layer sizes"};
            spec.layers.push_back(l);
        }
        spec.classes = whole_number(tokens[i], "the classes");
        return spec;
    } catch (const Fail &f) {
        throw std::invalid_argument("model spec \"" + text + "\": token " + std::to_string(i + 1) +
                                    " \"" + tokens[i] + "\": " + f.why);
    }
}

} // namespace tpu_nn
