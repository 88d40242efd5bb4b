'use strict';
// The reference for the GGUF export tests: parses a GGUF file with Hugging Face's @huggingface/gguf
// (the parser the Hub uses to show GGUF metadata) and prints what it found as one JSON line, with each
// tensor's values decoded here from the data section, independently of the C++ code that wrote them.
//
// Usage: node gguf_reference.js <file.gguf> [<node_modules directory>]
//   @huggingface/gguf is looked up in <node_modules directory> when given, else through NODE_PATH.
// Output: {"version", "tensor_count", "kv_count", "tensor_data_offset",
//          "metadata": {key: {"type": GGUFValueType number, "value": ..., "sub_type"?: number}},
//          "tensors": [{"name", "n_dims", "shape": [ggml order], "dtype": ggml type number, "offset",
//                       "values": [numbers]}]}
// Integers that JavaScript holds as BigInt are printed as numbers (the tests' files are small).
// Any failure: a message on stderr and exit status 1.
const fs = require('fs');
const path = require('path');

function loadGguf(nodeModules) {
  if (nodeModules) return require(path.join(path.resolve(nodeModules), '@huggingface', 'gguf'));
  return require('@huggingface/gguf');
}

function plain(value) {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(plain);
  return value;
}

function halfToFloat(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * Math.pow(2, -24);
  if (exponent === 0x1f) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * Math.pow(2, exponent - 15);
}

const GGML_F32 = 0;
const GGML_F16 = 1;
const GGML_BF16 = 30;

function decode(buffer, start, count, dtype) {
  const values = [];
  for (let i = 0; i < count; i++) {
    if (dtype === GGML_F32) {
      values.push(buffer.readFloatLE(start + 4 * i));
    } else if (dtype === GGML_F16) {
      values.push(halfToFloat(buffer.readUInt16LE(start + 2 * i)));
    } else if (dtype === GGML_BF16) {
      const bytes = Buffer.alloc(4);
      bytes.writeUInt32LE(buffer.readUInt16LE(start + 2 * i) << 16 >>> 0);
      values.push(bytes.readFloatLE(0));
    } else {
      throw new Error(`tensor type ${dtype} is not decoded by this script`);
    }
  }
  return values;
}

async function main() {
  const [file, nodeModules] = process.argv.slice(2);
  if (!file) throw new Error('usage: node gguf_reference.js <file.gguf> [<node_modules directory>]');
  const { gguf } = loadGguf(nodeModules);
  const parsed = await gguf(path.resolve(file), { allowLocalFile: true, typedMetadata: true });
  const buffer = fs.readFileSync(file);

  const metadata = {};
  for (const [key, entry] of Object.entries(parsed.typedMetadata)) {
    if (key === 'version' || key === 'tensor_count' || key === 'kv_count') continue;
    metadata[key] = { type: entry.type, value: plain(entry.value) };
    if (entry.subType !== undefined) metadata[key].sub_type = entry.subType;
  }
  const dataOffset = Number(parsed.tensorDataOffset);
  const tensors = parsed.tensorInfos.map((info) => {
    const shape = info.shape.map(Number);
    const count = shape.reduce((a, b) => a * b, 1);
    const start = dataOffset + Number(info.offset);
    return {
      name: info.name,
      n_dims: info.n_dims,
      shape,
      dtype: info.dtype,
      offset: Number(info.offset),
      values: decode(buffer, start, count, info.dtype),
    };
  });
  process.stdout.write(JSON.stringify({
    version: plain(parsed.metadata.version),
    tensor_count: plain(parsed.metadata.tensor_count),
    kv_count: plain(parsed.metadata.kv_count),
    tensor_data_offset: dataOffset,
    metadata,
    tensors,
  }) + '\n');
}

main().catch((err) => {
  process.stderr.write(`gguf_reference.js: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
