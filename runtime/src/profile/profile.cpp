// SPDX-License-Identifier: MIT
// profile.cpp - Chrome trace-event JSON and the per-op table of a Profile (see profile.hpp).
#include "tpurt/profile.hpp"

#include "tpurt/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace tpurt {

namespace {

using nlohmann::json;

constexpr int host_pid = 1;
constexpr int card_pid_base = 100; // card N is process 100 + N

json metadata(const char *what, int pid, const std::string &name) {
    return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", 1}, {"args", {{"name", name}}}};
}

[[noreturn]] void bad_trace(const std::string &message) {
    throw Error(ErrorCode::InvalidArgument, "not a tpurt trace: " + message);
}

template <typename T> T field(const json &object, const char *key, std::size_t index) {
    if (!object.contains(key))
        bad_trace("event " + std::to_string(index) + " has no \"" + key + "\"");
    try {
        return object.at(key).get<T>();
    } catch (const json::exception &) {
        bad_trace("event " + std::to_string(index) + " has a \"" + key + "\" of the wrong type");
    }
}

} // namespace

std::string Profile::to_trace_json() const {
    json events = json::array();
    events.push_back(metadata("process_name", host_pid, "tpurt host"));
    events.push_back(metadata("thread_name", host_pid, "submit / wait"));
    std::set<unsigned> cards;
    for (const OpRecord &op : ops)
        cards.insert(op.device);
    for (unsigned card : cards) {
        const int pid = card_pid_base + static_cast<int>(card);
        events.push_back(metadata("process_name", pid, "TPU " + std::to_string(card)));
        events.push_back(metadata("thread_name", pid, "ops (modelled card time)"));
    }
    for (const HostSpan &span : host)
        events.push_back({{"name", span.name},
                          {"cat", "host"},
                          {"ph", "X"},
                          {"pid", host_pid},
                          {"tid", 1},
                          {"ts", span.start_us},
                          {"dur", span.dur_us},
                          {"args", {{"op", span.op}, {"device", span.device}}}});
    for (const OpRecord &op : ops)
        events.push_back({{"name", op.name},
                          {"cat", "op"},
                          {"ph", "X"},
                          {"pid", card_pid_base + static_cast<int>(op.device)},
                          {"tid", 1},
                          {"ts", op.start_us},
                          {"dur", op.card_us},
                          {"args",
                           {{"device", op.device},
                            {"cycles", op.cycles},
                            {"macs", op.macs},
                            {"bytes", op.bytes},
                            {"jobs", op.jobs},
                            {"mxu_utilisation", op.utilisation},
                            {"wall_us", op.wall_us}}}});
    return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(1);
}

Profile Profile::from_trace_json(const std::string &text) {
    json root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error &error) {
        bad_trace(std::string("invalid JSON: ") + error.what());
    }
    if (!root.is_object() || !root.contains("traceEvents") || !root["traceEvents"].is_array())
        bad_trace("no \"traceEvents\" array");
    Profile profile;
    const json &events = root["traceEvents"];
    for (std::size_t i = 0; i < events.size(); ++i) {
        const json &e = events[i];
        if (!e.is_object())
            bad_trace("event " + std::to_string(i) + " is not an object");
        if (!e.contains("cat") || e.value("ph", "") != "X")
            continue; // metadata, or events of other tools
        const std::string cat = field<std::string>(e, "cat", i);
        const json args = field<json>(e, "args", i);
        if (cat == "op") {
            OpRecord op;
            op.name = field<std::string>(e, "name", i);
            op.start_us = field<double>(e, "ts", i);
            op.card_us = field<double>(e, "dur", i);
            op.device = field<unsigned>(args, "device", i);
            op.cycles = field<std::uint64_t>(args, "cycles", i);
            op.macs = field<std::uint64_t>(args, "macs", i);
            op.bytes = field<std::uint64_t>(args, "bytes", i);
            op.jobs = field<std::uint64_t>(args, "jobs", i);
            op.utilisation = field<double>(args, "mxu_utilisation", i);
            op.wall_us = field<double>(args, "wall_us", i);
            profile.ops.push_back(std::move(op));
        } else if (cat == "host") {
            profile.host.push_back({field<std::string>(e, "name", i),
                                    field<std::string>(args, "op", i),
                                    field<unsigned>(args, "device", i), field<double>(e, "ts", i),
                                    field<double>(e, "dur", i)});
        }
    }
    return profile;
}

std::string Profile::table() const {
    struct Row {
        std::uint64_t calls = 0, cycles = 0, macs = 0, bytes = 0;
        double card_us = 0, wall_us = 0, peak = 0; // peak: MACs the array could have done
    };
    std::map<std::string, Row> rows;
    Row total;
    for (const OpRecord &op : ops) {
        for (Row *row : {&rows[op.name], &total}) {
            ++row->calls;
            row->cycles += op.cycles;
            row->macs += op.macs;
            row->bytes += op.bytes;
            row->card_us += op.card_us;
            row->wall_us += op.wall_us;
            row->peak += op.utilisation > 0 ? static_cast<double>(op.macs) / op.utilisation : 0;
        }
    }
    std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
        return a.second.card_us > b.second.card_us;
    });
    std::string out;
    char line[256];
    std::snprintf(line, sizeof(line), "%-40s %6s %10s %6s %6s %12s %12s %10s\n", "op", "calls",
                  "card ms", "share", "util", "MACs", "bytes", "wall ms");
    out += line;
    const auto print = [&](const std::string &name, const Row &r) {
        std::snprintf(line, sizeof(line),
                      "%-40.40s %6llu %10.3f %5.1f%% %5.1f%% %12.4g %12.4g %10.3f\n", name.c_str(),
                      static_cast<unsigned long long>(r.calls), r.card_us / 1000,
                      total.card_us > 0 ? 100 * r.card_us / total.card_us : 0.0,
                      r.peak > 0 ? 100 * static_cast<double>(r.macs) / r.peak : 0.0,
                      static_cast<double>(r.macs), static_cast<double>(r.bytes), r.wall_us / 1000);
        out += line;
    };
    for (const auto &[name, row] : sorted)
        print(name, row);
    print("total", total);
    std::snprintf(line, sizeof(line), "card cycles %llu, MACs %llu in %zu op calls\n",
                  static_cast<unsigned long long>(total.cycles),
                  static_cast<unsigned long long>(total.macs), ops.size());
    out += line;
    return out;
}

} // namespace tpurt
