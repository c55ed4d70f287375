// SPDX-License-Identifier: MIT
// ort-run.mjs - ONNX Runtime (the CPU build in npm's onnxruntime-node, installed by
// tools/fetch-onnxruntime.sh) as the tests' independent reference executor: runs MODEL on one
// float32 input read from a raw little-endian file and writes its first output the same way.
// Usage: node ort-run.mjs INSTALL_DIR MODEL INPUT_NAME DIMS IN.f32 OUT.f32   (DIMS: 2,1,28,28)
import { createRequire } from 'module';
import fs from 'fs';

const [installDir, model, inputName, dimsText, inPath, outPath] = process.argv.slice(2);
if (!outPath) {
    console.error('usage: node ort-run.mjs INSTALL_DIR MODEL INPUT_NAME DIMS IN.f32 OUT.f32');
    process.exit(2);
}
const ort = createRequire(installDir + '/')('onnxruntime-node');
const dims = dimsText.split(',').map(Number);
const bytes = fs.readFileSync(inPath);
const data = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
const outputs = await session.run({ [inputName]: new ort.Tensor('float32', data, dims) });
const y = outputs[session.outputNames[0]].data;
fs.writeFileSync(outPath, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
