// SPDX-License-Identifier: MIT
// tpu-onnx-prepare: the host half of tpu-onnx-test (compiler/README.md). Compiles ONNX node-test
// folders (libonnx-testdata's model.onnx + test_data_set_0/{input,output}_N.pb) into folders
// the guest's tpu-onnx-test reads without ONNX: model.tpumodel, and data.tpumodel (a model
// with no nodes whose constants input_N and output_N are the test's data), or unsupported.txt
// with the compiler's reason. Some graph inputs are folded into the model as initialisers first,
// as an exported model has them: integer ones (shapes, axes, indices: a compiled model has
// static shapes), the weights and biases of Gemm and Conv, and the weights, scales, zero points
// and biases of the quantised ops (every input but the data they quantise or multiply).
#include "patterns.hpp"

#include <tpu_data/dataset.hpp>
#include <tpu_onnx/compile.hpp>
#include <tpu_onnx/tensor_proto.hpp>
#include <tpumodel/file.hpp>

#include <CLI/CLI.hpp>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace {

onnx::TensorProto read_proto(const fs::path &path) {
    onnx::TensorProto p;
    std::ifstream in(path, std::ios::binary);
    if (!in || !p.ParseFromIstream(&in))
        throw tpu_onnx::CompileError(path.string() + ": not a serialised TensorProto");
    // The suite stores bfloat16 data as UINT16 (numpy has no bfloat16).
    if (p.data_type() == onnx::TensorProto_DataType_UINT16)
        p.set_data_type(onnx::TensorProto_DataType_BFLOAT16);
    return p;
}

std::vector<onnx::TensorProto> read_set(const fs::path &set, const std::string &kind) {
    std::vector<onnx::TensorProto> v;
    for (std::size_t i = 0; fs::exists(set / (kind + "_" + std::to_string(i) + ".pb")); ++i)
        v.push_back(read_proto(set / (kind + "_" + std::to_string(i) + ".pb")));
    return v;
}

bool integer(const onnx::TensorProto &p) {
    return p.data_type() == onnx::TensorProto_DataType_INT64 ||
           p.data_type() == onnx::TensorProto_DataType_INT32;
}

// Per op, the inputs an exported model holds as initialisers: all but its data (input 0).
const std::map<std::string, std::set<int>> &weight_inputs() {
    static const std::map<std::string, std::set<int>> inputs = {
        {"Gemm", {1, 2}},
        {"Conv", {1, 2}},
        {"QuantizeLinear", {1, 2}},
        {"DequantizeLinear", {1, 2}},
        {"MatMulInteger", {1, 2, 3}},
        {"ConvInteger", {1, 2, 3}},
        {"QLinearMatMul", {1, 2, 3, 4, 5, 6, 7}},
        {"QLinearConv", {1, 2, 3, 4, 5, 6, 7, 8}},
    };
    return inputs;
}

// Whether graph input `name` is folded into an initialiser (see the top of the file).
bool folded(const onnx::GraphProto &g, const std::string &name, const onnx::TensorProto &data) {
    if (integer(data))
        return true;
    for (const onnx::NodeProto &n : g.node())
        if (const auto w = weight_inputs().find(n.op_type()); w != weight_inputs().end())
            for (int i = 1; i < n.input_size(); ++i)
                if (w->second.count(i) && n.input(i) == name)
                    return true;
    return false;
}

void write_text(const fs::path &path, const std::string &text) {
    std::ofstream out(path);
    out << text << "\n";
    if (!out.flush())
        throw std::runtime_error(path.string() + ": cannot write");
}

// One node test into `out`: "compiled" or "unsupported".
std::string prepare(const fs::path &test, const fs::path &out) {
    fs::remove_all(out);
    fs::create_directories(out);
    const fs::path set = test / "test_data_set_0";
    try {
        onnx::ModelProto model;
        {
            std::ifstream in(test / "model.onnx", std::ios::binary);
            if (!in || !model.ParseFromIstream(&in))
                throw tpu_onnx::CompileError((test / "model.onnx").string() +
                                             ": not an ONNX model");
        }
        const std::vector<onnx::TensorProto> inputs = read_set(set, "input");
        const std::vector<onnx::TensorProto> outputs = read_set(set, "output");
        onnx::GraphProto &g = *model.mutable_graph();
        if (std::size_t(g.input_size()) != inputs.size())
            throw tpu_onnx::CompileError("the model has " + std::to_string(g.input_size()) +
                                         " inputs, the test data " + std::to_string(inputs.size()));
        tpumodel::Model data;
        data.producer = "tpu-onnx-prepare from " + test.string();
        google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            if (folded(g, g.input(int(i)).name(), inputs[i])) {
                onnx::TensorProto &init = *g.add_initializer();
                init = inputs[i];
                init.set_name(g.input(int(i)).name());
                continue;
            }
            kept.Add()->CopyFrom(g.input(int(i)));
            data.outputs.push_back(data.add_tensor(tpu_onnx::tensor_from_proto(
                inputs[i], "input_" + std::to_string(data.outputs.size()), set.string())));
        }
        g.mutable_input()->Swap(&kept);
        for (std::size_t i = 0; i < outputs.size(); ++i)
            data.outputs.push_back(data.add_tensor(tpu_onnx::tensor_from_proto(
                outputs[i], "output_" + std::to_string(i), set.string())));
        const fs::path folded = out / "model.onnx";
        {
            std::ofstream f(folded, std::ios::binary);
            if (!model.SerializeToOstream(&f) || !f.flush())
                throw std::runtime_error(folded.string() + ": cannot write");
        }
        const tpu_onnx::Compiled c = tpu_onnx::compile_file(folded.string(), {});
        fs::remove(folded);
        tpumodel::save(c.model, (out / "model.tpumodel").string());
        tpumodel::save(data, (out / "data.tpumodel").string());
        return "compiled";
    } catch (const tpu_onnx::CompileError &e) {
        fs::remove(out / "model.onnx");
        write_text(out / "unsupported.txt", e.what());
        return "unsupported";
    }
}

// The node-test folders under `dir` (or `dir` itself) whose names match one of `patterns`
// (all of them when there are none).
std::vector<fs::path> select(const fs::path &dir, const std::vector<std::string> &patterns) {
    std::vector<fs::path> candidates;
    if (fs::exists(dir / "model.onnx"))
        candidates.push_back(dir);
    else
        for (const fs::directory_entry &e : fs::directory_iterator(dir))
            if (fs::exists(e.path() / "model.onnx"))
                candidates.push_back(e.path());
    std::vector<fs::path> chosen;
    for (const fs::path &p : candidates) {
        bool match = patterns.empty();
        for (const std::string &pattern : patterns)
            match = match || tpu_onnx_test::matches(pattern, p.filename().string());
        if (match)
            chosen.push_back(p);
    }
    std::sort(chosen.begin(), chosen.end());
    return chosen;
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"tpu-onnx-prepare: ONNX node tests compiled for tpu-onnx-test in the guest"};
    std::vector<std::string> dirs;
    std::string out, select_file;
    app.add_option("dirs", dirs,
                   "node-test folders, or folders of them (default: the suite's node/ in the "
                   "data sets, $TPU_DATASETS/onnx-testdata/node)")
        ->check(CLI::ExistingDirectory);
    app.add_option("--select", select_file,
                   "a file of test-name patterns (fnmatch), one a line; '#' starts a comment");
    app.add_option("-o,--output", out, "the folder to write one folder per test into")->required();
    CLI11_PARSE(app, argc, argv);
    try {
        const std::vector<std::string> patterns = select_file.empty()
                                                      ? std::vector<std::string>{}
                                                      : tpu_onnx_test::read_patterns(select_file);
        if (dirs.empty())
            dirs.push_back(tpu_data::datasets_dir() + "/onnx-testdata/node");
        std::size_t compiled = 0, unsupported = 0;
        for (const std::string &dir : dirs)
            for (const fs::path &test : select(dir, patterns)) {
                const std::string r = prepare(test, fs::path(out) / test.filename());
                (r == "compiled" ? compiled : unsupported)++;
            }
        if (compiled + unsupported == 0)
            throw std::runtime_error("no node test selected");
        std::cout << "tpu-onnx-prepare: " << compiled << " compiled, " << unsupported
                  << " unsupported, into " << out << "\n";
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "tpu-onnx-prepare: " << e.what() << "\n";
        return 1;
    }
}
