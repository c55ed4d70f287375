// SPDX-License-Identifier: MIT
// problem_key.hpp - an op's problem (an aggregate: shapes, dtypes, attributes, and the address
// fields its arguments are bound to) as a cache key, derived from every field: fields_of()
// enumerates an aggregate's members by structured binding, with the member count found by
// aggregate initialisation (field_count()), so a field added to a problem is in its key without
// anyone writing it down, and a type whose fields cannot all be enumerated does not compile.
// Nested aggregates, std::optional and std::vector are walked the same way; floats are keyed by
// their bits. each_variant() changes one leaf field at a time (the registry's key test).
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tpurt::key {

namespace detail {

// Converts to any member type, so T{any_field{} x N} compiles exactly while N <= T's members.
struct any_field {
    template <class U> operator U() const;
};

template <class T, std::size_t... I> constexpr bool initialisable(std::index_sequence<I...>) {
    return requires {
        T{(void(I), any_field{})...};
    };
}

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};

} // namespace detail

// The number of members of aggregate T.
template <class T, std::size_t N = 0> constexpr std::size_t field_count() {
    if constexpr (detail::initialisable<T>(std::make_index_sequence<N + 1>{}))
        return field_count<T, N + 1>();
    else
        return N;
}

// Every member of aggregate `value`, in declaration order, as a tuple of references.
template <class T> constexpr auto fields_of(T &value) {
    using Plain = std::remove_cv_t<T>;
    static_assert(std::is_aggregate_v<Plain>, "a problem or its attributes must be an aggregate");
    constexpr std::size_t n = field_count<Plain>();
    static_assert(n <= 24, "fields_of() enumerates at most 24 members");
    if constexpr (n == 0)
        return std::tuple<>{};
    if constexpr (n == 1) {
        auto &[f0] = value;
        return std::tie(f0);
    } else if constexpr (n == 2) {
        auto &[f0, f1] = value;
        return std::tie(f0, f1);
    } else if constexpr (n == 3) {
        auto &[f0, f1, f2] = value;
        return std::tie(f0, f1, f2);
    } else if constexpr (n == 4) {
        auto &[f0, f1, f2, f3] = value;
        return std::tie(f0, f1, f2, f3);
    } else if constexpr (n == 5) {
        auto &[f0, f1, f2, f3, f4] = value;
        return std::tie(f0, f1, f2, f3, f4);
    } else if constexpr (n == 6) {
        auto &[f0, f1, f2, f3, f4, f5] = value;
        return std::tie(f0, f1, f2, f3, f4, f5);
    } else if constexpr (n == 7) {
        auto &[f0, f1, f2, f3, f4, f5, f6] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6);
    } else if constexpr (n == 8) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7);
    } else if constexpr (n == 9) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8);
    } else if constexpr (n == 10) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9);
    } else if constexpr (n == 11) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10);
    } else if constexpr (n == 12) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11);
    } else if constexpr (n == 13) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12);
    } else if constexpr (n == 14) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13);
    } else if constexpr (n == 15) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14);
    } else if constexpr (n == 16) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15);
    } else if constexpr (n == 17) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16);
    } else if constexpr (n == 18) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17] =
            value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16,
                        f17);
    } else if constexpr (n == 19) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17,
               f18] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16,
                        f17, f18);
    } else if constexpr (n == 20) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16,
                        f17, f18, f19);
    } else if constexpr (n == 21) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16,
                        f17, f18, f19, f20);
    } else if constexpr (n == 22) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16,
                        f17, f18, f19, f20, f21);
    } else if constexpr (n == 23) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16,
                        f17, f18, f19, f20, f21, f22);
    } else if constexpr (n == 24) {
        auto &[f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
               f19, f20, f21, f22, f23] = value;
        return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16,
                        f17, f18, f19, f20, f21, f22, f23);
    }
}

// Appends `value`'s key: integers and enums in decimal, floats by their bits, an optional as
// "-" or "(value)", a vector as "[values]", an aggregate as "{fields}".
template <class T> void append(std::string &key, const T &value) {
    if constexpr (std::is_same_v<T, bool>)
        key += value ? '1' : '0';
    else if constexpr (std::is_enum_v<T>)
        key += std::to_string(static_cast<long long>(value));
    else if constexpr (std::is_same_v<T, float>)
        key += std::to_string(std::bit_cast<std::uint32_t>(value));
    else if constexpr (std::is_same_v<T, double>)
        key += std::to_string(std::bit_cast<std::uint64_t>(value));
    else if constexpr (std::is_integral_v<T>)
        key += std::to_string(value);
    else if constexpr (detail::is_optional<T>::value) {
        if (!value) {
            key += '-';
            return;
        }
        key += '(';
        append(key, *value);
        key += ')';
    } else if constexpr (detail::is_vector<T>::value) {
        key += '[';
        for (const auto &element : value) {
            append(key, element);
            key += ',';
        }
        key += ']';
    } else {
        key += '{';
        std::apply([&](const auto &...field) { ((append(key, field), key += ','), ...); },
                   fields_of(value));
        key += '}';
    }
}

template <class T> std::string of(const T &value) {
    std::string key;
    append(key, value);
    return key;
}

// `value` made a sample from which each_variant() can reach every leaf: every optional engaged,
// every vector one element long, every integer and float 1 (so extents and divisions derived
// from them are defined), recursively.
template <class T> void make_sample(T &value) {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
        value = 1;
    else if constexpr (detail::is_optional<T>::value) {
        if (!value)
            value.emplace();
        make_sample(*value);
    } else if constexpr (detail::is_vector<T>::value) {
        if (value.empty())
            value.emplace_back();
        for (auto &element : value)
            make_sample(element);
    } else if constexpr (std::is_class_v<T>)
        std::apply([](auto &...field) { (make_sample(field), ...); }, fields_of(value));
}

// Calls emit(path, leaf) once per leaf of `value` with that leaf changed in place (an integer
// plus 1, a bool flipped, an enum's next value, a float's next representable value, an optional
// disengaged, a vector one element longer), restored afterwards. `leaf` is the changed object.
template <class T, class Emit> void each_variant(T &value, const std::string &path, Emit &&emit) {
    if constexpr (std::is_same_v<T, bool>) {
        value = !value;
        emit(path, static_cast<const void *>(&value));
        value = !value;
    } else if constexpr (std::is_enum_v<T>) {
        const T old = value;
        value = static_cast<T>(static_cast<std::underlying_type_t<T>>(value) + 1);
        emit(path, static_cast<const void *>(&value));
        value = old;
    } else if constexpr (std::is_floating_point_v<T>) {
        const T old = value;
        value = std::nextafter(value, std::numeric_limits<T>::infinity());
        emit(path, static_cast<const void *>(&value));
        value = old;
    } else if constexpr (std::is_integral_v<T>) {
        value += 1;
        emit(path, static_cast<const void *>(&value));
        value -= 1;
    } else if constexpr (detail::is_optional<T>::value) {
        if (value)
            each_variant(*value, path + "?", emit);
        const T old = value;
        value.reset();
        emit(path, static_cast<const void *>(&value));
        value = old;
    } else if constexpr (detail::is_vector<T>::value) {
        for (std::size_t i = 0; i < value.size(); ++i)
            each_variant(value[i], path + "[" + std::to_string(i) + "]", emit);
        value.emplace_back();
        emit(path, static_cast<const void *>(&value));
        value.pop_back();
    } else {
        std::size_t index = 0;
        std::apply(
            [&](auto &...field) {
                ((each_variant(field, path + "." + std::to_string(index++), emit)), ...);
            },
            fields_of(value));
    }
}

} // namespace tpurt::key
