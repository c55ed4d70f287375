// SPDX-License-Identifier: MIT
// profile.hpp - per-op profiling. With TPURT_PROFILE=trace.json in the environment (or after
// profiler::start()), every op launched through an executable is recorded: one OpRecord with
// the card's work from its jobs' completion records (modelled cycles and MACs), the host bytes
// its programs move (counted from the programs), and the host's submit and wait calls as
// HostSpans. A Profile turns into Chrome trace-event JSON (Perfetto and chrome://tracing load
// it: the host on one track, each card on its own, one complete event per op) and back, and
// into a per-op table. At exit, with TPURT_PROFILE set, the trace is written there and the
// table printed to stderr; `tpu-prof trace.json` prints the table of a saved trace.
//
// Card events are placed at the host time the op's first job was submitted and last the
// modelled card time (cycles at the card's clock); the emulated card's wall time is in args.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tpurt {

struct OpRecord {
    std::string name;    // the executable's name, e.g. "matmul bf16 512x512x512"
    unsigned device = 0; // N of /dev/accel/accelN
    double start_us = 0; // host time of the first submission, from the profile's start
    double wall_us = 0;  // first submission to the end of the last wait
    double card_us = 0;  // modelled card time: cycles at the card's clock
    std::uint64_t cycles = 0;
    std::uint64_t macs = 0;
    std::uint64_t bytes = 0; // host bytes moved by DMA and weight loads
    std::uint64_t jobs = 0;
    double utilisation = 0; // macs / (cycles x array rows x columns), 0..1

    friend bool operator==(const OpRecord &, const OpRecord &) = default;
};

struct HostSpan {
    std::string name; // "submit" or "wait"
    std::string op;   // the op it belongs to
    unsigned device = 0;
    double start_us = 0;
    double dur_us = 0;

    friend bool operator==(const HostSpan &, const HostSpan &) = default;
};

struct Profile {
    std::vector<OpRecord> ops;
    std::vector<HostSpan> host;

    // Chrome trace-event JSON: {"traceEvents": [...]} with metadata naming the tracks.
    std::string to_trace_json() const;
    // Reads what to_trace_json() wrote; throws Error(InvalidArgument) saying what is wrong
    // (not JSON, no traceEvents, an op event without its args).
    static Profile from_trace_json(const std::string &text);
    // Per op name: calls, card time, share of all card time, utilisation, MACs, bytes, wall;
    // then the totals (cycles and MACs of all ops, to compare with the card's counters).
    std::string table() const;
};

namespace profiler {
void start(); // record from now on (records made so far are kept)
void stop();  // stop recording
bool active();
void clear(); // forget everything recorded
Profile snapshot();
// Writes snapshot() as trace JSON; throws Error(SystemCall) if the file cannot be written.
void write_trace(const std::string &path);
} // namespace profiler

} // namespace tpurt
