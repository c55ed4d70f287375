// SPDX-License-Identifier: MIT
// tpu-onnx-test: ONNX node tests on the card (compiler/README.md). Reads the folders
// tpu-onnx-prepare wrote on the host, runs each model.tpumodel on the card through
// tpumodel::card::Executor on its data.tpumodel inputs, compares with the expected outputs as
// ONNX's runner does, and prints per test `pass`, `cpu` (passed, with nodes on the CPU),
// `fail` or `unsupported` and a closing `N passed, N failed, N unsupported` line. With
// --on-card LIST, a test matching a pattern of LIST fails unless it passes with every node on
// the card, and each pattern must match a test. Exit status 1 when a test failed.
#include "patterns.hpp"

#include <tpumodel/card_executor.hpp>
#include <tpumodel/compare.hpp>
#include <tpumodel/file.hpp>

#include <tpurt/device.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;

namespace {

struct Outcome {
    std::string status; // pass, cpu, fail, unsupported
    std::string detail;
};

std::string first_line(const fs::path &file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line;
}

std::vector<tpumodel::Tensor> with_prefix(const tpumodel::Model &data, const std::string &prefix) {
    std::vector<tpumodel::Tensor> v;
    for (const tpumodel::Tensor &t : data.tensors)
        if (t.name.rfind(prefix, 0) == 0) {
            v.push_back(t);
            v.back().constant = false;
        }
    return v;
}

Outcome run_test(tpurt::Device &dev, const fs::path &dir) {
    if (fs::exists(dir / "unsupported.txt"))
        return {"unsupported", first_line(dir / "unsupported.txt")};
    try {
        const tpumodel::Model data = tpumodel::load((dir / "data.tpumodel").string());
        tpumodel::card::Executor exe(dev, tpumodel::load((dir / "model.tpumodel").string()));
        const std::vector<tpumodel::Tensor> out = exe.run(with_prefix(data, "input_"));
        const std::vector<tpumodel::Tensor> want = with_prefix(data, "output_");
        if (out.size() != want.size())
            return {"fail",
                    std::to_string(out.size()) + " outputs, want " + std::to_string(want.size())};
        for (std::size_t i = 0; i < out.size(); ++i)
            if (const std::string d = tpumodel::cpu::onnx_mismatch(out[i], want[i]); !d.empty())
                return {"fail", "output " + std::to_string(i) + ": " + d};
        if (exe.cpu_nodes() == 0)
            return {"pass", ""};
        return {"cpu", std::to_string(exe.cpu_nodes()) + " of " +
                           std::to_string(exe.cpu_nodes() + exe.card_nodes()) +
                           " nodes on the CPU"};
    } catch (const std::exception &e) {
        return {"fail", e.what()};
    }
}

// The prepared test folders `dir` names: itself, or its subfolders in name order.
std::vector<fs::path> tests_in(const fs::path &dir) {
    if (fs::exists(dir / "unsupported.txt") || fs::exists(dir / "model.tpumodel"))
        return {dir};
    std::vector<fs::path> v;
    for (const fs::directory_entry &e : fs::directory_iterator(dir))
        if (e.is_directory())
            v.push_back(e.path());
    std::sort(v.begin(), v.end());
    return v;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"tpu-onnx-test: ONNX node tests (prepared by tpu-onnx-prepare) on the card"};
    std::vector<std::string> dirs;
    bool in_process = false;
    app.add_option("dirs", dirs, "prepared test folders, or folders of them")
        ->required()
        ->check(CLI::ExistingDirectory);
    app.add_flag("--in-process", in_process, "run on the card's engine in this process");
    std::string on_card_file;
    app.add_option("--on-card", on_card_file,
                   "a file of test-name patterns (fnmatch, one a line) whose tests must pass "
                   "with every node on the card")
        ->check(CLI::ExistingFile);
    CLI11_PARSE(app, argc, argv);
    try {
        const std::vector<std::string> on_card = on_card_file.empty()
                                                     ? std::vector<std::string>{}
                                                     : tpu_onnx_test::read_patterns(on_card_file);
        std::vector<bool> matched(on_card.size());
        tpurt::Device dev = in_process ? tpurt::Device::open_in_process({}) : tpurt::Device::open();
        std::size_t passed = 0, failed = 0, unsupported = 0, on_cpu = 0;
        for (const std::string &dir : dirs)
            for (const fs::path &test : tests_in(dir)) {
                Outcome o = run_test(dev, test);
                bool card_only = false;
                for (std::size_t i = 0; i < on_card.size(); ++i)
                    if (tpu_onnx_test::matches(on_card[i], test.filename().string()))
                        card_only = matched[i] = true;
                if (card_only && (o.status == "cpu" || o.status == "unsupported"))
                    o = {"fail",
                         "must pass wholly on the card, but is " + o.status + ": " + o.detail};
                std::cout << o.status << " " << test.filename().string()
                          << (o.detail.empty() ? "" : ": " + o.detail) << "\n";
                passed += o.status == "pass" || o.status == "cpu";
                on_cpu += o.status == "cpu";
                failed += o.status == "fail";
                unsupported += o.status == "unsupported";
            }
        for (std::size_t i = 0; i < on_card.size(); ++i)
            if (!matched[i]) {
                std::cout << "fail " << on_card[i] << ": --on-card names no test here\n";
                ++failed;
            }
        std::cout << on_cpu << " of the passed through CPU fallback\n"
                  << passed << " passed, " << failed << " failed, " << unsupported
                  << " unsupported\n";
        return failed ? 1 : 0;
    } catch (const std::exception &e) {
        std::cerr << "tpu-onnx-test: " << e.what() << "\n";
        return 1;
    }
}
