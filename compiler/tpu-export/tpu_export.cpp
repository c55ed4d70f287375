// SPDX-License-Identifier: MIT
// tpu-export: a trained checkpoint (any model spec's of tpu-train or tpu-train-cpu: the MLP, the
// CNN, ...) written as an ONNX model that onnx.checker accepts and any ONNX runtime runs, and
// that tpu-compile compiles back for the card (compiler/README.md, "Export").
#include <tpu_export/export.hpp>

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char **argv) {
    CLI::App app{"tpu-export: a trained checkpoint as an ONNX model (opset 17)"};
    std::string checkpoint, out;
    tpu_export::ExportOptions options;
    app.add_option("checkpoint", checkpoint,
                   "the fp32 checkpoint of any model spec (tpu-train, tpu-train-cpu)")
        ->required()
        ->check(CLI::ExistingFile);
    app.add_option("-o,--output", out, "the ONNX file to write")->required();
    app.add_option("--batch", options.batch,
                   "fix the batch dimension (default: symbolic, tpu-compile --input fixes it)")
        ->check(CLI::NonNegativeNumber);
    CLI11_PARSE(app, argc, argv);
    try {
        const tpu_export::ExportSummary s = tpu_export::export_checkpoint(checkpoint, out, options);
        std::cout << s.model << ": " << s.nodes << " ONNX nodes, " << s.parameters
                  << " parameters; input " << s.input_shape << " (raw pixels; the graph "
                  << "normalises them), output logits " << s.output_shape << "\nwrote " << out
                  << "\n";
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "tpu-export: " << e.what() << "\n";
        return 1;
    }
}
