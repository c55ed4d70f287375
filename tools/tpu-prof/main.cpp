// SPDX-License-Identifier: MIT
// tpu-prof - prints the per-op table of a trace that libtpurt's profiler saved
// (TPURT_PROFILE=trace.json or tpurt::profiler::write_trace()).
//
//   tpu-prof trace.json
#include <tpurt/error.hpp>
#include <tpurt/profile.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char **argv) {
    // --help: the usage on stdout, exit 0 (help2man makes the manual page from it); bad usage:
    // on stderr, exit 2.
    const bool help =
        argc == 2 && (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help");
    if (argc != 2 || help) {
        std::fprintf(help ? stdout : stderr,
                     "tpu-prof: the per-op table of a libtpurt trace\n"
                     "usage: tpu-prof TRACE.json\n"
                     "  prints the per-op table of a trace written by libtpurt "
                     "(TPURT_PROFILE=TRACE.json)\n");
        return help ? 0 : 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "tpu-prof: cannot open %s\n", argv[1]);
        return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    try {
        const tpurt::Profile profile = tpurt::Profile::from_trace_json(text.str());
        std::printf("%s: %zu op calls, %zu host spans\n%s", argv[1], profile.ops.size(),
                    profile.host.size(), profile.table().c_str());
    } catch (const tpurt::Error &error) {
        std::fprintf(stderr, "tpu-prof: %s: %s\n", argv[1], error.what());
        return 1;
    }
    return 0;
}
